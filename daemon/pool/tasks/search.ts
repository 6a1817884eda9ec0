import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import ignore from "ignore";
import type { SearchFilesValue, SearchMatch, TaskOf } from "../messages.js";
import { ToolFailure } from "../../../shared/errors.js";
import { fsFail } from "./fail.js";
import { looksBinary } from "./files.js";
import { walk } from "./walk.js";

const SEARCH_LIMITS = Object.freeze({ maxFileBytes: 2 * 1024 * 1024, maxFiles: 50_000, maxDepth: 64, maxLineChars: 300 });

function compile(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (error) {
    throw new ToolFailure("bad_pattern", `invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
}

function clip(line: string): string {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  return text.length > SEARCH_LIMITS.maxLineChars ? `${text.slice(0, SEARCH_LIMITS.maxLineChars)}…` : text;
}

async function searchOne(abs: string, rel: string, regex: RegExp, room: number, out: SearchMatch[]): Promise<boolean> {
  const info = await stat(abs).catch(() => null);
  if (!info || info.size > SEARCH_LIMITS.maxFileBytes) return false;
  const buf = await readFile(abs).catch(() => null);
  if (!buf || looksBinary(buf)) return false;
  const lines = buf.toString("utf8").split("\n");
  for (let i = 0; i < lines.length && room > 0; i++) {
    if (regex.test(lines[i]!)) {
      out.push({ path: rel, line: i + 1, text: clip(lines[i]!) });
      room--;
    }
  }
  return true;
}

/** Regex search, line by line, over a file or a tree (honouring .gitignore). */
export async function searchFiles(task: TaskOf<"search_files">): Promise<SearchFilesValue> {
  const regex = compile(task.pattern);
  const info = await stat(task.path).catch((error) => {
    throw fsFail(error, task.path);
  });
  const matches: SearchMatch[] = [];
  let searched = 0;
  if (!info.isDirectory()) {
    if (await searchOne(task.path, basename(task.path), regex, task.maxResults + 1, matches)) searched++;
  } else {
    // A glob is a gitignore-style pattern: `*.ts` matches at any depth, `src/**/*.ts` from the root.
    const globs = task.glob
      ? ignore().add(
          task.glob
            .split(",")
            .map((g) => g.trim())
            .filter(Boolean),
        )
      : null;
    for await (const entry of walk(task.path, { maxDepth: SEARCH_LIMITS.maxDepth })) {
      if (entry.dir) continue;
      if (globs && !globs.ignores(entry.rel)) continue;
      if (matches.length > task.maxResults || searched >= SEARCH_LIMITS.maxFiles) break;
      if (await searchOne(entry.abs, entry.rel, regex, task.maxResults + 1 - matches.length, matches)) searched++;
    }
  }
  // One match past the limit was collected only to know whether there are more.
  const truncated = matches.length > task.maxResults || searched >= SEARCH_LIMITS.maxFiles;
  return { path: task.path, matches: matches.slice(0, task.maxResults), files_searched: searched, truncated };
}

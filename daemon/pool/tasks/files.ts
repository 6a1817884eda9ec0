import { mkdir, readFile as fsReadFile, stat, writeFile as fsWriteFile } from "node:fs/promises";
import { dirname, extname } from "node:path";
import type { ListFilesValue, ReadFileValue, TaskOf, WriteValue } from "../messages.js";
import { ToolFailure } from "../../../shared/errors.js";
import { fsFail } from "./fail.js";
import { lint } from "./lint.js";
import { walk } from "./walk.js";

export const READ_LIMITS = Object.freeze({
  maxTextBytes: 10 * 1024 * 1024,
  maxImageBytes: 5 * 1024 * 1024,
  maxOutputChars: 100_000,
  maxLineChars: 2_000,
  binarySniffBytes: 8_192,
});

const IMAGE_TYPES: Record<string, string> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp" };

/** The real image type from the file's magic bytes (extensions lie). */
function sniffImage(buf: Buffer): string | null {
  if (buf.length >= 8 && buf.readUInt32BE(0) === 0x89504e47) return "image/png";
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return "image/jpeg";
  if (buf.length >= 6 && buf.toString("latin1", 0, 4) === "GIF8") return "image/gif";
  if (buf.length >= 12 && buf.toString("latin1", 0, 4) === "RIFF" && buf.toString("latin1", 8, 12) === "WEBP") return "image/webp";
  return null;
}

export function looksBinary(buf: Buffer): boolean {
  return buf.subarray(0, READ_LIMITS.binarySniffBytes).includes(0);
}

/** Split into lines without inventing an empty last line for a trailing newline. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

async function statFile(path: string) {
  const info = await stat(path).catch((error) => {
    throw fsFail(error, path);
  });
  if (info.isDirectory()) throw fsFail(Object.assign(new Error("EISDIR"), { code: "EISDIR" }), path);
  return info;
}

export async function readFile(task: TaskOf<"read_file">): Promise<ReadFileValue> {
  const { path } = task;
  const info = await statFile(path);
  const declaredImage = IMAGE_TYPES[extname(path).toLowerCase()];
  if (declaredImage) {
    if (info.size > READ_LIMITS.maxImageBytes)
      throw new ToolFailure("too_large", `image ${path} is ${info.size} bytes; the limit is ${READ_LIMITS.maxImageBytes} bytes`);
    const buf = await fsReadFile(path).catch((error) => {
      throw fsFail(error, path);
    });
    const mime = sniffImage(buf);
    if (!mime) throw new ToolFailure("invalid_image", `${path} has an image extension but is not a PNG, JPEG, GIF or WebP image`);
    return { type: "image", path, mime, base64: buf.toString("base64"), bytes: buf.length };
  }
  if (info.size > READ_LIMITS.maxTextBytes) {
    throw new ToolFailure(
      "too_large",
      `${path} is ${info.size} bytes, over the ${READ_LIMITS.maxTextBytes}-byte read limit; use search_files or a terminal command (head, sed -n) to look at parts of it`,
    );
  }
  const buf = await fsReadFile(path).catch((error) => {
    throw fsFail(error, path);
  });
  if (looksBinary(buf)) throw new ToolFailure("binary", `${path} is a binary file (${buf.length} bytes); it is not shown`);
  const lines = splitLines(buf.toString("utf8"));
  const total = lines.length;
  if (total > 0 && task.offset > total) throw new ToolFailure("bad_offset", `offset ${task.offset} is past the end of ${path}, which has ${total} lines`);
  const out: string[] = [];
  let chars = 0;
  let line = task.offset;
  const last = Math.min(total, task.offset + task.limit - 1);
  for (; line <= last; line++) {
    let text = lines[line - 1]!;
    if (text.length > READ_LIMITS.maxLineChars) text = `${text.slice(0, READ_LIMITS.maxLineChars)}… [line cut at ${READ_LIMITS.maxLineChars} characters]`;
    const numbered = `${String(line).padStart(6)}\t${text}`;
    if (out.length > 0 && chars + numbered.length + 1 > READ_LIMITS.maxOutputChars) break;
    out.push(numbered);
    chars += numbered.length + 1;
  }
  const end = total === 0 ? 0 : line - 1;
  const value: ReadFileValue = {
    type: "text",
    path,
    content: out.join("\n"),
    start_line: total === 0 ? 0 : task.offset,
    end_line: end,
    total_lines: total,
    truncated: end < total,
  };
  if (end < total) value.next_offset = end + 1;
  return value;
}

export async function writeFile(task: TaskOf<"write_file">): Promise<WriteValue> {
  try {
    await mkdir(dirname(task.path), { recursive: true });
    await fsWriteFile(task.path, task.content, "utf8");
  } catch (error) {
    throw fsFail(error, task.path);
  }
  return { path: task.path, bytes_written: Buffer.byteLength(task.content, "utf8"), lint: await lint(task.path, task.content) };
}

function occurrences(haystack: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** Where the search text would match if leading/trailing whitespace on each line were ignored. */
function looseMatchLine(content: string, search: string): number | null {
  const want = splitLines(search).map((l) => l.trim());
  if (want.length === 0 || want.every((l) => l === "")) return null;
  const have = content.split(/\r?\n/).map((l) => l.trim());
  for (let i = 0; i + want.length <= have.length; i++) {
    if (want.every((w, j) => have[i + j] === w)) return i + 1;
  }
  return null;
}

export async function patchFile(task: TaskOf<"patch">): Promise<WriteValue> {
  const { path } = task;
  await statFile(path);
  const content = await fsReadFile(path, "utf8").catch((error) => {
    throw fsFail(error, path);
  });
  let { search, replace } = task;
  let found = occurrences(content, search);
  // Models write \n; a CRLF file would otherwise never match.
  if (found.length === 0 && content.includes("\r\n") && search.includes("\n") && !search.includes("\r")) {
    const crlf = search.replace(/\n/g, "\r\n");
    const retry = occurrences(content, crlf);
    if (retry.length > 0) {
      search = crlf;
      replace = replace.replace(/\r?\n/g, "\r\n");
      found = retry;
    }
  }
  if (found.length === 0) {
    const near = looseMatchLine(content, search);
    const hint = near
      ? ` Text matching except for indentation or trailing whitespace starts at line ${near}; copy it exactly.`
      : " Read the file again and copy the text exactly, including whitespace and indentation.";
    throw new ToolFailure("search_not_found", `patch failed: the search text was not found in ${path}; the file is unchanged.${hint}`);
  }
  if (found.length > 1) {
    const lines = found.slice(0, 10).map((i) => lineOf(content, i));
    throw new ToolFailure(
      "search_ambiguous",
      `patch failed: the search text appears ${found.length} times in ${path} (at lines ${lines.join(", ")}${found.length > 10 ? ", …" : ""}); include more surrounding lines so it matches exactly once. The file is unchanged.`,
    );
  }
  const at = found[0]!;
  // Concatenate rather than String.replace, which would expand `$&` and friends in `replace`.
  const next = content.slice(0, at) + replace + content.slice(at + search.length);
  try {
    await fsWriteFile(path, next, "utf8");
  } catch (error) {
    throw fsFail(error, path);
  }
  return { path, bytes_written: Buffer.byteLength(next, "utf8"), lint: await lint(path, next) };
}

export async function listFiles(task: TaskOf<"list_files">): Promise<ListFilesValue> {
  const info = await stat(task.path).catch((error) => {
    throw fsFail(error, task.path);
  });
  if (!info.isDirectory()) throw new ToolFailure("not_a_directory", `${task.path} is a file, not a directory (use read_file to read it)`);
  const entries: string[] = [];
  let truncated = false;
  for await (const entry of walk(task.path, { maxDepth: task.depth })) {
    if (entries.length >= task.maxEntries) {
      truncated = true;
      break;
    }
    entries.push(entry.dir ? `${entry.rel}/` : entry.rel);
  }
  return { path: task.path, entries, truncated };
}

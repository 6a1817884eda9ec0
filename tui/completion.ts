import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { SLASH_COMMANDS } from "../shared/slash-commands.js";

export interface Completion {
  /** The new input text. */
  text: string;
  /** Every candidate, when there is more than one. */
  candidates: string[];
}

/**
 * Tab completion of the chat input: slash commands (the runtime's table plus the profile's
 * skills and bundles) while the line is a bare `/word`, else file paths for the last word.
 */
export function complete(text: string, extraSlash: string[], cwd = process.cwd()): Completion | null {
  if (/^\/\S*$/.test(text)) {
    const names = [...SLASH_COMMANDS.flatMap((c) => [c.name, ...c.aliases]), ...extraSlash].map((n) => `/${n}`);
    const hits = [...new Set(names.filter((n) => n.startsWith(text.toLowerCase())))].sort();
    return finish(text, "", text, hits, " ");
  }
  const m = /(^|\s)(\S*)$/.exec(text);
  const word = m?.[2] ?? "";
  const pathLike = /^\/image\s/.test(text) || /[/~.]/.test(word);
  if (!pathLike) return null;
  const expanded = word.startsWith("~/") ? join(homedir(), word.slice(2)) : word;
  const dirPart = expanded.endsWith("/") ? expanded : dirname(expanded) === "." && !expanded.startsWith("./") ? "" : `${dirname(expanded)}/`;
  const base = expanded.slice(dirPart.length);
  let entries: string[];
  try {
    entries = readdirSync(resolve(cwd, dirPart || "."), { withFileTypes: true })
      .filter((e) => e.name.startsWith(base) && (base.startsWith(".") || !e.name.startsWith(".")))
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .sort();
  } catch {
    return null;
  }
  const shownDir = word.startsWith("~/") ? `~/${dirPart.slice(homedir().length + 1)}` : dirPart;
  const head = text.slice(0, text.length - word.length);
  return finish(text, head + shownDir, base, entries, "");
}

function finish(text: string, head: string, typed: string, hits: string[], space: string): Completion | null {
  if (!hits.length) return null;
  if (hits.length === 1) {
    const one = hits[0]!;
    return { text: head + one + (one.endsWith("/") ? "" : space), candidates: [] };
  }
  let prefix = hits[0]!;
  for (const h of hits) while (!h.startsWith(prefix)) prefix = prefix.slice(0, -1);
  const next = prefix.length > typed.length ? head + prefix : text;
  return { text: next, candidates: hits };
}

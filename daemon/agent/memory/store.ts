import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { AgentError, ToolFailure } from "../../../shared/errors.js";
import { writeFileAtomic } from "../../store/atomic-file.js";

/**
 * A profile's memory: two stores in `<profile>/memories/`, `MEMORY.md` (the agent's own notes)
 * and `USER.md` (facts about the user), each a list of entries separated by a line holding
 * only `§`. Each store has a size limit in characters (the entries joined as stored); an
 * add or replace that would pass it is refused, so the system prompt stays bounded.
 */
export const STORES = ["memory", "user"] as const;
export type StoreName = (typeof STORES)[number];

const FILES: Record<StoreName, string> = { memory: "MEMORY.md", user: "USER.md" };
export const SEPARATOR = "\n§\n";

export interface StoreState {
  name: StoreName;
  file: string;
  entries: string[];
  chars: number;
  limit: number;
}

export function storeFile(dir: string, name: StoreName): string {
  return join(dir, FILES[name]);
}

export const charsOf = (entries: string[]): number => entries.join(SEPARATOR).length;

export async function readStore(dir: string, name: StoreName, limit: number): Promise<StoreState> {
  const file = storeFile(dir, name);
  const text = await readFile(file, "utf8").catch(() => "");
  const entries = text
    .split(/\r?\n§\r?\n/)
    .map((e) => e.trim())
    .filter(Boolean);
  return { name, file, entries, chars: charsOf(entries), limit };
}

export type MemoryEdit =
  | { action: "add"; content: string }
  | { action: "replace"; old_text: string; new_text: string }
  | { action: "remove"; old_text: string };

/** The store after an edit, or a ToolFailure the model reads (nothing is written then). */
export function applyEdit(state: StoreState, edit: MemoryEdit): { entries: string[]; note?: string } {
  const clean = (text: string, field: string): string => {
    const t = text.trim();
    if (!t) throw new ToolFailure("invalid_arguments", `${field} is empty`);
    if (/(^|\n)§(\n|$)/.test(t)) throw new ToolFailure("invalid_arguments", `${field} may not contain a line holding only "§" (it separates entries)`);
    return t;
  };
  const entries = [...state.entries];
  if (edit.action === "add") {
    const content = clean(edit.content, "content");
    if (entries.includes(content)) return { entries: state.entries, note: "this entry is already stored; nothing changed" };
    entries.push(content);
  } else {
    const old = edit.old_text.trim();
    if (!old) throw new ToolFailure("invalid_arguments", "old_text is empty: give a unique part of the entry to change");
    const hits = entries.flatMap((e, i) => (e.includes(old) ? [i] : []));
    if (!hits.length) throw new ToolFailure("not_found", `no entry of the ${state.name} store contains ${JSON.stringify(old)}`);
    if (hits.length > 1)
      throw new ToolFailure(
        "ambiguous",
        `${hits.length} entries of the ${state.name} store contain ${JSON.stringify(old)}; give a longer, unique part of the one to change`,
      );
    if (edit.action === "remove") entries.splice(hits[0]!, 1);
    else entries[hits[0]!] = clean(edit.new_text, "new_text");
  }
  const chars = charsOf(entries);
  if (chars > state.limit && chars > state.chars) {
    throw new ToolFailure(
      "memory_full",
      `the ${state.name} store would hold ${chars} characters, over its limit of ${state.limit} (now ${state.chars}); nothing was saved. Remove or shorten entries first (replace with a shorter text, or remove), or save less.`,
    );
  }
  return { entries };
}

export async function writeStore(dir: string, name: StoreName, entries: string[]): Promise<void> {
  await mkdir(dir, { recursive: true }).catch((error) => {
    throw new AgentError("memory.write_failed", `cannot create ${dir}: ${(error as Error).message}`);
  });
  await writeFileAtomic(storeFile(dir, name), entries.length ? `${entries.join(SEPARATOR)}\n` : "");
}

import { readFile } from "node:fs/promises";
import MiniSearch from "minisearch";
import { stemmer } from "stemmer";
import { writeFileAtomicChunks } from "../../store/atomic-file.js";

/**
 * What the search index is made of, shared by the daemon (search-index.ts) and the fold worker
 * (fold-worker.ts): the MiniSearch options, the snapshot file and the journal's lines, applied
 * the same way in both, so the worker's rebuilt snapshot is the daemon's index.
 */

/** Bump when the tokenizer or the stored layout changes: an older snapshot is rebuilt. */
export const FORMAT = 1;

/** A journal line: messages of a session (`[position, text]`, then its indexed count) or its removal. */
export type Line = { s: string; t: Array<[number, string]>; n: number } | { d: string };

export interface IndexState {
  mini: MiniSearch<{ id: string; text: string }>;
  /** Messages of each session the index holds (positions below it). */
  counts: Map<string, number>;
}

interface Snapshot {
  format: number;
  counts: Record<string, number>;
  index: ReturnType<MiniSearch["toJSON"]>;
}

/** Words too common to tell messages apart: left out of the index and of queries. */
const STOP_WORDS = new Set("a an and are as at be by for from in is it of on or that the this to was were with".split(" "));

/** The index's normal form of a word (lower case, stemmed), or null for a stop word. */
export function stem(word: string): string | null {
  const lower = word.toLowerCase();
  return STOP_WORDS.has(lower) ? null : stemmer(lower);
}

export const OPTIONS = {
  fields: ["text"],
  processTerm: (term: string) => stem(term) ?? false,
};

export function emptyState(): IndexState {
  return { mini: new MiniSearch(OPTIONS), counts: new Map() };
}

export function applyLine(state: IndexState, line: Line): void {
  if ("d" in line) {
    const n = state.counts.get(line.d) ?? 0;
    for (let i = 0; i < n; i++) {
      const id = `${line.d}#${i}`;
      if (state.mini.has(id)) state.mini.discard(id);
    }
    state.counts.delete(line.d);
    return;
  }
  const have = state.counts.get(line.s) ?? 0;
  for (const [i, text] of line.t) if (i >= have && !state.mini.has(`${line.s}#${i}`)) state.mini.add({ id: `${line.s}#${i}`, text });
  state.counts.set(line.s, Math.max(have, line.n));
}

/** The snapshot's state, or null when there is none or it is of another format. */
export async function readSnapshot(file: string): Promise<IndexState | null> {
  const text = await readFile(file, "utf8").catch((error) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  });
  if (!text) return null;
  const snapshot = JSON.parse(text) as Snapshot;
  if (snapshot.format !== FORMAT) return null;
  return { mini: await MiniSearch.loadJSAsync(snapshot.index, OPTIONS), counts: new Map(Object.entries(snapshot.counts)) };
}

export async function writeSnapshot(file: string, state: IndexState): Promise<void> {
  await writeFileAtomicChunks(file, snapshotChunks({ format: FORMAT, counts: Object.fromEntries(state.counts), index: state.mini.toJSON() }));
}

/** The snapshot as a few strings: the index's maps are serialized one after the other. */
function* snapshotChunks(s: Snapshot): Generator<string> {
  const { index, ...meta } = s;
  const head = JSON.stringify(meta);
  yield `${head.slice(0, -1)},"index":{`;
  let first = true;
  for (const [key, value] of Object.entries(index)) {
    yield `${first ? "" : ","}${JSON.stringify(key)}:${JSON.stringify(value)}`;
    first = false;
  }
  yield "}}";
}

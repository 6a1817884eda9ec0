import { readFile } from "node:fs/promises";
import { Index } from "flexsearch";
import { stemmer } from "stemmer";
import { writeFileAtomicChunks } from "../../store/atomic-file.js";

/**
 * What the search index is made of, shared by the daemon (search-index.ts) and the fold thread
 * (fold-thread.ts): two FlexSearch indexes (chat sessions; cron and kanban runs), the table from
 * their numeric ids to (session, message position), the indexed terms (for prefix search), the
 * snapshot file and the journal's lines, applied the same way in both, so the thread's rebuilt
 * snapshot is the daemon's index.
 */

/** Bump when the tokenizer or the stored layout changes: an older snapshot is rebuilt. */
export const FORMAT = 3;

/**
 * A journal line: messages of a session, then its indexed count (`k` is set for a cron or
 * kanban run), or its removal. A message is `[position, its index terms, space-separated]` in
 * `w`, so a replay does not stem them again (stemming was half of a start-up's replay); lines
 * written before that hold `[position, text]` in `t`.
 */
export type Line = { s: string; k?: 1; t?: Array<[number, string]>; w?: Array<[number, string]>; n: number } | { d: string };

/** Messages a journal line adds. */
export const lineDocs = (line: Line): number => ("s" in line ? (line.w?.length ?? 0) + (line.t?.length ?? 0) : 0);

/** Which of the two indexes: chat sessions, or cron and kanban runs (ranked below chat). */
export type Part = "chat" | "other";

export interface IndexState {
  chat: Index;
  other: Index;
  /** The next document id (ids are never reused within one state). */
  next: number;
  /** Document id to [session, position]. */
  docs: Map<number, [string, number]>;
  /** Each session's document ids (its removal). */
  ids: Map<string, number[]>;
  /** Messages of each session the index holds (positions below it). */
  counts: Map<string, number>;
  /** Every indexed term: sorted, plus those added since it was sorted. */
  terms: { sorted: string[]; recent: Set<string> };
}

/** The words of a text as the index splits them: white space, Unicode spaces and punctuation. */
export const WORD_SPLIT = /[\s\p{Z}\p{P}]+/u;

/** Words too common to tell messages apart: left out of the index and of queries. */
const STOP_WORDS = new Set("a an and are as at be by for from in is it of on or that the this to was were with".split(" "));

/** Words stemmed lately (most words of a text are common ones): at most STEMS_MAX, then cleared. */
const stems = new Map<string, string>();
const STEMS_MAX = 50_000;

/** The index's normal form of a word (lower case, stemmed), or null for a stop word. */
export function stem(word: string): string | null {
  const lower = word.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  let s = stems.get(lower);
  if (s === undefined) {
    if (stems.size >= STEMS_MAX) stems.clear();
    s = stemmer(lower);
    stems.set(lower, s);
  }
  return s;
}

/** A text's index terms (stemmed), space-separated: the form handed to FlexSearch. */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const word of text.split(WORD_SPLIT)) {
    const s = word ? stem(word) : null;
    if (s) out.push(s);
  }
  return out;
}

/**
 * Terms are made here (stemmed), and a query is made of index terms too, so FlexSearch only
 * splits on spaces: its own encoder would stem the query's terms a second time. `strict` stores
 * whole terms only (prefix search widens the last query word over `terms` instead).
 */
const newIndex = () => new Index({ tokenize: "strict", resolution: 9, encode: (text: string) => text.split(" ").filter(Boolean) });

export function emptyState(): IndexState {
  return { chat: newIndex(), other: newIndex(), next: 0, docs: new Map(), ids: new Map(), counts: new Map(), terms: { sorted: [], recent: new Set() } };
}

function addTerm(state: IndexState, term: string): void {
  const { sorted, recent } = state.terms;
  if (recent.has(term)) return;
  const i = lowerBound(sorted, term);
  if (sorted[i] === term) return;
  recent.add(term);
  // Merged into the sorted list now and then, so a query scans a short unsorted rest.
  if (recent.size >= 2000) sortTerms(state);
}

function sortTerms(state: IndexState): void {
  const { sorted, recent } = state.terms;
  if (!recent.size) return;
  // The few recent terms sorted, then merged into the sorted list in one pass (sorting the
  // whole list again each time made a replay of many new terms quadratic).
  const add = [...recent].sort();
  const out: string[] = new Array(sorted.length + add.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < sorted.length && j < add.length) out[k++] = sorted[i]! < add[j]! ? sorted[i++]! : add[j++]!;
  while (i < sorted.length) out[k++] = sorted[i++]!;
  while (j < add.length) out[k++] = add[j++]!;
  state.terms = { sorted: out, recent: new Set() };
}

/** The first index in `sorted` whose term is not below `term`. */
function lowerBound(sorted: string[], term: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < term) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Up to `max` indexed terms that start with `prefix`, shortest first. */
export function termsStartingWith(state: IndexState, prefix: string, max: number): string[] {
  const { sorted, recent } = state.terms;
  const out: string[] = [];
  for (let i = lowerBound(sorted, prefix); i < sorted.length && out.length < 4 * max && sorted[i]!.startsWith(prefix); i++) out.push(sorted[i]!);
  for (const t of recent) if (t.startsWith(prefix)) out.push(t);
  return out.sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).slice(0, max);
}

/**
 * A message whose id, table entry and terms are in the state but which is not in FlexSearch yet
 * (the journal's messages at a start: added in the background, or first by a query that needs
 * them, search-index.ts).
 */
export interface PendingDoc {
  id: number;
  part: Part;
  terms: string[];
  added: boolean;
}

/** Add a pending message to FlexSearch. */
export function addPending(state: IndexState, doc: PendingDoc): void {
  if (doc.added) return;
  doc.added = true;
  state[doc.part].add(doc.id, doc.terms.join(" "));
}

/**
 * Put a term's ids back in id order in both parts (each resolution's list), where messages were
 * added out of order: in order, ids only grow, and a query's result order follows them.
 */
export function sortTerm(state: IndexState, term: string): void {
  for (const part of ["chat", "other"] as const) {
    const slots = (state[part] as unknown as { map: Map<string, Array<number[] | undefined>> }).map.get(term);
    if (!slots) continue;
    for (const ids of slots) {
      if (!ids) continue;
      for (let i = 1; i < ids.length; i++)
        if (ids[i - 1]! > ids[i]!) {
          ids.sort((a, b) => a - b);
          break;
        }
    }
  }
}

/**
 * Applies a journal line (with `pending`: its messages are registered and listed there, not
 * added to FlexSearch). A removed session's documents leave the id table, so they never come
 * back as hits; FlexSearch's own remove scans its whole map for each document (0.1 s each at
 * 100,000 messages), so the fold thread collects their ids in `purged` instead and the snapshot
 * is written without them (writeSnapshot), in one pass.
 */
export function applyLine(state: IndexState, line: Line, purged?: Set<number>, pending?: PendingDoc[]): void {
  if ("d" in line) {
    for (const id of state.ids.get(line.d) ?? []) {
      state.docs.delete(id);
      purged?.add(id);
    }
    state.ids.delete(line.d);
    state.counts.delete(line.d);
    return;
  }
  const have = state.counts.get(line.s) ?? 0;
  const index = line.k ? state.other : state.chat;
  let ids = state.ids.get(line.s);
  const messages: Array<[number, string, boolean]> = [];
  for (const [i, text] of line.t ?? []) messages.push([i, text, false]);
  for (const [i, terms] of line.w ?? []) messages.push([i, terms, true]);
  for (const [i, text, stemmed] of messages) {
    if (i < have) continue;
    const terms = stemmed ? text.split(" ").filter(Boolean) : termsOf(text);
    if (!terms.length) continue;
    const id = state.next++;
    if (pending) pending.push({ id, part: line.k ? "other" : "chat", terms, added: false });
    else index.add(id, terms.join(" "));
    for (const t of terms) addTerm(state, t);
    state.docs.set(id, [line.s, i]);
    if (!ids) state.ids.set(line.s, (ids = []));
    ids.push(id);
  }
  state.counts.set(line.s, Math.max(have, line.n));
}

/**
 * The snapshot file: a first line of JSON (format, next id, counts, the id table per session as
 * flat [id, position, ...], the terms), then one line per part FlexSearch exports:
 * `<chat|other>\t<key>\t<data>` (its data is JSON, so it holds no newline).
 */
interface Head {
  format: number;
  next: number;
  counts: Record<string, number>;
  table: Record<string, number[]>;
  terms: string[];
}

/** The snapshot's state, or null when there is none or it is of another format (an older version's is rebuilt by the catch-up after start). */
export async function readSnapshot(file: string): Promise<IndexState | null> {
  const loader = await openSnapshot(file);
  if (!loader) return null;
  // One chunk at a time, so the event loop runs while the index loads.
  while (loader.importNext()) await new Promise((resolve) => setImmediate(resolve));
  return loader.state;
}

/** The map lines of one part not imported yet: sorted by their first term, each covering the terms up to the next one's. */
interface MapLines {
  first: string[];
  lines: Array<string | null>;
}

/**
 * A snapshot being loaded: its head and its small parts (the id registers) are in `state` at
 * once; its map lines (each a sorted run of terms with their ids, the bulk of it) are imported
 * one at a time by `importNext`, or on demand by `ensure` for the terms a query needs. A map
 * line merges into what the index already holds for its terms (the snapshot's ids first), so
 * the journal's messages can be applied before the snapshot's map lines are all in, and a query
 * whose terms' lines are in answers as it will once everything is.
 */
export class SnapshotLoader {
  private readonly pending: Record<Part, MapLines> = { chat: { first: [], lines: [] }, other: { first: [], lines: [] } };
  private order: Array<[Part, number]> = [];
  private next = 0;

  constructor(readonly state: IndexState) {}

  add(part: Part, key: string, data: string): void {
    if (!key.endsWith(".map")) {
      this.state[part].import(key, data);
      return;
    }
    const m = MAP_FIRST_TERM.exec(data);
    if (!m) {
      if (data !== "[]") throw new Error("the search index snapshot has a malformed map line");
      return;
    }
    const lines = this.pending[part];
    const first = JSON.parse(`"${m[1]}"`) as string;
    if (lines.first.length && lines.first[lines.first.length - 1]! >= first) throw new Error("the search index snapshot's map lines are not in order");
    lines.first.push(first);
    lines.lines.push(data);
    this.order.push([part, lines.lines.length - 1]);
  }

  /** Import one more map line; false once none is left. */
  importNext(): boolean {
    while (this.next < this.order.length) {
      const [part, i] = this.order[this.next++]!;
      if (this.importLine(part, i)) return true;
    }
    return false;
  }

  get done(): boolean {
    return this.next >= this.order.length;
  }

  /** Import the map line that holds `term` in each part, if it is not in yet. */
  ensure(term: string): void {
    for (const part of ["chat", "other"] as const) {
      const { first } = this.pending[part];
      // The last line whose first term is not above `term`.
      let lo = 0;
      let hi = first.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (first[mid]! <= term) lo = mid + 1;
        else hi = mid;
      }
      if (lo > 0) this.importLine(part, lo - 1);
    }
  }

  private importLine(part: Part, i: number): boolean {
    const lines = this.pending[part].lines;
    const data = lines[i];
    if (data == null) return false;
    lines[i] = null;
    mergeMap(this.state[part], JSON.parse(data) as Array<[string, Array<number[] | null>]>);
    return true;
  }
}

/** A map line's first term: `[["<term>",`. */
const MAP_FIRST_TERM = /^\[\["((?:[^"\\]|\\.)*)",/;

/**
 * Merge a map line into FlexSearch 0.8's map (term -> ids at each resolution, see its
 * `import`): ids the index already holds for a term (added since the snapshot, from the
 * journal) stay after the snapshot's, where applying the journal to the whole snapshot would
 * have put them.
 */
function mergeMap(index: Index, entries: Array<[string, Array<number[] | null>]>): void {
  const map = (index as unknown as { map: Map<string, Array<number[] | undefined>> }).map;
  for (const [term, slots] of entries) {
    const have = map.get(term);
    if (!have) {
      map.set(term, slots as Array<number[] | undefined>);
      continue;
    }
    for (let r = 0; r < slots.length; r++) {
      const ids = slots[r];
      if (!ids?.length) continue;
      const later = have[r];
      have[r] = later?.length ? ids.concat(later) : ids;
    }
  }
}

/**
 * Open the snapshot: its head and id registers read, its map lines left to the loader. Null when
 * there is none or it is of another format.
 */
export async function openSnapshot(file: string): Promise<SnapshotLoader | null> {
  const text = await readFile(file, "utf8").catch((error) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  });
  if (!text) return null;
  let end = text.indexOf("\n");
  if (end < 0) end = text.length;
  const head = JSON.parse(text.slice(0, end)) as Head;
  if (head.format !== FORMAT) return null;
  const state = emptyState();
  state.next = head.next;
  state.counts = new Map(Object.entries(head.counts));
  for (const [session, flat] of Object.entries(head.table)) {
    const ids: number[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      ids.push(flat[i]!);
      state.docs.set(flat[i]!, [session, flat[i + 1]!]);
    }
    state.ids.set(session, ids);
  }
  state.terms.sorted = head.terms;
  const loader = new SnapshotLoader(state);
  for (let at = end + 1; at < text.length; ) {
    let nl = text.indexOf("\n", at);
    if (nl < 0) nl = text.length;
    const a = text.indexOf("\t", at);
    const b = a < 0 ? -1 : text.indexOf("\t", a + 1);
    if (a < 0 || b < 0 || b > nl) {
      if (nl > at) throw new Error("the search index snapshot has a malformed line");
      at = nl + 1;
      continue;
    }
    const part = text.slice(at, a) as Part;
    if (part !== "chat" && part !== "other") throw new Error("the search index snapshot names an unknown index");
    loader.add(part, text.slice(a + 1, b), text.slice(b + 1, nl));
    at = nl + 1;
  }
  return loader;
}

/** Writes the snapshot; the documents in `purged` are left out of FlexSearch's parts. */
export async function writeSnapshot(file: string, state: IndexState, purged?: Set<number>): Promise<void> {
  sortTerms(state);
  const table: Record<string, number[]> = {};
  for (const [session, ids] of state.ids) {
    const flat: number[] = [];
    for (const id of ids) {
      const doc = state.docs.get(id);
      if (doc) flat.push(id, doc[1]);
    }
    table[session] = flat;
  }
  // After a removal the term list is made again from the terms left, so a deleted session's
  // words leave it too.
  const kept = purged?.size ? new Set<string>() : undefined;
  const parts: string[] = [];
  for (const part of ["chat", "other"] as const) {
    // The map's entries of every export chunk, sorted by term, then cut into lines: a line then
    // covers the terms from its first to the next line's (a query during a load reads only its
    // terms' lines, SnapshotLoader).
    const entries: MapEntry[] = [];
    await state[part].export((key: string, data: string) => {
      if (typeof data !== "string") return;
      if (key.endsWith(".map")) for (const e of mapEntries(data, purged, kept)) entries.push(e);
      else parts.push(`${part}\t${key}\t${rewrite(key, data, purged)}\n`);
    });
    entries.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    for (let i = 0; i < entries.length; i += MAP_CHUNK) parts.push(`${part}\t1.map\t${JSON.stringify(entries.slice(i, i + MAP_CHUNK))}\n`);
  }
  const terms = kept ? [...kept].sort() : state.terms.sorted;
  const head: Head = { format: FORMAT, next: state.next, counts: Object.fromEntries(state.counts), table, terms };
  parts.unshift(`${JSON.stringify(head)}\n`);
  await writeFileAtomicChunks(file, parts);
}

/** Terms in one line of a map: importing a line then takes a few milliseconds. */
const MAP_CHUNK = 2000;

type MapEntry = [string, Array<number[] | null>];

/** An export part other than a map, without the documents in `purged` (`reg` is the list of ids). */
function rewrite(key: string, data: string, purged: Set<number> | undefined): string {
  if (key.endsWith(".reg") && purged?.size) return JSON.stringify((JSON.parse(data) as number[]).filter((id) => !purged.has(id)));
  return data;
}

/**
 * A map export part's entries (`[[term, [ids at each resolution, or null]], ...]`, FlexSearch
 * 0.8's export layout) without the documents in `purged`; the terms left are added to `kept`.
 */
function mapEntries(data: string, purged: Set<number> | undefined, kept: Set<string> | undefined): MapEntry[] {
  let entries = JSON.parse(data) as MapEntry[];
  if (purged?.size) {
    const out: MapEntry[] = [];
    for (const [term, slots] of entries) {
      let any = false;
      const left = slots.map((slot) => {
        const rest = slot?.filter((id) => !purged.has(id));
        if (!rest?.length) return null;
        any = true;
        return rest;
      });
      if (any) out.push([term, left]);
    }
    entries = out;
  }
  if (kept) for (const [term] of entries) kept.add(term);
  return entries;
}

import { closeSync, openSync, readSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Index } from "flexsearch";
import { writeFileAtomicChunks } from "../../store/atomic-file.js";

/**
 * What the search index is made of, shared by the daemon (search-index.ts) and the fold thread
 * (fold-thread.ts): two FlexSearch indexes (chat sessions; cron and kanban runs), the table from
 * their numeric ids to (session, message position), the indexed terms (for prefix search), the
 * snapshot file and the journal's lines, applied the same way in both, so the thread's rebuilt
 * snapshot is the daemon's index.
 */

/** Bump when the tokenizer or the stored layout changes: an older snapshot is rebuilt. */
export const FORMAT = 4;

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

/**
 * The table from a document id to its session and message position: two typed arrays indexed by
 * id (ids are dense, from 0), so a start-up fills 200,000 entries with two array writes each,
 * not 200,000 Map entries holding a tuple each (issue 31: the first search waits for the table).
 */
export class DocTable {
  private session: Int32Array;
  private position: Int32Array;
  private readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  private count = 0;

  constructor(capacity = 1024) {
    this.session = new Int32Array(Math.max(1, capacity)).fill(-1);
    this.position = new Int32Array(Math.max(1, capacity));
  }

  get size(): number {
    return this.count;
  }

  get(id: number): [string, number] | undefined {
    const s = id >= 0 && id < this.session.length ? this.session[id]! : -1;
    return s < 0 ? undefined : [this.names[s]!, this.position[id]!];
  }

  set(id: number, session: string, position: number): void {
    if (id >= this.session.length) this.grow(id + 1);
    let s = this.nameIndex.get(session);
    if (s === undefined) {
      s = this.names.push(session) - 1;
      this.nameIndex.set(session, s);
    }
    if (this.session[id]! < 0) this.count++;
    this.session[id] = s;
    this.position[id] = position;
  }

  /** A session's entries from the snapshot's table (flat [id, position, ...]); its ids. */
  setSession(session: string, flat: number[]): number[] {
    let s = this.nameIndex.get(session);
    if (s === undefined) {
      s = this.names.push(session) - 1;
      this.nameIndex.set(session, s);
    }
    const ids: number[] = new Array(flat.length >> 1);
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const id = flat[i]!;
      if (id >= this.session.length) this.grow(id + 1);
      if (this.session[id]! < 0) this.count++;
      this.session[id] = s;
      this.position[id] = flat[i + 1]!;
      ids[i >> 1] = id;
    }
    return ids;
  }

  delete(id: number): void {
    if (id < 0 || id >= this.session.length || this.session[id]! < 0) return;
    this.session[id] = -1;
    this.count--;
  }

  private grow(min: number): void {
    const size = Math.max(min, this.session.length * 2);
    const session = new Int32Array(size).fill(-1);
    session.set(this.session);
    const position = new Int32Array(size);
    position.set(this.position);
    this.session = session;
    this.position = position;
  }
}

/**
 * FlexSearch and the stemmer, loaded on the index's first use (the first search or indexed
 * message, or the snapshot's load) rather than at every daemon start (~12 ms of its CPU).
 * Synchronously, through `require`, as their callers are: FlexSearch's CommonJS build (the same
 * bundle as its ES one, in the daemon and in the fold thread alike, so both write and read the
 * same snapshot) and the stemmer's ES module (`require` of an ES module: Node 20.19+).
 */
const requireLazy = createRequire(import.meta.url);
let flexsearch: typeof import("flexsearch") | undefined;
let stemmerFn: ((word: string) => string) | undefined;
const search = (): typeof import("flexsearch") => (flexsearch ??= requireLazy("flexsearch") as typeof import("flexsearch"));
const stemmer = (word: string): string => (stemmerFn ??= (requireLazy("stemmer") as typeof import("stemmer")).stemmer)(word);

export interface IndexState {
  chat: Index;
  other: Index;
  /** The next document id (ids are never reused within one state). */
  next: number;
  /** Document id to [session, position]. */
  docs: DocTable;
  /** Each session's document ids (its removal). */
  ids: Map<string, number[]>;
  /** Messages of each session the index holds (positions below it). */
  counts: Map<string, number>;
  /** Every indexed term: sorted, plus those added since it was sorted (and all in a set, once a term is added). */
  terms: { sorted: string[]; recent: Set<string>; known?: Set<string> };
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
const newIndex = () => new (search().Index)({ tokenize: "strict", resolution: 9, encode: (text: string) => text.split(" ").filter(Boolean) });

export function emptyState(): IndexState {
  return { chat: newIndex(), other: newIndex(), next: 0, docs: new DocTable(), ids: new Map(), counts: new Map(), terms: { sorted: [], recent: new Set() } };
}

function addTerm(state: IndexState, term: string): void {
  const { sorted, recent } = state.terms;
  if (recent.has(term)) return;
  // Every indexed term in a set, made on the first call: a journal's replay looks up each of
  // its messages' terms (hundreds of thousands), a hash lookup each instead of a binary search.
  state.terms.known ??= new Set(sorted);
  if (state.terms.known.has(term)) return;
  state.terms.known.add(term);
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
  state.terms = { sorted: out, recent: new Set(), known: state.terms.known };
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

/**
 * Up to `max` indexed terms that start with `prefix` (and of `more`, the load's pending
 * messages' terms), shortest first. Every term with the prefix is a candidate, wherever it is
 * (sorted, recent or pending), so the answer does not depend on how far a load got.
 */
export function termsStartingWith(state: IndexState, prefix: string, max: number, more?: Iterable<string>): string[] {
  const { sorted, recent } = state.terms;
  const out = new Set<string>();
  for (let i = lowerBound(sorted, prefix); i < sorted.length && sorted[i]!.startsWith(prefix); i++) out.add(sorted[i]!);
  for (const t of recent) if (t.startsWith(prefix)) out.add(t);
  if (more) for (const t of more) out.add(t);
  return [...out].sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).slice(0, max);
}

/** FlexSearch's own layout of an index (0.8): term -> ids at each resolution slot, and the register of ids. */
interface FlexInternals {
  map: Map<string, Array<number[] | undefined>>;
  reg: Set<number>;
  resolution: number;
}

/**
 * Add a message to one index the way FlexSearch's `add` does for our options (strict tokenize,
 * no context, our encoder handing back the terms as they are: each distinct term once, in the
 * resolution slot of its first position), without its per-call work (its encoder, a dictionary
 * object per message, the update check, which made adding a journal's 8,000 messages take over
 * a second of CPU at load), for every message: added in the daemon, replayed by the fold thread,
 * and the load's pending ones (PendingDocs). A term's ids stay in id order, which a query's
 * result order follows. The unit test compares the maps with FlexSearch's own `add`.
 */
export function addDoc(index: Index, id: number, terms: string[], skip?: Set<string>): void {
  const flex = index as unknown as FlexInternals;
  const { map, resolution } = flex;
  const n = terms.length;
  // A term counts once, at its first position: the earlier positions are looked through (a
  // set for long messages; a Set per message was half the cost of a short one).
  const seen = n > 32 ? new Set<string>() : null;
  for (let i = 0; i < n; i++) {
    const term = terms[i]!;
    if (!term) continue;
    if (seen) {
      if (seen.has(term)) continue;
      seen.add(term);
    } else if (terms.indexOf(term) < i) continue;
    if (skip?.has(term)) continue;
    pushId(map, term, slotOf(resolution, n, i), id);
  }
  flex.reg.add(id);
}

/** FlexSearch's get_score (src/index/add.js) without a term length: the resolution slot of the term at `i` of `n`. */
const slotOf = (resolution: number, n: number, i: number) => (i && resolution > 1 ? (n <= resolution ? i : (((resolution - 1) / n) * i + 1) | 0) : 0);

function pushId(map: FlexInternals["map"], term: string, slot: number, id: number): void {
  let slots = map.get(term);
  if (!slots) map.set(term, (slots = []));
  const ids = slots[slot];
  if (ids) ids.push(id);
  else slots[slot] = [id];
}

/**
 * The journal's messages at a start, registered (id table, counts) but with their terms not in
 * FlexSearch's map yet: a query puts in its own terms' ids first (`materialize`: one scan of the
 * messages' text for the term), the load the rest afterwards (`step`, a batch per event-loop
 * turn), so the first search's cost does not grow with the journal (issue 31: applying 10,000
 * messages' terms took most of a second at load). Each term's ids go in in id order either way:
 * the background's progress is `done`, a query's scan starts there, and a term a query has put
 * in is skipped by the background and pushed at once for a message added later.
 */
export class PendingDocs {
  private readonly docs: Array<{ id: number; part: Part; text: string }> = [];
  /** Messages before this one have all their terms in the map (and the term list). */
  private done = 0;
  /** Terms whose ids of every pending message are in the map. */
  private readonly materialized = new Set<string>();
  /** The texts of the messages from `blobFrom`, one per line, for scanning; and where each starts. */
  private blob = "";
  private blobStarts: number[] = [];
  private blobFrom = 0;
  private blobCount = 0;

  get size(): number {
    return this.docs.length - this.done;
  }

  /** A message of the journal (or added during the load), its terms space-separated. */
  add(state: IndexState, id: number, part: Part, text: string): void {
    // Its id joins FlexSearch's register with the rest of it (`step`); a query needs only the map.
    this.docs.push({ id, part, text });
    if (!this.materialized.size) return;
    const terms = text.split(" ");
    const flex = state[part] as unknown as FlexInternals;
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i]!;
      if (this.materialized.has(t) && terms.indexOf(t) === i) pushId(flex.map, t, slotOf(flex.resolution, terms.length, i), id);
    }
  }

  /** Put the ids of the pending messages that hold `term` in the map (once). */
  materialize(state: IndexState, term: string): void {
    if (!term || this.materialized.has(term) || this.done >= this.docs.length) return;
    this.materialized.add(term);
    for (const k of this.matches(term, false)) {
      const doc = this.docs[k]!;
      const terms = doc.text.split(" ");
      const i = terms.indexOf(term);
      const flex = state[doc.part] as unknown as FlexInternals;
      if (i >= 0) pushId(flex.map, term, slotOf(flex.resolution, terms.length, i), doc.id);
    }
  }

  /** The pending messages' terms that start with `prefix`. */
  termsStartingWith(prefix: string): Set<string> {
    const out = new Set<string>();
    if (!prefix || this.done >= this.docs.length) return out;
    for (const k of this.matches(prefix, true)) for (const t of this.docs[k]!.text.split(" ")) if (t.startsWith(prefix)) out.add(t);
    return out;
  }

  /** Put the next `count` messages' terms in the map and the term list; false once none is left. */
  step(state: IndexState, count: number): boolean {
    const end = Math.min(this.docs.length, this.done + count);
    for (; this.done < end; this.done++) {
      const doc = this.docs[this.done]!;
      const terms = doc.text.split(" ");
      addDoc(state[doc.part], doc.id, terms, this.materialized);
      for (const t of terms) addTerm(state, t);
    }
    return this.done < this.docs.length;
  }

  /** Indexes (in `docs`, from `done`) of the messages with `word` as a whole term (or a term's start), in order. */
  private matches(word: string, prefix: boolean): number[] {
    if (this.blobFrom !== this.done || this.blobCount !== this.docs.length) this.rebuild();
    const out: number[] = [];
    const blob = this.blob;
    let last = -1;
    for (let at = blob.indexOf(word); at >= 0; at = blob.indexOf(word, at + 1)) {
      const before = at === 0 ? 10 : blob.charCodeAt(at - 1);
      if (before !== 32 && before !== 10) continue;
      const after = at + word.length < blob.length ? blob.charCodeAt(at + word.length) : 10;
      if (!prefix && after !== 32 && after !== 10) continue;
      // The message this offset is in: the last start not above it.
      let lo = 0;
      let hi = this.blobStarts.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.blobStarts[mid]! <= at) lo = mid + 1;
        else hi = mid;
      }
      const k = this.blobFrom + lo - 1;
      if (k !== last) out.push(k);
      last = k;
    }
    return out;
  }

  private rebuild(): void {
    const starts: number[] = [];
    let at = 0;
    const texts: string[] = [];
    for (let k = this.done; k < this.docs.length; k++) {
      starts.push(at);
      texts.push(this.docs[k]!.text);
      at += this.docs[k]!.text.length + 1;
    }
    this.blob = texts.join("\n");
    this.blobStarts = starts;
    this.blobFrom = this.done;
    this.blobCount = this.docs.length;
  }
}

/**
 * Applies a journal line (with `pending`, during a load: its messages are registered and their
 * terms left to `pending`). A removed session's documents leave the id table, so they never come
 * back as hits; FlexSearch's own remove scans its whole map for each document (0.1 s each at
 * 100,000 messages), so the fold thread collects their ids in `purged` instead and the snapshot
 * is written without them (writeSnapshot), in one pass.
 */
export function applyLine(state: IndexState, line: Line, purged?: Set<number>, pending?: PendingDocs): void {
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
    // A message's terms as written (`add` joins them with single spaces) go to `pending` as they are.
    const plain = stemmed && text !== "" && !text.includes("  ") && text[0] !== " " && !text.endsWith(" ");
    const terms = plain && pending ? null : stemmed ? text.split(" ").filter(Boolean) : termsOf(text);
    if (terms && !terms.length) continue;
    const id = state.next++;
    if (pending) pending.add(state, id, line.k ? "other" : "chat", terms ? terms.join(" ") : text);
    else if (terms) {
      addDoc(index, id, terms);
      for (const t of terms) addTerm(state, t);
    }
    state.docs.set(id, line.s, i);
    if (!ids) state.ids.set(line.s, (ids = []));
    ids.push(id);
  }
  state.counts.set(line.s, Math.max(have, line.n));
}

/**
 * The snapshot file: a first line of JSON, the head (format, next id, counts, the id table per
 * session as flat [id, position, ...], the terms, and the list of the lines after it), then one
 * line per part FlexSearch exports: `<chat|other>\t<key>\t<data>` (its data is JSON, so it holds
 * no newline). The head lists each line's part, key, first term (map lines) and length in bytes,
 * so a load reads the head alone first and then any line by its offset: a query during the load
 * reads only its terms' lines, not the whole file (issue 31: the first search after a start).
 */
interface Head {
  format: number;
  next: number;
  counts: Record<string, number>;
  table: Record<string, number[]>;
  terms: string[];
  /** The lines after the head, in file order: [part, key, first term of a map line ("" otherwise), bytes with the newline]. */
  lines: Array<[Part, string, string, number]>;
}

/** The snapshot's state, or null when there is none or it is of another format (an older version's is rebuilt by the catch-up after start). */
export async function readSnapshot(file: string): Promise<IndexState | null> {
  const loader = openSnapshot(file);
  if (loader === "stale") return readFormat3(file);
  if (!loader) return null;
  try {
    // One line at a time, so the event loop runs while the index loads.
    while (loader.importNext()) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    loader.close();
  }
  return loader.state;
}

/**
 * A snapshot of format 3 (the version before: the same lines after a head without their
 * offsets, map lines of 2,000 terms), read whole, or null when it is of another format: a start
 * loads it this once (as that version did) and its next fold writes format 4, so an upgrade
 * does not index every session again.
 */
/** The index state a snapshot's head describes (its id table, counts and sorted terms); the map lines come after. */
function stateFromHead(head: Pick<Head, "next" | "counts" | "table" | "terms">): IndexState {
  const state = emptyState();
  state.docs = new DocTable(head.next);
  state.next = head.next;
  state.counts = new Map(Object.entries(head.counts));
  for (const session in head.table) state.ids.set(session, state.docs.setSession(session, head.table[session]!));
  state.terms.sorted = head.terms;
  return state;
}

export async function readFormat3(file: string): Promise<IndexState | null> {
  const text = await readFile(file, "utf8").catch(() => null);
  if (!text) return null;
  let end = text.indexOf("\n");
  if (end < 0) end = text.length;
  const head = JSON.parse(text.slice(0, end)) as Omit<Head, "lines">;
  if (head.format !== 3) return null;
  const state = stateFromHead(head);
  for (let at = end + 1, n = 0; at < text.length; n++) {
    let nl = text.indexOf("\n", at);
    if (nl < 0) nl = text.length;
    const a = text.indexOf("\t", at);
    const b = a < 0 ? -1 : text.indexOf("\t", a + 1);
    if (a < 0 || b < 0 || b > nl) throw new Error("the search index snapshot has a malformed line");
    const part = text.slice(at, a) as Part;
    if (part !== "chat" && part !== "other") throw new Error("the search index snapshot names an unknown index");
    const key = text.slice(a + 1, b);
    const data = text.slice(b + 1, nl);
    if (key.endsWith(".map")) mergeMap(state[part], JSON.parse(data) as MapEntry[]);
    else state[part].import(key, data);
    at = nl + 1;
    if (n % 8 === 7) await new Promise((resolve) => setImmediate(resolve));
  }
  return state;
}

/** A line of the snapshot after its head: where it is, and (map lines) the first term it holds. */
interface LineRef {
  part: Part;
  key: string;
  offset: number;
  bytes: number;
  /** Imported (or being imported): never read again. */
  done: boolean;
}

/**
 * A snapshot being loaded: its head (the id table, counts and terms) is in `state` at once; its
 * lines (FlexSearch's register and map, the bulk of it) are read from the file by offset and
 * imported one at a time by `importNext`, or on demand by `ensure` for the terms a query needs.
 * A map line merges into what the index already holds for its terms (the snapshot's ids first),
 * so the journal's messages can be applied before the snapshot's map lines are all in, and a
 * query whose terms' lines are in answers as it will once everything is.
 */
export class SnapshotLoader {
  /** Each part's map lines, sorted by their first term: a line covers the terms up to the next one's. */
  private readonly maps: Record<Part, { first: string[]; refs: LineRef[] }> = { chat: { first: [], refs: [] }, other: { first: [], refs: [] } };
  private readonly order: LineRef[] = [];
  private next = 0;
  private fd: number | null;

  constructor(
    readonly state: IndexState,
    fd: number,
    head: Head,
    headBytes: number,
  ) {
    this.fd = fd;
    let offset = headBytes;
    const rest: LineRef[] = [];
    for (const [part, key, first, bytes] of head.lines) {
      if (part !== "chat" && part !== "other") throw new Error("the search index snapshot names an unknown index");
      const ref: LineRef = { part, key, offset, bytes, done: false };
      offset += bytes;
      if (!key.endsWith(".map")) {
        // The registers (every id, for FlexSearch's updates and the next export) load last: no query needs them.
        rest.push(ref);
        continue;
      }
      this.order.push(ref);
      const map = this.maps[part];
      if (map.first.length && map.first[map.first.length - 1]! >= first) throw new Error("the search index snapshot's map lines are not in order");
      map.first.push(first);
      map.refs.push(ref);
    }
    this.order.push(...rest);
  }

  /** Import one more line; false once none is left. */
  importNext(): boolean {
    while (this.next < this.order.length) {
      if (this.importLine(this.order[this.next++]!)) return true;
    }
    this.close();
    return false;
  }

  get done(): boolean {
    return this.next >= this.order.length;
  }

  /** Import the map line that holds `term` in each part, if it is not in yet. */
  ensure(term: string): void {
    for (const part of ["chat", "other"] as const) {
      const { first, refs } = this.maps[part];
      // The last line whose first term is not above `term`.
      let lo = 0;
      let hi = first.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (first[mid]! <= term) lo = mid + 1;
        else hi = mid;
      }
      if (lo > 0) this.importLine(refs[lo - 1]!);
    }
  }

  /** Stop reading the file (the lines not imported are left out). */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private importLine(ref: LineRef): boolean {
    if (ref.done) return false;
    ref.done = true;
    const data = this.read(ref);
    if (ref.key.endsWith(".map")) mergeMap(this.state[ref.part], JSON.parse(data) as Array<[string, Array<number[] | null>]>);
    else this.state[ref.part].import(ref.key, data);
    return true;
  }

  /** A line's data (after `<part>\t<key>\t`, without its newline). */
  private read(ref: LineRef): string {
    if (this.fd === null) throw new Error("the search index snapshot was closed during its load");
    const buf = Buffer.allocUnsafe(ref.bytes);
    for (let got = 0; got < ref.bytes; ) {
      const n = readSync(this.fd, buf, got, ref.bytes - got, ref.offset + got);
      if (n === 0) throw new Error("the search index snapshot is shorter than its head says");
      got += n;
    }
    const prefix = `${ref.part}\t${ref.key}\t`;
    if (buf.toString("utf8", 0, prefix.length) !== prefix || buf[ref.bytes - 1] !== 10) throw new Error("the search index snapshot has a malformed line");
    return buf.toString("utf8", prefix.length, ref.bytes - 1);
  }
}

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

/** Bytes read at a time while looking for the end of the head. */
const HEAD_READ = 1 << 20;

/**
 * Open the snapshot: its head read (and only it), its lines left to the loader, which keeps the
 * file open until they are all in (or `close`). Null when there is none; "stale" when it is of
 * another format (the caller starts empty and indexes every session again).
 */
export function openSnapshot(file: string): SnapshotLoader | "stale" | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(HEAD_READ);
      const n = readSync(fd, buf, 0, HEAD_READ, size);
      const nl = buf.subarray(0, n).indexOf(10);
      if (nl >= 0 || n === 0) {
        chunks.push(buf.subarray(0, nl >= 0 ? nl : n));
        size += nl >= 0 ? nl : n;
        break;
      }
      chunks.push(buf.subarray(0, n));
      size += n;
    }
    if (!size) {
      closeSync(fd);
      return null;
    }
    const head = JSON.parse(Buffer.concat(chunks, size).toString("utf8")) as Head;
    if (head.format !== FORMAT) {
      closeSync(fd);
      return "stale";
    }
    const state = stateFromHead(head);
    return new SnapshotLoader(state, fd, head, size + 1);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
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
  const lines: Head["lines"] = [];
  const line = (part: Part, key: string, first: string, data: string) => {
    const text = `${part}\t${key}\t${data}\n`;
    parts.push(text);
    lines.push([part, key, first, Buffer.byteLength(text)]);
  };
  for (const part of ["chat", "other"] as const) {
    // The map's entries of every export chunk, sorted by term, then cut into lines of about
    // MAP_LINE_BYTES: a line then covers the terms from its first to the next line's (a query
    // during a load reads only its terms' lines, SnapshotLoader).
    const entries: MapEntry[] = [];
    await state[part].export((key: string, data: string) => {
      if (typeof data !== "string") return;
      if (key.endsWith(".map")) for (const e of mapEntries(data, purged, kept)) entries.push(e);
      else line(part, key, "", rewrite(key, data, purged));
    });
    entries.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    let run: string[] = [];
    let first = "";
    let bytes = 0;
    for (const e of entries) {
      const json = JSON.stringify(e);
      if (!run.length) first = e[0];
      run.push(json);
      bytes += json.length;
      if (bytes >= MAP_LINE_BYTES) {
        line(part, "1.map", first, `[${run.join(",")}]`);
        run = [];
        bytes = 0;
      }
    }
    if (run.length) line(part, "1.map", first, `[${run.join(",")}]`);
  }
  const terms = kept ? [...kept].sort() : state.terms.sorted;
  const head: Head = { format: FORMAT, next: state.next, counts: Object.fromEntries(state.counts), table, terms, lines };
  parts.unshift(`${JSON.stringify(head)}\n`);
  await writeFileAtomicChunks(file, parts);
}

/** About this much JSON in one map line (a frequent term's ids may make one longer): reading and importing a line then takes a millisecond or so. */
const MAP_LINE_BYTES = 64 * 1024;

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

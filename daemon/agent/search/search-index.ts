import { readFile } from "node:fs/promises";
import { join } from "node:path";
import MiniSearch, { type SearchResult } from "minisearch";
import { stemmer } from "stemmer";
import type { StoredMessage } from "../../../shared/protocol/chat.js";
import { writeFileAtomicChunks } from "../../store/atomic-file.js";
import { JsonlJournal } from "../jsonl-journal.js";

/**
 * The full-text index of session messages (MiniSearch; README "Sessions" and the design note
 * on the choice). One document per user or assistant message, id `<session>#<position>`; words
 * are lower-cased and stemmed (Porter), and the last word of a query also matches as a prefix.
 *
 * On disk: a snapshot (`data/agent/search/index.json`: the index and how many messages of each
 * session it holds) and a journal of what was added or removed since (`journal.jsonl`, one line
 * per batch of messages). Start-up loads the snapshot in the background and replays the
 * journal, so the daemon answers at once and the first search waits for the load; the journal
 * is folded into the snapshot when it grows, at a graceful stop and after a removal.
 */

/** Bump when the tokenizer or the stored layout changes: an older snapshot is rebuilt. */
const FORMAT = 1;
/** Journal lines (batches) before a fold. */
const FOLD_LINES = 2000;
const MAX_TEXT = 20_000;

type Line = { s: string; t: Array<[number, string]>; n: number } | { d: string };

interface Snapshot {
  format: number;
  counts: Record<string, number>;
  index: ReturnType<MiniSearch["toJSON"]>;
}

export interface SearchHit {
  sessionId: string;
  position: number;
  score: number;
  /** The index terms that matched (stemmed). */
  terms: string[];
}

/** Words too common to tell messages apart: left out of the index and of queries. */
const STOP_WORDS = new Set("a an and are as at be by for from in is it of on or that the this to was were with".split(" "));

const OPTIONS = {
  fields: ["text"],
  processTerm: (term: string) => stem(term) ?? false,
};

/** The index's normal form of a word (lower case, stemmed), or null for a stop word. */
export function stem(word: string): string | null {
  const lower = word.toLowerCase();
  return STOP_WORDS.has(lower) ? null : stemmer(lower);
}

/** The words of a text as the index splits them (MiniSearch's default: Unicode spaces and punctuation). */
export const WORD_SPLIT = /[\n\r\p{Z}\p{P}]+/u;

/** The searchable text of a message: user and assistant text only (tool output is left out). */
export function searchableText(m: StoredMessage): string | null {
  if (m.role !== "user" && m.role !== "assistant") return null;
  let text = "";
  if (typeof m.content === "string") text = m.content;
  else if (Array.isArray(m.content)) text = m.content.map((p) => (p.type === "text" && typeof p.text === "string" ? p.text : "")).join("\n");
  text = text.trim();
  return text ? text.slice(0, MAX_TEXT) : null;
}

export class SearchIndex {
  private mini = new MiniSearch<{ id: string; text: string }>(OPTIONS);
  private counts = new Map<string, number>();
  private readonly journal: JsonlJournal<Line>;
  private readonly file: string;
  private loaded: Promise<void>;
  private folding: Promise<void> | null = null;
  private foldTimer: NodeJS.Timeout | null = null;
  /** Messages of sessions added before the load finished: applied after it. */
  private early: Array<() => void> | null = [];

  constructor(dir: string) {
    this.file = join(dir, "index.json");
    this.journal = new JsonlJournal<Line>(join(dir, "journal.jsonl"));
    this.loaded = this.load();
  }

  /** Resolves once the snapshot and the journal are in memory. */
  ready(): Promise<void> {
    return this.loaded;
  }

  /** How many messages of the session the index holds (positions below it). */
  indexed(sessionId: string): number {
    return this.counts.get(sessionId) ?? 0;
  }

  sessions(): string[] {
    return [...this.counts.keys()];
  }

  get documents(): number {
    return this.mini.documentCount;
  }

  /** Index the session's messages at `from..`; positions already indexed are skipped. */
  add(sessionId: string, from: number, messages: StoredMessage[]): void {
    if (this.early) {
      this.early.push(() => this.add(sessionId, from, messages));
      return;
    }
    const have = this.indexed(sessionId);
    const end = from + messages.length;
    if (end <= have) return;
    const texts: Array<[number, string]> = [];
    for (let i = Math.max(have, from); i < end; i++) {
      const text = searchableText(messages[i - from]!);
      if (text !== null) texts.push([i, text]);
    }
    this.journal.append({ s: sessionId, t: texts, n: end });
    this.apply(sessionId, texts, end);
    if (this.journal.lines > FOLD_LINES) this.scheduleFold(0);
  }

  /** Forget a session's messages. */
  remove(sessionId: string): void {
    if (this.early) {
      this.early.push(() => this.remove(sessionId));
      return;
    }
    if (!this.counts.has(sessionId)) return;
    this.journal.append({ d: sessionId });
    this.drop(sessionId);
    // Its words leave the snapshot with the next fold, soon.
    this.scheduleFold(1000);
  }

  /** Matches, best first (AND of the words; OR when that finds nothing). */
  async search(query: string, filter: (sessionId: string) => boolean): Promise<SearchHit[]> {
    await this.loaded;
    const words = query.split(WORD_SPLIT).filter((w) => w && stem(w) !== null);
    if (!words.length) return [];
    // Each word as its stem or as typed (Porter stems "deploy" to "deploi" but "deployment" to
    // "deploy"); the last word also as a prefix, for a word still being typed.
    const last = words.length - 1;
    const perWord = words.map((w, i) => ({
      combineWith: "OR" as const,
      queries: [...new Set([stem(w)!, w.toLowerCase()])],
      prefix: i === last && w.length >= 3,
    }));
    const options = { processTerm: (t: string) => t, filter: (r: SearchResult) => filter(sessionOf(r.id as string)) };
    let results = this.mini.search({ combineWith: "AND", queries: perWord }, options);
    if (!results.length && words.length > 1) results = this.mini.search({ combineWith: "OR", queries: perWord }, options);
    return results.map((r) => {
      const id = r.id as string;
      const cut = id.lastIndexOf("#");
      return { sessionId: id.slice(0, cut), position: Number(id.slice(cut + 1)), score: r.score, terms: r.terms };
    });
  }

  /** Start again from nothing (reindex); the caller adds every session after. */
  async clear(): Promise<void> {
    await this.loaded;
    this.mini = new MiniSearch(OPTIONS);
    this.counts.clear();
    await this.fold();
  }

  /** Write the snapshot and empty the journal. */
  fold(): Promise<void> {
    if (this.foldTimer) clearTimeout(this.foldTimer);
    this.foldTimer = null;
    const run = async () => {
      await this.loaded;
      const lines = this.journal.lines;
      const snapshot: Snapshot = { format: FORMAT, counts: Object.fromEntries(this.counts), index: this.mini.toJSON() };
      await writeFileAtomicChunks(this.file, snapshotChunks(snapshot));
      this.journal.dropFirst(lines);
    };
    const next = (this.folding ?? Promise.resolve()).then(run, run);
    this.folding = next.finally(() => {
      if (this.folding === next) this.folding = null;
    });
    return next;
  }

  /** At a graceful stop: fold when the journal holds anything. */
  async close(): Promise<void> {
    if (this.foldTimer) clearTimeout(this.foldTimer);
    this.foldTimer = null;
    await this.loaded.catch(() => undefined);
    if (this.journal.lines > 0) await this.fold().catch(() => undefined);
    await this.folding?.catch(() => undefined);
    this.journal.close();
  }

  private scheduleFold(delayMs: number): void {
    if (this.foldTimer) return;
    this.foldTimer = setTimeout(() => {
      this.foldTimer = null;
      void this.fold().catch(() => undefined);
    }, delayMs);
    this.foldTimer.unref();
  }

  private apply(sessionId: string, texts: Array<[number, string]>, end: number): void {
    const have = this.indexed(sessionId);
    for (const [i, text] of texts) if (i >= have && !this.mini.has(`${sessionId}#${i}`)) this.mini.add({ id: `${sessionId}#${i}`, text });
    this.counts.set(sessionId, Math.max(have, end));
  }

  private drop(sessionId: string): void {
    const n = this.indexed(sessionId);
    for (let i = 0; i < n; i++) {
      const id = `${sessionId}#${i}`;
      if (this.mini.has(id)) this.mini.discard(id);
    }
    this.counts.delete(sessionId);
  }

  private async load(): Promise<void> {
    try {
      const text = await readFile(this.file, "utf8").catch((error) => {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw error;
      });
      const snapshot = text ? (JSON.parse(text) as Snapshot) : null;
      if (snapshot && snapshot.format === FORMAT) {
        this.mini = await MiniSearch.loadJSAsync(snapshot.index, OPTIONS);
        this.counts = new Map(Object.entries(snapshot.counts));
      }
    } catch {
      // An unreadable snapshot: start empty; the catch-up after start indexes every session again.
      this.mini = new MiniSearch(OPTIONS);
      this.counts.clear();
    }
    for (const line of this.journal.read()) {
      if ("d" in line) this.drop(line.d);
      else this.apply(line.s, line.t, line.n);
    }
    const early = this.early ?? [];
    this.early = null;
    for (const fn of early) fn();
  }
}

function sessionOf(id: string): string {
  return id.slice(0, id.lastIndexOf("#"));
}

/** The snapshot as a few strings: the index's big maps are written one after the other. */
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

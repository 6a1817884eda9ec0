import { rmSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { SessionKind, StoredMessage } from "../../../shared/protocol/chat.js";
import { Journal, jsonLine, parseJsonLines } from "../../store/journal.js";
import { threadScript } from "../../thread-script.js";
import {
  applyLine,
  emptyState,
  type IndexState,
  type Line,
  lineDocs,
  type Part,
  openSnapshot,
  PendingDocs,
  readFormat3,
  type SnapshotLoader,
  stem,
  termsOf,
  termsStartingWith,
  WORD_SPLIT,
  writeSnapshot,
} from "./index-store.js";

export { stem, WORD_SPLIT } from "./index-store.js";

/**
 * The full-text index of session messages (FlexSearch; README "Sessions" and the design note
 * on the choice). One document per user or assistant message, a numeric id in a table back to
 * (session, position), in one of two indexes: chat sessions, and cron and kanban runs, which
 * rank below chat. Words are lower-cased and stemmed (Porter), and the last word of a query
 * also matches as a prefix.
 *
 * On disk: a snapshot (`data/agent/search/index.json`: a line of JSON with the id table, how
 * many messages of each session it holds and where each following line is, then both indexes'
 * export parts, the map cut into lines of about 64 KB by term) and a journal of what was added
 * or removed since (`journal.jsonl`, one line per batch of messages), so an update costs one
 * append. Start-up reads the snapshot's head and registers the journal's messages once the
 * daemon is ready, then the snapshot's other lines and the journal's terms in the background, a
 * piece per event-loop turn; a search during the load puts its own terms in first (their
 * snapshot lines, the journal's ids for them) and answers as it will once all are in (issue
 * 31). The journal is folded into the snapshot by a worker thread (fold-thread.ts), which
 * rebuilds the snapshot from the old one and the journal, so the daemon never stops to
 * serialize its index: when the journal holds FOLD_DOCS messages, after a removal, and on
 * `agent sessions reindex`.
 */

/** Messages in the journal before a fold: what a start-up registers before its first search (their terms go in later, PendingDocs). */
const FOLD_DOCS = 10_000;
const MAX_TEXT = 20_000;
/** Journal messages registered per event-loop turn at a start. */
const JOURNAL_PER_TURN = 5000;
/** Pending messages whose terms go into the index per event-loop turn while it loads (a few milliseconds). */
const PENDING_PER_TURN = 500;
/** Results one FlexSearch query returns at most (a query's cost grows with it). */
const QUERY_LIMIT = 1000;
/** Indexed terms the last query word widens to (prefix search). */
const PREFIX_TERMS = 24;
/** Word combinations queried at most (each word as its stem or as typed, the last also widened). */
const MAX_COMBOS = 32;

export interface SearchHit {
  sessionId: string;
  position: number;
  score: number;
  /** The index terms that matched (stemmed). */
  terms: string[];
}

/** The searchable text of a message: user and assistant text only (tool output is left out). */
export function searchableText(m: StoredMessage): string | null {
  if (m.role !== "user" && m.role !== "assistant") return null;
  let text = "";
  if (typeof m.content === "string") text = m.content;
  else if (Array.isArray(m.content)) text = m.content.map((p) => (p.type === "text" && typeof p.text === "string" ? p.text : "")).join("\n");
  text = text.trim();
  return text ? text.slice(0, MAX_TEXT) : null;
}

/** The compiled fold thread (tests and tsx runs use the build's). */
const foldThreadFile = () => threadScript(import.meta.url, "fold-thread.js");

export class SearchIndex {
  // Made on first use: an empty state is two FlexSearch indexes, and FlexSearch loads on first use.
  private current: IndexState | null = null;
  private get state(): IndexState {
    this.current ??= emptyState();
    return this.current;
  }
  private set state(state: IndexState) {
    this.current = state;
  }
  private readonly journal: Journal;
  private readonly file: string;
  private loading: Promise<void> | null = null;
  private worker: Worker | null = null;
  private foldTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Changes asked for before the snapshot's head and the journal were read: applied after them. */
  private early: Array<() => void> | null = [];
  /** The snapshot's map lines still to import (null once all are in): a query imports its terms' lines first. */
  private loader: SnapshotLoader | null = null;
  /** While the index loads: the journal's messages (and those added since) whose terms are not all in FlexSearch's map yet. */
  private pending: PendingDocs | null = null;
  /** Resolves once the index can answer a query (the snapshot's head and the journal read). */
  private queryable: Promise<void> | null = null;
  /** Messages in the journal (what a start-up replays). */
  private journalDocs = 0;

  /**
   * `kindOf` tells a session's kind when its messages are added (chat unless told); `loadPauseMs`
   * (a test knob) pauses between the snapshot's lines as they load, so a test searches during the load.
   */
  constructor(
    dir: string,
    private readonly kindOf: (sessionId: string) => SessionKind = () => "chat",
    private readonly loadPauseMs = 0,
  ) {
    this.file = join(dir, "index.json");
    this.journal = new Journal(join(dir, "journal.jsonl"), { mode: 0o600 });
  }

  /**
   * Loads the snapshot and the journal (once); resolves when they are in memory. Parsing a large
   * snapshot holds the event loop for a while, so the daemon calls this once it is ready, and a
   * first search or update before that calls it too.
   */
  ready(): Promise<void> {
    if (!this.loading) {
      const open = this.open();
      this.queryable = open;
      this.loading = open.then(() => this.importRest());
      this.loading.then(() => {
        this.loadedFlag = true;
        this.settled.resolve();
      }, this.settled.reject);
    }
    return this.loading;
  }

  private readonly settled = deferred();

  /** Resolves when the load (started by the delay or a first use) is done; starts nothing. */
  loaded(): Promise<void> {
    return this.settled.promise;
  }

  /** Whether the load is over (`agent daemon status` shows it). */
  get isLoaded(): boolean {
    return this.loadedFlag;
  }

  private loadedFlag = false;

  /** How many messages of the session the index holds (positions below it). */
  indexed(sessionId: string): number {
    return this.state.counts.get(sessionId) ?? 0;
  }

  sessions(): string[] {
    return [...this.state.counts.keys()];
  }

  get documents(): number {
    return this.state.docs.size;
  }

  /** Index the session's messages at `from..`; positions already indexed are skipped. */
  add(sessionId: string, from: number, messages: StoredMessage[]): void {
    if (this.early) {
      this.early.push(() => this.add(sessionId, from, messages));
      void this.ready().catch(() => undefined);
      return;
    }
    const have = this.indexed(sessionId);
    const end = from + messages.length;
    if (end <= have) return;
    const w: Array<[number, string]> = [];
    for (let i = Math.max(have, from); i < end; i++) {
      const text = searchableText(messages[i - from]!);
      const terms = text === null ? [] : termsOf(text);
      if (terms.length) w.push([i, terms.join(" ")]);
    }
    this.record({ s: sessionId, ...(this.kindOf(sessionId) === "chat" ? {} : { k: 1 as const }), w, n: end });
    this.journalDocs += w.length;
    if (this.journalDocs > FOLD_DOCS) this.scheduleFold(0);
  }

  /** Forget a session's messages; its words leave the snapshot with a fold that follows soon. */
  remove(sessionId: string): void {
    if (this.early) {
      this.early.push(() => this.remove(sessionId));
      void this.ready().catch(() => undefined);
      return;
    }
    if (!this.state.counts.has(sessionId)) return;
    this.record({ d: sessionId });
    // Its messages leave the journal now (after a fold on its way, which counts the journal's
    // lines); its words leave the snapshot with the fold that follows.
    const purge = () => {
      this.journal.retain((raw) => {
        const [line] = parseJsonLines<Line>([raw]);
        return !(line && "s" in line && line.s === sessionId);
      });
      this.journalDocs = parseJsonLines<Line>(this.journal.loadLines()).reduce((n, line) => n + lineDocs(line), 0);
    };
    if (this.journal.folding) void this.journal.folding.then(purge);
    else purge();
    this.scheduleFold(1000);
  }

  /**
   * Matches, best first: chat sessions, then cron and kanban runs (AND of the words; OR when
   * that finds nothing). `terms` of a hit are the query's index terms (all of them: FlexSearch
   * does not tell which matched; the snippet looks for the first in the text). It stops once
   * hits of `sessions` sessions are found: later hits rank below them.
   */
  async search(query: string, filter: (sessionId: string) => boolean, sessions = Number.POSITIVE_INFINITY): Promise<SearchHit[]> {
    void this.ready().catch(() => undefined);
    // While the snapshot's map lines load, the query's terms' lines are imported first: it
    // answers as it will once all are in.
    await this.queryable;
    const words = query.split(WORD_SPLIT).filter((w) => w && stem(w) !== null);
    if (!words.length) return [];
    // Each word as its stem or as typed (Porter stems "deploy" to "deploi" but "deployment" to
    // "deploy"); the last word also widened to the indexed terms it starts, for a word still
    // being typed.
    const last = words.length - 1;
    const alternatives = words.map((w, i) => {
      const lower = w.toLowerCase();
      const alts = new Set([stem(w)!, lower]);
      if (i === last && w.length >= 3) for (const t of termsStartingWith(this.state, lower, PREFIX_TERMS, this.pending?.termsStartingWith(lower))) alts.add(t);
      return [...alts];
    });
    const terms = [...new Set(alternatives.flat())];
    // While the index loads, the query's terms go in first: the snapshot's lines that hold them,
    // and the pending messages' ids for them; it answers as it will once all are in.
    if (this.loader) for (const t of terms) this.loader.ensure(t);
    if (this.pending) for (const t of terms) this.pending.materialize(this.state, t);
    const combos = combinations(alternatives, MAX_COMBOS);
    const hits: SearchHit[] = [];
    const seen = new Set<number>();
    const found = new Set<string>();
    const collect = (part: Part, queries: string[]) => {
      for (const q of queries) {
        if (found.size >= sessions) return;
        for (const id of this.state[part].search(q, { limit: QUERY_LIMIT }) as number[]) {
          if (seen.has(id)) continue;
          seen.add(id);
          const doc = this.state.docs.get(id);
          if (!doc || !filter(doc[0])) continue;
          hits.push({ sessionId: doc[0], position: doc[1], score: 1 / (1 + hits.length), terms });
          found.add(doc[0]);
        }
      }
    };
    for (const part of ["chat", "other"] as const) {
      const before = hits.length;
      collect(part, combos);
      if (hits.length === before && words.length > 1) collect(part, terms);
    }
    return hits;
  }

  /** Start again from nothing (reindex); the caller adds every session, then folds. */
  async clear(): Promise<void> {
    await this.ready();
    await this.journal.folding;
    this.state = emptyState();
    await writeSnapshot(this.file, this.state);
    this.journal.truncate();
    this.journalDocs = 0;
  }

  /** Fold the journal into the snapshot, in a worker thread. */
  fold(): Promise<void> {
    if (this.foldTimer) clearTimeout(this.foldTimer);
    this.foldTimer = null;
    return this.ready().then(() =>
      this.journal.fold(async (lines) => {
        if (this.closed) return false;
        const docs = this.journalDocs;
        await this.runWorker(lines);
        this.journalDocs = Math.max(0, this.journalDocs - docs);
      }),
    );
  }

  /**
   * At a graceful stop: a fold on its way is abandoned (the journal keeps its lines for the
   * next start; the worker's temp file is never read), and a removal's fold that is due is done
   * now, so no trace of a deleted session is left.
   */
  async close(): Promise<void> {
    const removalDue = this.foldTimer !== null;
    if (this.foldTimer) clearTimeout(this.foldTimer);
    this.foldTimer = null;
    if (this.loading) await this.loading.catch(() => undefined);
    if (removalDue) await this.fold().catch(() => undefined);
    this.closed = true;
    await this.worker?.terminate();
    await this.journal.folding;
    this.journal.close();
  }

  private record(line: Line): void {
    this.journal.append(jsonLine(line));
    applyLine(this.state, line, undefined, this.pending ?? undefined);
  }

  private runWorker(lines: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(foldThreadFile(), { workerData: { snapshot: this.file, journal: this.journal.file, lines } });
      this.worker = worker;
      let answered = false;
      worker.once("message", (m: { ok: boolean; message?: string }) => {
        answered = true;
        if (m.ok) resolve();
        else reject(new Error(`the search index fold failed: ${m.message}`));
      });
      worker.once("error", reject);
      worker.once("exit", () => {
        if (this.worker === worker) this.worker = null;
        if (!answered) {
          rmSync(`${this.file}.tmp`, { force: true });
          reject(new Error("the search index fold stopped"));
        }
      });
    });
  }

  private scheduleFold(delayMs: number): void {
    if (this.foldTimer || this.closed) return;
    this.foldTimer = setTimeout(() => {
      this.foldTimer = null;
      void this.fold().catch(() => undefined);
    }, delayMs);
    this.foldTimer.unref();
  }

  /** Read the snapshot's head, then register the journal's messages: from then on a query can be answered. */
  private async open(): Promise<void> {
    // Nothing of it in the caller's turn (the daemon's ready report goes out first), and a turn
    // of the event loop between its parts (the head, each batch of journal messages).
    await turn();
    let loader: SnapshotLoader | null = null;
    let stale = false;
    try {
      const opened = openSnapshot(this.file);
      stale = opened === "stale";
      loader = opened === "stale" ? null : opened;
    } catch {
      // An unreadable snapshot: start empty; the catch-up after start indexes every session again.
      stale = true;
    }
    // A snapshot of the version before is read whole (this once: its next fold writes the
    // current format). Another format's (or an unreadable one's) journal lines (messages from
    // some position on) would leave the messages before them out: they go, and the catch-up
    // indexes every session from its start.
    const format3 = stale ? await readFormat3(this.file).catch(() => null) : null;
    if (stale && !format3) this.journal.truncate();
    this.state = loader?.state ?? format3 ?? emptyState();
    this.loader = loader;
    // The journal's messages are registered now, their terms go in later (a query's first,
    // PendingDocs); the snapshot's lines merge into what the index holds for their terms as
    // they load, its ids first (SnapshotLoader).
    const pending = new PendingDocs();
    this.pending = pending;
    let batch = JOURNAL_PER_TURN;
    for (const line of parseJsonLines<Line>(this.journal.loadLines())) {
      if (batch >= JOURNAL_PER_TURN) {
        batch = 0;
        await turn();
      }
      applyLine(this.state, line, undefined, pending);
      this.journalDocs += lineDocs(line);
      batch += lineDocs(line);
    }
    const early = this.early ?? [];
    this.early = null;
    for (const fn of early) fn();
    if (format3) {
      // Rewritten in the current format by a fold soon (a fold needs a journal line: one that
      // restates a session's count, which changes nothing).
      const [session, count] = this.state.counts.entries().next().value ?? [];
      if (session !== undefined && count !== undefined) this.record({ s: session, w: [], n: count });
      this.scheduleFold(0);
    }
  }

  /** The snapshot's lines not imported yet, one per turn of the event loop; then the pending messages' terms. */
  private async importRest(): Promise<void> {
    const loader = this.loader;
    const pause = () => new Promise((resolve) => setTimeout(resolve, this.loadPauseMs));
    // The queries that waited for the head go first.
    await turn();
    try {
      if (loader) while (!this.closed && loader.importNext()) await (this.loadPauseMs > 0 ? pause() : turn());
    } catch {
      // A damaged line: start empty; the catch-up after the load indexes every session again.
      this.state = emptyState();
      this.pending = null;
    } finally {
      loader?.close();
      this.loader = null;
    }
    // Then the pending messages' terms, a batch per turn.
    const pending = this.pending;
    if (pending) while (!this.closed && pending.step(this.state, PENDING_PER_TURN)) await turn();
    this.pending = null;
  }
}

/** One turn of the event loop. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((a, b) => ((resolve = a), (reject = b)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** The queries made of one alternative per word, in order (the first alternatives first), at most `max`. */
function combinations(alternatives: string[][], max: number): string[] {
  let out: string[][] = [[]];
  for (const alts of alternatives) {
    const next: string[][] = [];
    for (const prefix of out) for (const a of alts) if (next.length < max) next.push([...prefix, a]);
    out = next;
  }
  return out.map((words) => words.join(" "));
}

/**
 * The step journal (`<id>.json.wal`, a write-ahead log): finished workflow steps are appended
 * here as one line each instead of rewriting the actor file, so a step costs the same however
 * long the history is. The next full write of the actor file folds the journal in and removes it.
 */
import { existsSync } from "node:fs";
import { Journal, jsonLine, parseJsonLines } from "../../store/journal.js";
import { NEW_ACTOR, type ActorFile } from "./actor-file.js";
import { emptyHistory, type EntryMetadata, type WorkflowEntry, type WorkflowHistory } from "../workflow/history.js";

/** A step journal above this size (bytes) is folded into the actor file. */
const WAL_MAX = 4 * 1024 * 1024;

/**
 * One line of an actor's step journal: a workflow entry as it finished, the history fields that
 * moved with it, names added to the name registry since the last line, and the encoded state
 * when the step changed it. `s` orders lines against the actor file's `walSeq`.
 */
interface WalLine {
  s: number;
  e: WorkflowEntry;
  m: EntryMetadata;
  n: number;
  st: WorkflowHistory["status"];
  names?: [number, ...string[]];
  state?: string;
}

export class StepJournal {
  /** The last line's sequence number. */
  seq = 0;
  /** Set when the actor is destroyed: its files are removed, nothing is written any more. */
  closed = false;
  /** Whether the file holds lines. */
  private dirty = false;
  /** How many names of the name registry are already recorded (in the actor file or a line). */
  private names = 0;
  /** One per actor, so it holds no descriptor between appends. */
  private readonly journal: Journal;

  constructor(readonly file: string) {
    this.journal = new Journal(file, { closeAfterAppend: true });
  }

  /** Apply the journal left by the last run (lines newer than the actor file) to `data`. */
  load(data: ActorFile): void {
    this.seq = data.walSeq ?? 0;
    // A new actor has no journal; most others neither: a failed read costs an error object, a stat does not.
    if ((data as ActorFile & { [NEW_ACTOR]?: true })[NEW_ACTOR] || !existsSync(this.file)) return;
    // A torn last line (the write never completed, so it was never acknowledged) is cut off.
    for (const line of parseJsonLines<WalLine>(this.journal.loadLines())) {
      if (line.s <= (data.walSeq ?? 0)) continue;
      const h = (data.workflow ??= emptyHistory());
      if (line.names) {
        const [start, ...names] = line.names;
        for (const [i, n] of names.entries()) h.nameRegistry[start + i] = n;
      }
      const i = h.entries.findIndex((e) => e.id === line.e.id);
      if (i < 0) h.entries.push(line.e);
      else h.entries[i] = line.e;
      h.entryMetadata[line.e.id] = line.m;
      h.nextEntry = Math.max(h.nextEntry, line.n);
      h.status = line.st;
      if (line.state !== undefined) data.state = line.state;
      this.seq = Math.max(this.seq, line.s);
    }
    this.dirty = true;
    this.names = data.workflow?.nameRegistry.length ?? 0;
  }

  /**
   * Append one finished (or failed) step synchronously, with `state` (encoded) when the step
   * changed it. Once it returns the line survives a kill -9; it throws if the append failed.
   */
  append(h: WorkflowHistory, entry: WorkflowEntry, meta: EntryMetadata, state: string | undefined): void {
    const line: WalLine = { s: this.seq + 1, e: entry, m: meta, n: h.nextEntry, st: h.status };
    if (h.nameRegistry.length > this.names) line.names = [this.names, ...h.nameRegistry.slice(this.names)];
    if (state !== undefined) line.state = state;
    // storage.durability: power: the line (and a new journal's name) is on disk before the step counts as done.
    this.journal.append(jsonLine(line));
    this.seq = line.s;
    this.dirty = true;
    this.names = h.nameRegistry.length;
  }

  /** Lines not yet folded into the actor file are on disk. */
  get hasLines(): boolean {
    return this.dirty;
  }

  /** Large enough to be folded into the actor file now. */
  get oversized(): boolean {
    return this.journal.bytes > WAL_MAX;
  }

  /**
   * After a full write that included journal line `seq` and `names` registered names: drop the
   * journal unless newer lines came meanwhile (they stay, with the names they carry).
   */
  folded(seq: number, names: number): void {
    if (this.seq !== seq || this.closed) return;
    this.names = names;
    if (!this.dirty) return;
    this.journal.remove();
    this.dirty = false;
  }

  /** The actor is being destroyed: remove the journal, and never write it again. */
  close(): void {
    this.closed = true;
    this.journal.remove();
  }
}

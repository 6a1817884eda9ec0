/**
 * The one journal: an append-only file of records, one record per line (`\n`-terminated), next
 * to a snapshot it is folded into now and then. A change costs one short append, whatever the
 * size of the snapshot.
 *
 * - An append is written before `append` returns (page cache), so it survives `kill -9`. Under
 *   `storage.durability: power` it is also fsynced: once per event-loop turn for every append of
 *   the turn (`durable()` resolves after that fsync), or at once with `sync()` for a caller that
 *   acknowledges synchronously (a second `sync()` in the same turn finds nothing to do).
 * - A torn last line (a write that never completed, so was never acknowledged) is cut off when
 *   the journal is loaded, so the next append starts a line of its own; a failed append is cut
 *   back the same way at once.
 * - A record is whatever the owner puts on a line: JSON (`parseJsonLines`), or its own framing
 *   (the actor file journal's `<name>\t<contents>`). The journal never looks inside a line.
 * - Snapshot and fold: `fold(write)` runs the owner's snapshot write (the one atomic write) for
 *   the lines appended so far, one fold at a time, then drops those lines; lines appended
 *   meanwhile stay. Owners whose lines hold whole values make a replay of a folded line harmless.
 * - Generations (`journalGenerations`, `Journal.startGeneration`): a journal too large to rewrite
 *   is rolled over instead: a new file `<prefix><gen + 1>` takes the appends, and the older ones
 *   are removed once a snapshot holds them.
 *
 * Every failure to write is a `storage.*` error naming the file (storage-error.ts).
 */
import * as nodeFs from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { noteChanged, writeFileAtomicSync } from "./atomic-file.js";
import { syncDirSync, syncsWrites } from "./durability.js";
import { toStorageError } from "./storage-error.js";

/** The file system calls a journal makes: tests pass their own to count fsyncs or fail writes. */
export interface JournalFs {
  openSync: typeof nodeFs.openSync;
  writeSync: (fd: number, buffer: Buffer, offset: number, length: number) => number;
  fsyncSync: typeof nodeFs.fsyncSync;
  closeSync: typeof nodeFs.closeSync;
  ftruncateSync: typeof nodeFs.ftruncateSync;
  readFileSync: (file: string) => Buffer;
  mkdirSync: typeof nodeFs.mkdirSync;
  existsSync: typeof nodeFs.existsSync;
}

export const realJournalFs: JournalFs = {
  openSync: nodeFs.openSync,
  writeSync: (fd, buffer, offset, length) => nodeFs.writeSync(fd, buffer, offset, length),
  fsyncSync: nodeFs.fsyncSync,
  closeSync: nodeFs.closeSync,
  ftruncateSync: nodeFs.ftruncateSync,
  readFileSync: (file) => nodeFs.readFileSync(file),
  mkdirSync: nodeFs.mkdirSync,
  existsSync: nodeFs.existsSync,
};

export interface JournalOptions {
  /** The file system calls (default: node:fs). */
  fs?: JournalFs;
  /** The mode of a new journal file. */
  mode?: number;
  /**
   * Close the file after each append (fsynced first under power): for journals there are many
   * of (one per actor), which must not hold a descriptor each.
   */
  closeAfterAppend?: boolean;
}

/** null for a file that does not exist; any other error is thrown. */
function absent(error: unknown): null {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  return null;
}

/**
 * Group commit: `run` once after the current event-loop turn, however many callers asked for
 * it during the turn; each gets the outcome of that one run.
 */
export class AfterTurn {
  private pending: Promise<void> | null = null;
  /** The last run asked for (settled or not). */
  last: Promise<void> | null = null;

  constructor(private readonly run: () => void) {}

  request(): Promise<void> {
    if (this.pending) return this.pending;
    const p = new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.pending = null;
        try {
          this.run();
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
    p.catch(() => undefined);
    this.pending = p;
    this.last = p;
    return p;
  }
}

/** The length of the complete lines at the start of `buf` (a torn last line left out). */
export function completeLength(buf: Buffer): number {
  return buf.lastIndexOf(10) + 1;
}

/** The lines of `text` (complete lines only), empty ones left out. */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf("\n", start);
    if (end < 0) return out;
    if (end > start) out.push(text.slice(start, end));
    start = end + 1;
  }
}

/**
 * Parse JSON lines; a line that does not parse is skipped (a line is written whole or torn at
 * the end, so anything else was not written by the journal's owner).
 */
export function parseJsonLines<L>(lines: Iterable<string>): L[] {
  const out: L[] = [];
  for (const raw of lines) {
    try {
      out.push(JSON.parse(raw) as L);
    } catch {}
  }
  return out;
}

/** A record as a journal line. */
export const jsonLine = (record: unknown): string => `${JSON.stringify(record)}\n`;

/**
 * Read a journal's complete lines without changing the file (at most `max`): for a reader that
 * does not own it (the search index's fold thread).
 */
export async function readJournalLines(file: string, max = Number.POSITIVE_INFINITY): Promise<string[]> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const lines = splitLines(buf.toString("utf8", 0, completeLength(buf)));
  return lines.length > max ? lines.slice(0, max) : lines;
}

/** The generations `<prefix><n>` in `dir`, oldest first. */
export function journalGenerations(dir: string, prefix: string): number[] {
  try {
    return nodeFs
      .readdirSync(dir)
      .filter((n) => n.startsWith(prefix))
      .map((n) => Number(n.slice(prefix.length)))
      .filter((g) => Number.isInteger(g) && g >= 0)
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
}

export class Journal {
  /** Bytes of complete lines in the file (where the next append goes). */
  bytes = 0;
  /** Lines in the file (as loaded and appended). */
  lines = 0;
  private fd = -1;
  private readonly fs: JournalFs;
  /** Appended since the last fsync (power only). */
  private unsynced = false;
  private readonly turnSync = new AfterTurn(() => this.sync());
  private closed = false;

  constructor(
    readonly file: string,
    private readonly options: JournalOptions = {},
  ) {
    this.fs = options.fs ?? realJournalFs;
  }

  /**
   * Read the journal's complete lines (an empty buffer when there is no file) and cut a torn
   * last line off the file, so the next append starts on a line of its own.
   */
  load(): Buffer {
    let buf: Buffer | null;
    try {
      buf = this.fs.readFileSync(this.file);
    } catch (error) {
      buf = absent(error);
    }
    return this.loaded(buf);
  }

  /** The same, reading the file off the event loop (a large journal at start). */
  async loadAsync(): Promise<Buffer> {
    return this.loaded(await readFile(this.file).catch(absent));
  }

  /** The complete lines, as text (`load` then `splitLines`). */
  loadLines(): string[] {
    return splitLines(this.load().toString("utf8"));
  }

  private loaded(buf: Buffer | null): Buffer {
    if (buf === null) {
      this.bytes = 0;
      this.lines = 0;
      return Buffer.alloc(0);
    }
    const end = completeLength(buf);
    if (end !== buf.length) {
      try {
        this.ensureOpen();
        noteChanged(this.file, end);
        this.fs.ftruncateSync(this.fd, end);
      } catch (error) {
        throw toStorageError(error, this.file);
      }
    }
    const whole = end === buf.length ? buf : buf.subarray(0, end);
    this.bytes = end;
    let lines = 0;
    for (let i = whole.indexOf(10); i >= 0; i = whole.indexOf(10, i + 1)) if (i > 0 && whole[i - 1] !== 10) lines++;
    this.lines = lines;
    return whole;
  }

  /**
   * Append `text`: one or more complete lines (each ends with `\n`). Written when this returns;
   * under `power` fsynced at the end of the turn (see `durable`, `sync`). A write that fails
   * leaves no part of `text` behind and throws a `storage.*` error.
   */
  append(text: string): void {
    if (!text) return;
    if (this.closed) throw toStorageError(Object.assign(new Error("the journal is closed"), { code: "EBADF" }), this.file);
    const buf = Buffer.from(text);
    try {
      this.ensureOpen();
      // Before the write: a write that fails part way (cut back below) changed the file from here too.
      noteChanged(this.file, this.bytes);
      let n = 0;
      while (n < buf.length) n += this.fs.writeSync(this.fd, buf, n, buf.length - n);
    } catch (error) {
      // A part written is cut back off, so no torn line is left in the middle of the journal.
      try {
        this.fs.ftruncateSync(this.fd, this.bytes);
      } catch {}
      throw toStorageError(error, this.file);
    }
    this.bytes += buf.length;
    let lines = 0;
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lines++;
    this.lines += lines;
    if (syncsWrites()) {
      this.unsynced = true;
      if (this.options.closeAfterAppend) this.sync();
      else this.scheduleSync();
    }
    if (this.options.closeAfterAppend) this.closeFd();
  }

  /** Resolves once everything appended so far is as durable as `storage.durability` asks. */
  durable(): Promise<void> {
    if (!this.unsynced) return Promise.resolve();
    return this.scheduleSync();
  }

  /** fsync now what was appended (power; nothing under `process` or when nothing is pending). */
  sync(): void {
    if (!this.unsynced || this.fd < 0) return;
    try {
      this.fs.fsyncSync(this.fd);
    } catch (error) {
      throw toStorageError(error, this.file);
    }
    this.unsynced = false;
  }

  private scheduleSync(): Promise<void> {
    return this.turnSync.request();
  }

  /** Read `len` bytes at `off` (a record whose place the owner keeps). */
  readAt(off: number, len: number): Buffer {
    this.ensureOpen();
    const buf = Buffer.allocUnsafe(len);
    let n = 0;
    while (n < len) {
      const r = nodeFs.readSync(this.fd, buf, n, len - n, off + n);
      if (r === 0) throw new Error(`the journal ${this.file} ends early`);
      n += r;
    }
    return buf;
  }

  /** Drop the first `n` lines (they are in the snapshot now); later ones stay. */
  dropFirst(n: number): void {
    if (n <= 0) return;
    try {
      if (n >= this.lines) {
        this.truncate();
        return;
      }
      // Lines were appended while the snapshot was written: keep those (rare, small).
      const rest = splitLines(this.fs.readFileSync(this.file).toString("utf8")).slice(n);
      this.rewrite(rest);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw toStorageError(error, this.file);
      this.bytes = 0;
      this.lines = 0;
    }
  }

  /** Keep only the lines `keep` accepts (the file is replaced atomically). */
  retain(keep: (line: string) => boolean): void {
    const all = this.loadLines();
    const kept = all.filter(keep);
    if (kept.length === all.length) return;
    this.rewrite(kept);
  }

  /** Empty the journal (its lines are in a snapshot). */
  truncate(): void {
    try {
      if (this.fd < 0 && !this.fs.existsSync(this.file)) return;
      this.ensureOpen();
      noteChanged(this.file, 0);
      this.fs.ftruncateSync(this.fd, 0);
    } catch (error) {
      throw toStorageError(error, this.file);
    }
    this.bytes = 0;
    this.lines = 0;
  }

  private rewrite(lines: string[]): void {
    this.closeFd();
    const text = lines.map((l) => `${l}\n`).join("");
    writeFileAtomicSync(this.file, text);
    this.bytes = Buffer.byteLength(text);
    this.lines = lines.length;
  }

  /**
   * Fold the journal into the owner's snapshot: `write(lines)` writes a snapshot that holds at
   * least the first `lines` lines (those appended when it was called), then those lines are
   * dropped (unless it returns false: nothing was written). One fold at a time; a fold asked
   * for during one runs after it.
   */
  fold(write: (lines: number) => Promise<undefined | boolean | void>): Promise<void> {
    const run = async () => {
      const lines = this.lines;
      if (lines === 0 || this.closed) return;
      if ((await write(lines)) === false) return;
      this.dropFirst(lines);
    };
    const next = (this.folding ?? Promise.resolve()).then(run, run);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.folding = settled;
    void settled.then(() => {
      if (this.folding === settled) this.folding = null;
    });
    return next;
  }

  /** The fold on its way (settles, never rejects), or null. */
  folding: Promise<void> | null = null;

  /** Close the file (appends reopen it unless `final`). */
  close(final = false): void {
    this.closeFd();
    if (final) this.closed = true;
  }

  /** Remove the file (its lines are kept elsewhere, or the owner is gone). */
  remove(): void {
    this.closeFd();
    noteChanged(this.file, 0);
    nodeFs.rmSync(this.file, { force: true });
    this.bytes = 0;
    this.lines = 0;
    this.unsynced = false;
  }

  private closeFd(): void {
    if (this.fd >= 0) {
      // What was appended must not lose its fsync by the close.
      try {
        this.sync();
      } finally {
        this.fs.closeSync(this.fd);
        this.fd = -1;
      }
    }
  }

  /** Open the file now (created if missing, its name durable under power); appends open it when needed. */
  open(): void {
    try {
      this.ensureOpen();
    } catch (error) {
      throw toStorageError(error, this.file);
    }
  }

  private ensureOpen(): void {
    if (this.fd >= 0) return;
    const created = this.bytes === 0 && !this.fs.existsSync(this.file);
    if (created) this.fs.mkdirSync(dirname(this.file), { recursive: true });
    this.fd = this.fs.openSync(this.file, "a+", this.options.mode);
    // A new journal's name must survive a power cut before a line in it is acknowledged.
    if (created && syncsWrites()) syncDirSync(dirname(this.file));
  }

  /** Start a journal `<dir>/<prefix><gen>` (a generation), created and its name durable now. */
  static startGeneration(dir: string, prefix: string, gen: number, options: JournalOptions = {}): Journal {
    const journal = new Journal(join(dir, `${prefix}${gen}`), options);
    journal.open();
    return journal;
  }
}

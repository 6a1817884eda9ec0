/**
 * The journal of small actor files (README "Design notes", actor files): the durable write of an
 * actor file (`<id>.json`) or trace file (`<id>.traces`) is one line `<name>\t<contents>\n`
 * appended to `data/actors/index/files.journal.<gen>` (the file itself is in the actor's shard
 * folder, layout.ts), and every write of one event-loop turn, across
 * actors, shares one append (group commit). An append costs a few µs where replacing a file
 * (temp file + rename) costs about a millisecond on this disk, so 64 clients over many actors,
 * a sleep storm or a graceful stop cost one append per turn instead of a file per actor.
 *
 * In memory, `latest` says where the newest contents of each journaled file are (generation,
 * offset, length); reading a file reads that line, else the file itself. Once the journal
 * passes FOLD_BYTES, a new generation starts and the older one is folded into the files in the
 * background (a batch at a time, through the batch writer, off the main thread) and removed.
 * A turn that wrote at most DIRECT_MAX files (one actor) replaces them in place instead, unless
 * one of them is hot (HOT_WRITES: it stays in the journal while it is written that often), and
 * so do contents larger than INLINE_MAX (through the batch writer), each followed by a line with
 * empty contents that says the file is current again. A torn last line was never acknowledged: it is
 * ignored at load and cut off before the next append.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, unlinkSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { actorEntryPath, ensureDir, indexDir, stopMigration, sweepStaleTemps } from "./layout.js";
import { writeFileAtomicSync } from "../../store/atomic-file.js";
import { Journal, journalGenerations } from "../../store/journal.js";
import { batchFileWriter } from "./batch-writer.js";

/** Contents up to this many bytes are journaled; larger ones are written to their file. */
const INLINE_MAX = 64 * 1024;
/** A turn with at most this many files writes them in place (temp file + rename). */
const DIRECT_MAX = 4;
/**
 * ...unless one of them is hot: written more than this many times within a second (now or in
 * the second before). A hot actor's file then costs an append per turn, not a rename that holds
 * the event loop for about a millisecond every turn.
 */
const HOT_WRITES = 8;
/** The journal is folded into the files once a generation is larger than this. */
const FOLD_BYTES = 32 * 1024 * 1024;
/** Files folded per batch (then the event loop runs). */
const FOLD_BATCH = 128;
const PREFIX = "files.journal.";
/** The shards' stale temp files are swept this long after the start (not during it). */
const SWEEP_DELAY_MS = 5000;
/** The generations are read this long after the open at the latest. */
const LOAD_FALLBACK_MS = 10_000;

interface Where {
  gen: number;
  off: number;
  len: number;
}

interface Pending {
  name: string;
  produce: () => string | null;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class FileJournal {
  private readonly latest = new Map<string, Where>();
  /** The current generation: where this turn's lines are appended. */
  private journal: Journal | null = null;
  private gen = 0;
  private pending: Pending[] = [];
  private tombstones: string[] = [];
  private waiting: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private scheduled = false;
  private folding: Promise<void> | null = null;
  private closed = false;
  private closing = false;
  private loading: Promise<void> | null = null;
  private readonly since = Date.now() - 100;
  private loaded = false;
  private sweepTimer: NodeJS.Timeout | null = null;
  private loadError: Error | null = null;
  /** Read-only descriptors of older generations (a fold reads many lines of them). */
  private readonly oldFds = new Map<number, number>();
  /** Writes per file in turns of few files, this second and the one before (hot files). */
  private writes = new Map<string, number>();
  private writesBefore = new Map<string, number>();
  private writesSince = 0;

  /** Where the generations are (the actor files are in their shards of `dataDir`). */
  private readonly dir: string;

  private constructor(private readonly dataDir: string) {
    this.dir = indexDir(dataDir);
  }

  /** The path of the file `name` (`<id>.<ext>`); `make`: its shard folder is made if missing. */
  private pathOf(name: string, make = false): string {
    const p = actorEntryPath(this.dataDir, name);
    if (make) ensureDir(join(p, ".."));
    return p;
  }

  /**
   * Open the journal; its generations are read later, in the background: once the daemon is
   * ready (`startLoading`), or when first needed (`ready()`, a write), or LOAD_FALLBACK_MS
   * after the open. So a start is not held by them: writes wait for the load, and a read
   * before it reads the file.
   */
  static open(dataDir: string): FileJournal {
    const j = new FileJournal(dataDir);
    setTimeout(() => j.startLoading(), LOAD_FALLBACK_MS).unref();
    return j;
  }

  /** Start reading the generations (once). */
  startLoading(): Promise<void> {
    this.loading ??= this.load().then(
      () => {
        this.loaded = true;
        if (this.closing) return;
        this.sweepTimer = setTimeout(() => {
          this.sweepTimer = null;
          void sweepStaleTemps(
            this.dataDir,
            // Temp files changed since a little before the open may be this run's (file times are coarse).
            this.since,
            (file) => batchFileWriter.busy(file),
            () => this.closing,
          );
        }, SWEEP_DELAY_MS);
        this.sweepTimer.unref();
      },
      (error) => {
        this.loadError = error as Error;
        this.loaded = true;
      },
    );
    return this.loading;
  }

  /** Resolves once the journal was read (rejects if it could not be). */
  async ready(): Promise<void> {
    await this.startLoading();
    if (this.loadError) throw this.loadError;
  }

  /** The newest contents of `name` (journal or file); null when there are none. */
  read(name: string): string | null {
    const at = this.latest.get(name);
    if (at) return this.readAt(at);
    const file = this.pathOf(name);
    // Often absent (a new actor's traces): a failed read costs an error object, a stat does not.
    if (!existsSync(file)) return null;
    try {
      return readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  /** Whether the newest contents of `name` are in the journal (not yet in its file). */
  has(name: string): boolean {
    return this.latest.has(name);
  }

  /** Journal entries not yet folded into files. */
  get size(): number {
    return this.latest.size;
  }

  /**
   * Make what `produce` returns (called after this turn; null: nothing to write) the contents
   * of `name`; resolves once it is durable. One write per name at a time (callers chain them).
   */
  write(name: string, produce: () => string | null): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ name, produce, resolve, reject });
      this.schedule();
    });
  }

  /** `name` is removed (its file is removed by the caller): drop its entry; resolves once durable. */
  forget(name: string): Promise<void> {
    if (!this.latest.delete(name)) return Promise.resolve();
    return this.tombstone(name);
  }

  /**
   * Write what is pending, stop a fold in progress after its current batch (the next load
   * folds the rest: the older generations stay until then), and close the journal.
   */
  async close(): Promise<void> {
    await this.startLoading();
    while (this.scheduled || this.pending.length || this.tombstones.length) await new Promise((r) => setImmediate(r));
    this.closing = true;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    stopMigration(this.dataDir);
    await this.folding?.catch(() => undefined);
    this.closed = true;
    for (const fd of this.oldFds.values()) closeSync(fd);
    this.oldFds.clear();
    this.journal?.close(true);
  }

  private tombstone(name: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.tombstones.push(name);
      this.waiting.push({ resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    if (!this.loaded) {
      void this.startLoading().then(() => this.flush());
      return;
    }
    this.scheduled = false;
    const batch = this.pending;
    const stones = this.tombstones;
    const waiting = this.waiting;
    this.pending = [];
    this.tombstones = [];
    this.waiting = [];
    const parts: string[] = [];
    const placed: Array<[string, number, number]> = [];
    const done: Pending[] = [];
    const made: Array<[Pending, string]> = [];
    for (const p of batch) {
      try {
        const text = p.produce();
        if (text === null) p.resolve();
        else made.push([p, text]);
      } catch (error) {
        p.reject(error as Error);
      }
    }
    // A turn that wrote a few files (one hot actor) replaces them in place, on this thread:
    // the file stays the current copy and nothing has to be folded later.
    // (Not while a fold or a large write of the same file is on its way in the writer thread.)
    const direct =
      made.length <= DIRECT_MAX && !this.anyHot(made) && made.every(([p, text]) => text.length <= INLINE_MAX && !batchFileWriter.busy(this.pathOf(p.name)));
    const journal = this.journal;
    let off = journal?.bytes ?? 0;
    for (const [p, text] of made) {
      if (direct) {
        try {
          writeFileAtomicSync(this.pathOf(p.name, true), text);
        } catch (error) {
          p.reject(error as Error);
          continue;
        }
        if (this.latest.delete(p.name)) stones.push(p.name);
        done.push(p);
        continue;
      }
      const len = Buffer.byteLength(text);
      if (len > INLINE_MAX) {
        this.writeDirect(p, text);
        continue;
      }
      const head = Buffer.byteLength(p.name) + 1;
      parts.push(p.name, "\t", text, "\n");
      placed.push([p.name, off + head, len]);
      off += head + len + 1;
      done.push(p);
    }
    for (const name of stones) {
      parts.push(name, "\t\n");
      off += Buffer.byteLength(name) + 2;
    }
    if (parts.length === 0) {
      for (const p of done) p.resolve();
      for (const w of waiting) w.resolve();
      return;
    }
    try {
      if (this.closed) throw new Error("the actor file journal is closed");
      if (!journal) throw this.loadError ?? new Error("the actor file journal could not be read");
      journal.append(parts.join(""));
      // One fsync for every file of this turn (storage.durability: power), before they are acknowledged.
      journal.sync();
    } catch (error) {
      for (const p of done) p.reject(error as Error);
      for (const w of waiting) w.reject(error as Error);
      return;
    }
    for (const [name, o, len] of placed) this.latest.set(name, { gen: this.gen, off: o, len });
    for (const p of done) p.resolve();
    for (const w of waiting) w.resolve();
    if (!this.folding && journal.bytes > FOLD_BYTES) {
      this.folding = this.fold().finally(() => {
        this.folding = null;
      });
      this.folding.catch(() => undefined);
    }
  }

  /** Counts a write of each file; whether one of them is hot (HOT_WRITES). */
  private anyHot(made: Array<[Pending, string]>): boolean {
    const now = Date.now();
    if (now - this.writesSince >= 1000) {
      this.writesBefore = now - this.writesSince < 2000 ? this.writes : new Map();
      this.writes = new Map();
      this.writesSince = now;
    }
    let hot = false;
    for (const [p] of made) {
      const n = (this.writes.get(p.name) ?? 0) + 1;
      this.writes.set(p.name, n);
      if (n > HOT_WRITES || (this.writesBefore.get(p.name) ?? 0) > HOT_WRITES) hot = true;
    }
    return hot;
  }

  /** Large contents: their own file, then a line saying the file is current. */
  private writeDirect(p: Pending, text: string): void {
    batchFileWriter
      .write(this.pathOf(p.name, true), () => text)
      .then(() => {
        this.latest.delete(p.name);
        return this.tombstone(p.name);
      })
      .then(p.resolve, p.reject);
  }

  private readAt(at: Where): string {
    if (at.gen === this.gen && this.journal) return this.journal.readAt(at.off, at.len).toString("utf8");
    let fd = this.oldFds.get(at.gen);
    if (fd === undefined) {
      fd = openSync(join(this.dir, PREFIX + at.gen), "r");
      this.oldFds.set(at.gen, fd);
    }
    {
      const buf = Buffer.allocUnsafe(at.len);
      let n = 0;
      while (n < at.len) {
        const r = readSync(fd, buf, n, at.len - n, at.off + n);
        if (r === 0) throw new Error(`the actor file journal ${PREFIX}${at.gen} ends early`);
        n += r;
      }
      return buf.toString("utf8");
    }
  }

  /**
   * Start the next generation, write every file whose newest contents are in the older ones,
   * then remove them. A crash meanwhile leaves the older generations, replayed at the next load.
   */
  private async fold(): Promise<void> {
    // A current generation still empty (a fold that a stop interrupted started it, and nothing
    // was written since) is kept as the new one: starting another at every start would leave
    // one more empty file each time.
    const reuse = (this.journal?.bytes ?? 0) === 0 && this.gen > 0;
    const old = reuse ? this.gen - 1 : this.gen;
    if (!reuse) this.startGeneration(old + 1);
    const entries = [...this.latest].filter(([, at]) => at.gen <= old);
    for (let i = 0; i < entries.length; i += FOLD_BATCH) {
      if (this.closing) return;
      await Promise.all(
        entries.slice(i, i + FOLD_BATCH).map(async ([name, at]) => {
          if (this.latest.get(name) !== at) return;
          const text = this.readAt(at);
          await batchFileWriter.write(this.pathOf(name, true), () => (this.latest.get(name) === at ? text : null));
          if (this.latest.get(name) === at) this.latest.delete(name);
        }),
      );
    }
    for (const g of this.generations()) if (g <= old) unlinkQuietly(join(this.dir, PREFIX + g));
    for (const [g, fd] of this.oldFds) {
      if (g > old) continue;
      closeSync(fd);
      this.oldFds.delete(g);
    }
  }

  private startGeneration(gen: number): void {
    // The new generation's name survives a power cut before lines are acknowledged in it.
    const next = Journal.startGeneration(this.dir, PREFIX, gen);
    this.journal?.close(true);
    this.journal = next;
    this.gen = gen;
  }

  private generations(): number[] {
    return journalGenerations(this.dir, PREFIX);
  }

  /** Replay every generation in order (offsets only: contents are read when asked for). */
  private async load(): Promise<void> {
    const gens = this.generations();
    const last = gens[gens.length - 1];
    for (const g of gens) {
      // The newest generation takes the appends: loading it cuts a torn last line (never acknowledged).
      const current = g === last ? new Journal(join(this.dir, PREFIX + g)) : null;
      const buf = current ? await current.loadAsync() : await readFile(join(this.dir, PREFIX + g));
      let start = 0;
      for (let n = 1; ; n++) {
        if (n % 20_000 === 0) await new Promise((r) => setImmediate(r));
        const end = buf.indexOf(10, start);
        if (end < 0) break; // a torn last line: never acknowledged
        const tab = buf.indexOf(9, start);
        if (tab > start && tab < end) {
          const name = buf.toString("utf8", start, tab);
          if (end === tab + 1) this.latest.delete(name);
          else this.latest.set(name, { gen: g, off: tab + 1, len: end - tab - 1 });
        }
        start = end + 1;
      }
      if (current) {
        this.gen = g;
        current.open();
        this.journal = current;
      }
    }
    if (!this.journal) this.startGeneration(0);
    // Older generations not folded yet (a fold or a stop interrupted): fold them now, in the background.
    if (gens.length > 1 || this.journal!.bytes > FOLD_BYTES) {
      this.folding = this.fold().finally(() => {
        this.folding = null;
      });
      this.folding.catch(() => undefined);
    }
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {}
}

/**
 * The one way the daemon replaces a file: write `<file>.tmp` next to it, then rename it over the
 * file, so a crash or `kill -9` leaves the old or the new contents, never half of one. Every
 * file is written by one writer at a time (a DocStore, an actor's writer, the config queue),
 * which is what makes the fixed temp name safe; a `*.tmp` left by a crash is never read.
 *
 * Durability (README "Durable means"): under `storage.durability: process` a write is done once
 * the kernel has it, which survives the process but not a power cut; under `power` (or with
 * `fsync: true`: config.yaml and .env, rare writes of what the user typed) the temp file is
 * fsynced before the rename and the directory after it, so the rename itself survives too.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { copyFile, link, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { syncDir, syncDirSync, syncsWrites } from "./durability.js";
import { toStorageError } from "./storage-error.js";

export interface AtomicWriteOptions {
  /** fsync the new contents before the rename and the directory after it: true always, false never, unset as `storage.durability` says. */
  fsync?: boolean;
  /** The mode of a new file; an existing file keeps its own (config files: 0o600). */
  mode?: number;
  /**
   * A temp name of this write's own (`<file>.<pid>.<random>.tmp`), for a file that more than one
   * process or thread may replace at once (auth.json): a fixed name would let one writer rename
   * another's half-written temp file over the target.
   */
  uniqueTemp?: boolean;
}

export const tempFileOf = (file: string): string => `${file}.tmp`;

/**
 * The paths the daemon replaced, appended to or removed while a watch is open (a backup staging
 * the home, backup/stage.ts: it relinks these instead of listing every folder again). Every
 * write of the stores reports here: the atomic writes below, the journal kit's appends, the
 * actor file writer thread's renames (on their acknowledgement) and an actor's removal. In the
 * file writer thread this module has no watch open: the main thread reports for it.
 *
 * A file copied ahead of time (a journal the backup copies before its final turn) is `track`ed:
 * the watch then keeps the lowest offset at which any write changed it since (an append says
 * where it starts; a truncation, a replacement or a removal counts as offset 0 unless it says
 * the length it kept), so only the part from there on needs copying again.
 */
export class ChangeWatch {
  private paths = new Set<string>();
  private readonly lowest = new Map<string, number>();
  /** The paths changed since the last take (or the watch's start). */
  take(): Set<string> {
    const out = this.paths;
    this.paths = new Set();
    return out;
  }
  /** How many paths changed since the last take, without taking them. */
  pending(): number {
    return this.paths.size;
  }
  /** Keep, from now on, the lowest offset at which `path` changes (`lowestChange`). */
  track(path: string): void {
    this.lowest.set(path, Number.POSITIVE_INFINITY);
  }
  /**
   * The lowest offset at which the tracked `path` was written, truncated or replaced since
   * `track(path)` (0 for a replacement or removal); undefined when nothing reported a change.
   */
  lowestChange(path: string): number | undefined {
    const low = this.lowest.get(path);
    return low === undefined || low === Number.POSITIVE_INFINITY ? undefined : low;
  }
  close(): void {
    watches.delete(this);
  }
  /** @internal */
  note(path: string, offset: number): void {
    this.paths.add(path);
    const low = this.lowest.get(path);
    if (low !== undefined && offset < low) this.lowest.set(path, offset);
  }
}
const watches = new Set<ChangeWatch>();

/** Start recording the paths the daemon changes (until `close()`). */
export function watchChanges(): ChangeWatch {
  const w = new ChangeWatch();
  watches.add(w);
  return w;
}

/**
 * Report a path replaced, appended to or removed (a folder removed whole: its path). `from`: the
 * offset from which the file changed, for a write in place (an append: where it starts; a
 * truncation: the length kept); a file replaced or removed changed from 0.
 */
export function noteChanged(path: string, from = 0): void {
  if (watches.size) for (const w of watches) w.note(path, from);
}

/** Replace `file` with `text`; resolves once the rename is done. */
export function writeFileAtomic(file: string, text: string, options: AtomicWriteOptions = {}): Promise<void> {
  return writeFileAtomicChunks(file, [text], options);
}

/**
 * Replace `file` with the concatenation of `chunks`, written one at a time: a large file (the
 * actor index snapshot) is never one string in memory, and the event loop runs between chunks.
 */
export async function writeFileAtomicChunks(file: string, chunks: AsyncIterable<string> | Iterable<string>, options: AtomicWriteOptions = {}): Promise<void> {
  const tmp = options.uniqueTemp ? `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp` : tempFileOf(file);
  try {
    let mode: number | undefined;
    if (options.mode !== undefined) {
      mode = await stat(file).then(
        (st) => st.mode & 0o777,
        () => options.mode,
      );
      // A temp file left by a crash would keep its own mode: start from a new one.
      await unlink(tmp).catch(() => undefined);
    }
    const sync = options.fsync ?? syncsWrites();
    const handle = await open(tmp, "w", mode);
    try {
      // writeFile writes all of a chunk from the current position (write may write part of it).
      for await (const chunk of chunks) if (chunk) await handle.writeFile(chunk, "utf8");
      if (sync) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
    noteChanged(file);
    if (sync) await syncDir(dirname(file));
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw toStorageError(error, file);
  }
}

/**
 * The same, synchronously: for small files on the hot path, where the thread-pool round trips
 * of async fs cost more than the write itself (actor files, README "Actor write coalescing").
 */
export function writeFileAtomicSync(file: string, text: string, options: Pick<AtomicWriteOptions, "fsync"> & { syncDir?: boolean } = {}): void {
  const tmp = tempFileOf(file);
  const sync = options.fsync ?? syncsWrites();
  let fd: number;
  try {
    fd = openSync(tmp, "w");
  } catch (error) {
    throw toStorageError(error, file);
  }
  try {
    try {
      writeSync(fd, text);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    noteChanged(file);
    // `syncDir: false`: the caller syncs the directory once for a batch of files (the file writer thread).
    if (sync && options.syncDir !== false) syncDirSync(dirname(file));
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw toStorageError(error, file);
  }
}

/**
 * Keep the current contents of `file` as `<file>.bak` (before it is replaced): a hard link to
 * the inode the next atomic write renames away, so nothing is copied; a copy where the file
 * system has no hard links. Returns the backup's path, or null when there is no file yet.
 */
export async function keepBackup(file: string): Promise<string | null> {
  const bak = `${file}.bak`;
  const tmp = `${bak}.tmp`;
  try {
    await unlink(tmp).catch(() => undefined);
    try {
      await link(file, tmp);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw error;
      await copyFile(file, tmp);
    }
    await rename(tmp, bak);
    noteChanged(bak);
    return bak;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw toStorageError(error, bak);
  }
}

/** Read a text file; null when it does not exist. */
export async function readTextOrNull(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

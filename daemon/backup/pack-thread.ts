/**
 * Packs a staged home into the backup's `.tar.gz` off the daemon's event loop (backup.ts runs it
 * as a worker thread), then removes the staged tree.
 *
 * The staged tree no longer changes and holds only files and folders (stage.ts, links.ts), so
 * packing is plain synchronous reads (these threads have nothing else to serve): headers are
 * node-tar's (`Header`, `Pax` for long paths: the same entries `tar.create` with `portable`
 * wrote, read back by `agent import` through node-tar; the common ones written in place by
 * tar-header.ts, byte for byte the same; node-tar itself is loaded only for an entry that needs
 * it), gathered up to 4 MiB at a time, each batch compressed as a gzip member.
 * `tar.create` took 13 s for a 40,000-file home (docs/benchmarks.md): its per-entry streams and a
 * synchronous deflate call per small write dominated.
 *
 * Reading 200,000 small files and compressing them is CPU work of more than one core (`tar -czf`
 * has two: tar reads while gzip compresses). So the work is cut by folder: this thread hands
 * each folder (its own entry, its files; its subfolders become folders to hand out in turn) to
 * the next idle packing thread (one per core, at most PACKERS), which answers with the folder's
 * gzip members and its subfolders' names; this thread appends the members in the order the
 * folders were found, each folder before its subfolders (a tar's entries can be cut between any
 * two, and a `.gz` of several members is one stream to gzip, tar, Node and node-tar). Folders
 * handed out as they are found, to whichever thread is free, keep both busy to the end (the
 * earlier cut of one walk's list in two halves left one thread waiting for the other, and walked
 * the whole tree first on one thread).
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { parentPort, Worker, workerData } from "node:worker_threads";
import { gzipSync } from "node:zlib";
import { lowerThreadPriority, threadTimes } from "../thread-script.js";
import { writeTarHeader } from "./tar-header.js";

export interface PackRequest {
  /** The archive to write (created 0600). */
  file: string;
  /** The staged tree. */
  cwd: string;
  /** Its top-level entries to pack, in order. */
  entries: string[];
  /** Remove the staged tree once the archive is written (after the answer). */
  removeAfter: boolean;
  /** The deflate's level (1–9: faster to smaller; the config's `backup.compression_level`). */
  level: number;
}

/** Where one packing thread's time went (ms; cpu and wait from the kernel, null where it has no account). */
export interface PackStats {
  /** From the thread's start to its last answer. */
  wallMs: number;
  deflateMs: number;
  cpuMs: number | null;
  waitMs: number | null;
  entries: number;
  /** Bytes of tar before compression. */
  rawBytes: number;
}

/** The packing's answer: each packing thread's stats and the writing thread's. */
export interface PackAnswer {
  ok: boolean;
  message?: string;
  runs?: PackStats[];
  /** The thread that hands out the folders and writes the archive (its root's files packed there too). */
  main?: PackStats;
}

/** A packing thread's start: this script again, with `packer` set. */
interface PackerData {
  packer: true;
  cwd: string;
  level: number;
}
/** One folder to pack (relative to the staged tree, "" for the root with `names` its entries). */
interface FolderTask {
  index: number;
  rel: string;
  names?: string[];
}
type PackerAnswer = { index: number; members: Uint8Array[]; dirs: string[]; stats: PackStats } | { index: number; error: string };

// Bulk work: the event loop of the daemon goes first on a busy machine.
lowerThreadPriority();

/** Packing threads: one per core, at most 2. */
const PACKERS = Math.max(1, Math.min(2, availableParallelism()));

const BLOCK = 512;
/** Bytes gathered before they are compressed (one gzip member each). */
const BATCH = 4 << 20;

/** node-tar, loaded on the first entry that needs it (a long or non-ASCII path): most backups never do. */
let tarModule: typeof import("tar") | null = null;
const tar = () => {
  tarModule ??= createRequire(import.meta.url)("tar") as typeof import("tar");
  return tarModule;
};

/** node-tar's portable mode: owner read/write always, no group or other write; folders listable where readable. */
function portableMode(mode: number, dir: boolean): number {
  let m = ((mode & 0o7777) | 0o600) & ~0o22;
  if (dir) {
    if (m & 0o400) m |= 0o100;
    if (m & 0o40) m |= 0o10;
    if (m & 0o4) m |= 0o1;
  }
  return m;
}

/**
 * Packs folders as tar entries into gzip members (one per 4 MiB batch, and one at the end of
 * each folder), keeping count of where its time went.
 */
class FolderPacker {
  private buf = Buffer.allocUnsafe(BATCH);
  private used = 0;
  private members: Uint8Array[] = [];
  readonly stats: PackStats = { wallMs: 0, deflateMs: 0, cpuMs: null, waitMs: null, entries: 0, rawBytes: 0 };
  private readonly started = performance.now();
  private readonly times0 = threadTimes();

  constructor(
    private readonly cwd: string,
    private readonly level: number,
  ) {}

  /** The folder `rel`: its own entry (not for the root), its files; resolves with its subfolders' names and its members. */
  folder(rel: string, names?: string[]): { members: Uint8Array[]; dirs: string[] } {
    const dirs: string[] = [];
    const abs = rel === "" ? this.cwd : `${this.cwd}/${rel}`;
    const prefix = rel === "" ? "" : `${rel}/`;
    if (names === undefined) {
      // Folders: no time in a portable archive, as node-tar writes them.
      this.header(prefix, portableMode(statSync(abs).mode, true), 0, undefined, "Directory");
      this.stats.entries++;
      for (const d of readdirSync(abs, { withFileTypes: true })) {
        if (d.isDirectory()) dirs.push(d.name);
        else if (d.isFile()) this.file(prefix + d.name);
      }
    } else {
      for (const n of names) {
        const st = statSync(`${abs}/${n}`);
        if (st.isDirectory()) dirs.push(n);
        else if (st.isFile()) this.file(prefix + n);
      }
    }
    this.flush();
    const members = this.members;
    this.members = [];
    this.finish();
    return { members, dirs };
  }

  /** The stats brought up to now. */
  finish(): PackStats {
    const times1 = threadTimes();
    this.stats.wallMs = performance.now() - this.started;
    if (this.times0 && times1) {
      this.stats.cpuMs = times1.cpuMs - this.times0.cpuMs;
      this.stats.waitMs = times1.waitMs - this.times0.waitMs;
    }
    return this.stats;
  }

  /** The archive's end: two zero blocks, as a member of its own. */
  end(): Uint8Array {
    return gzipSync(Buffer.alloc(2 * BLOCK), { level: this.level });
  }

  /**
   * The batch so far as a gzip member: the deflate runs on this low-priority thread, not on the
   * thread pool the event loop's file calls share.
   */
  private flush(): void {
    if (!this.used) return;
    const t = performance.now();
    this.members.push(gzipSync(this.buf.subarray(0, this.used), { level: this.level }));
    this.stats.deflateMs += performance.now() - t;
    this.stats.rawBytes += this.used;
    this.used = 0;
  }

  /** Room for `n` more bytes in the batch (a larger buffer for one large header). */
  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  private header(path: string, mode: number, size: number, mtime: Date | undefined, type: "File" | "Directory"): void {
    this.room(BLOCK);
    // node-tar's bytes, written in place (tar-header.ts); node-tar itself for long or non-ASCII paths.
    if (writeTarHeader(this.buf, this.used, path, mode, size, mtime, type === "File" ? "0" : "5")) {
      this.used += BLOCK;
      return;
    }
    const { Header, Pax } = tar();
    const h = new Header({ path, mode, size, mtime, type });
    if (h.encode()) {
      const pax = new Pax({ path, mtime, size }).encode();
      this.room(pax.length);
      pax.copy(this.buf, this.used);
      this.used += pax.length;
    }
    this.room(BLOCK);
    h.block!.copy(this.buf, this.used);
    this.used += BLOCK;
  }

  private file(rel: string): void {
    const fd = openSync(`${this.cwd}/${rel}`, "r");
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return;
      this.stats.entries++;
      this.header(rel, portableMode(st.mode, false), st.size, st.mtime, "File");
      let left = st.size;
      while (left > 0) {
        if (this.used === this.buf.length) this.flush();
        const n = readSync(fd, this.buf, this.used, Math.min(left, this.buf.length - this.used), null);
        if (n === 0) {
          // Shorter than its size said (never for a staged file): zeros keep the archive readable.
          const pad = Math.min(left, this.buf.length - this.used);
          this.buf.fill(0, this.used, this.used + pad);
          this.used += pad;
          left -= pad;
          continue;
        }
        this.used += n;
        left -= n;
      }
      const pad = (BLOCK - (st.size % BLOCK)) % BLOCK;
      if (pad) {
        this.room(pad);
        this.buf.fill(0, this.used, this.used + pad);
        this.used += pad;
      }
    } finally {
      closeSync(fd);
    }
  }
}

/** A packing thread: folders in, their members and subfolders out. */
class Packer {
  private readonly worker: Worker;
  stats: PackStats | null = null;
  constructor(data: PackerData, onAnswer: (packer: Packer, answer: PackerAnswer) => void, onError: (error: Error) => void) {
    this.worker = new Worker(new URL(import.meta.url), { workerData: data });
    this.worker.on("message", (m: PackerAnswer) => onAnswer(this, m));
    this.worker.once("error", onError);
    this.worker.once("exit", (code) => onError(new Error(`a packing thread ended (exit ${code}) before it finished`)));
  }
  send(task: FolderTask): void {
    this.worker.postMessage(task);
  }
  async close(): Promise<void> {
    this.worker.removeAllListeners("exit");
    await this.worker.terminate();
  }
}

/**
 * Pack the staged tree into `file`: folders handed to the packing threads as they are found,
 * their members written in the order the folders were found. Resolves with each packing
 * thread's stats and this thread's own.
 */
async function pack({ file, cwd, entries, level }: PackRequest): Promise<{ runs: PackStats[]; main: PackStats }> {
  // 0600 from the first byte: the archive holds .env and every session.
  const fd = openSync(file, "w", 0o600);
  const packers: Packer[] = [];
  try {
    const write = (z: Uint8Array) => {
      for (let off = 0; off < z.length; ) off += writeSync(fd, z, off);
    };
    /** Folders in the order found; their members once packed (null: not yet). */
    const folders: string[] = [];
    const results: (Uint8Array[] | null)[] = [];
    let written = 0;
    // The root's top-level files are packed here (a few; the manifest among them), its folders handed out.
    const root = new FolderPacker(cwd, level);
    const top = root.folder("", entries);
    for (const z of top.members) write(z);
    folders.push(...top.dirs);
    if (folders.length) {
      await new Promise<void>((resolve, reject) => {
        let failed = false;
        const fail = (error: Error) => {
          if (!failed) reject(error);
          failed = true;
        };
        const idle: Packer[] = [];
        let next = 0;
        const dispatch = () => {
          while (idle.length && next < folders.length) {
            results.push(null);
            idle.pop()!.send({ index: next, rel: folders[next]! });
            next++;
          }
          if (idle.length === packers.length && next === folders.length) resolve();
        };
        const onAnswer = (p: Packer, m: PackerAnswer) => {
          if (failed) return;
          if ("error" in m) return fail(new Error(m.error));
          p.stats = m.stats;
          results[m.index] = m.members;
          for (const d of m.dirs) folders.push(`${folders[m.index]}/${d}`);
          // Written once every folder before it is: only the members of folders ahead are kept in memory.
          while (written < results.length && results[written] !== null) {
            for (const z of results[written]!) write(z);
            results[written] = [];
            written++;
          }
          idle.push(p);
          dispatch();
        };
        for (let i = 0; i < PACKERS; i++) packers.push(new Packer({ packer: true, cwd, level }, onAnswer, fail));
        idle.push(...packers);
        dispatch();
      });
    }
    write(root.end());
    const main = root.finish();
    return { runs: packers.map((p) => p.stats).filter((s): s is PackStats => s !== null), main };
  } finally {
    closeSync(fd);
    await Promise.all(packers.map((p) => p.close()));
  }
}

if (workerData && "packer" in (workerData as PackerData | PackRequest)) {
  const { cwd, level } = workerData as PackerData;
  const packer = new FolderPacker(cwd, level);
  parentPort?.on("message", (task: FolderTask) => {
    try {
      const { members, dirs } = packer.folder(task.rel, task.names);
      // Copied, not transferred: a small member may share its memory with other buffers (Node's pool).
      parentPort?.postMessage({ index: task.index, members, dirs, stats: packer.stats } satisfies PackerAnswer);
    } catch (error) {
      parentPort?.postMessage({ index: task.index, error: error instanceof Error ? error.message : String(error) } satisfies PackerAnswer);
    }
  });
} else if (workerData) {
  const request = workerData as PackRequest;
  try {
    const { runs, main } = await pack(request);
    parentPort?.postMessage({ ok: true, runs, main } satisfies PackAnswer);
    // After the answer: the daemon's reply does not wait for it. A staged tree left by a stop
    // meanwhile is removed by the next backup (backup.ts removeStaleStaging).
    if (request.removeAfter) rmSync(request.cwd, { recursive: true, force: true });
  } catch (error) {
    parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) } satisfies PackAnswer);
  }
}

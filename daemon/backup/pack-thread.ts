/**
 * Packs a staged home into the backup's `.tar.gz` off the daemon's event loop (backup.ts runs it
 * as a worker thread), then removes the staged tree.
 *
 * The staged tree no longer changes and holds only files and folders (stage.ts, links.ts), so
 * this is a plain walk with synchronous reads (this thread has nothing else to serve): headers
 * are node-tar's (`Header`, `Pax` for long paths: the same entries `tar.create` with `portable`
 * wrote, read back by `agent import` through node-tar; the common ones written in place by
 * tar-header.ts, byte for byte the same), gathered 4 MiB at a time, each batch
 * compressed here as a gzip member. This thread runs at a lower priority than the event loop.
 * `tar.create` took 13 s for a 40,000-file home where this takes about as long as `tar -czf`
 * (docs/benchmarks.md): its per-entry streams and a synchronous deflate call per small write
 * dominated.
 *
 * Reading 200,000 small files and compressing them is CPU work of one core (`tar -czf` has two:
 * tar reads while gzip compresses). So the walk's list of entries is cut in PARTS runs of about
 * as many entries; the first is packed here, the others each by a thread of its own (this script
 * again, `part` set) into gzip members kept in memory (the archive compresses 20:1 or so), which
 * are appended in order. A .gz of several members is one stream to gzip, tar, Node and node-tar,
 * and a tar's entries can be cut between any two of them: only the last run ends the archive.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { parentPort, Worker, workerData } from "node:worker_threads";
import { gzipSync } from "node:zlib";
import { Header, Pax } from "tar";
import { lowerThreadPriority } from "../thread-script.js";
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
}

/** A run of the walk's entries (folders end with `/`), packed by a thread of its own; answered with its gzip members. */
interface PartRequest {
  part: true;
  cwd: string;
  paths: string[];
  /** The last run: ends the archive. */
  last: boolean;
}

// Bulk work: the event loop of the daemon goes first on a busy machine.
lowerThreadPriority();

/** Runs packed at once: one per core, at most 2 (the walk's list and the kept members cost memory). */
const PARTS = Math.max(1, Math.min(2, availableParallelism()));
/** Fewer entries than this are packed in one run. */
const PART_MIN = 2000;

const BLOCK = 512;
/** Bytes gathered before they are compressed (one gzip member each). */
const BATCH = 4 << 20;

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

/** Every entry under `entries`, depth first, as the archive lists them (folders end with `/`). */
function walk(cwd: string, entries: string[]): string[] {
  const out: string[] = [];
  const visit = (rel: string, dir: boolean) => {
    if (!dir) {
      out.push(rel);
      return;
    }
    out.push(`${rel}/`);
    for (const d of readdirSync(join(cwd, rel), { withFileTypes: true })) visit(`${rel}/${d.name}`, d.isDirectory());
  };
  for (const e of entries) visit(e, statSync(join(cwd, e)).isDirectory());
  return out;
}

/**
 * Pack `paths` (relative to `cwd`, folders ending with `/`) as tar entries, each 4 MiB batch
 * handed to `emit` as a gzip member; `last`: the archive's end (two zero blocks) after them.
 */
function packPaths(cwd: string, paths: string[], last: boolean, emit: (member: Buffer) => void): void {
  let buf = Buffer.allocUnsafe(BATCH);
  let used = 0;
  /**
   * Each batch is compressed here, as a gzip member of its own: the deflate runs on this
   * low-priority thread, not on the thread pool the event loop's file calls share.
   */
  const flush = () => {
    if (!used) return;
    emit(gzipSync(buf.subarray(0, used)));
    used = 0;
  };
  /** Room for `n` more bytes in the batch (a larger buffer for one large header). */
  const room = (n: number) => {
    if (used + n <= buf.length) return;
    flush();
    if (n > buf.length) buf = Buffer.allocUnsafe(n);
  };
  const header = (path: string, mode: number, size: number, mtime: Date | undefined, type: "File" | "Directory") => {
    room(BLOCK);
    // node-tar's bytes, written in place (tar-header.ts); node-tar itself for long or non-ASCII paths.
    if (writeTarHeader(buf, used, path, mode, size, mtime, type === "File" ? "0" : "5")) {
      used += BLOCK;
      return;
    }
    const h = new Header({ path, mode, size, mtime, type });
    if (h.encode()) {
      const pax = new Pax({ path, mtime, size }).encode();
      room(pax.length);
      pax.copy(buf, used);
      used += pax.length;
    }
    room(BLOCK);
    h.block!.copy(buf, used);
    used += BLOCK;
  };
  const packFile = (rel: string, fd: number, st: import("node:fs").Stats) => {
    header(rel, portableMode(st.mode, false), st.size, st.mtime, "File");
    let left = st.size;
    while (left > 0) {
      if (used === buf.length) flush();
      const n = readSync(fd, buf, used, Math.min(left, buf.length - used), null);
      if (n === 0) {
        // Shorter than its size said (never for a staged file): zeros keep the archive readable.
        const pad = Math.min(left, buf.length - used);
        buf.fill(0, used, used + pad);
        used += pad;
        left -= pad;
        continue;
      }
      used += n;
      left -= n;
    }
    const pad = (BLOCK - (st.size % BLOCK)) % BLOCK;
    if (pad) {
      room(pad);
      buf.fill(0, used, used + pad);
      used += pad;
    }
  };
  for (const p of paths) {
    const dir = p.endsWith("/");
    const rel = dir ? p.slice(0, -1) : p;
    const fd = openSync(`${cwd}/${rel}`, "r");
    try {
      const st = fstatSync(fd);
      if (st.isFile() && !dir) packFile(rel, fd, st);
      // Folders: no time in a portable archive, as node-tar writes them.
      else if (st.isDirectory() && dir) header(p, portableMode(st.mode, true), 0, undefined, "Directory");
    } finally {
      closeSync(fd);
    }
  }
  if (last) {
    // The end of the archive: two zero blocks.
    room(2 * BLOCK);
    buf.fill(0, used, used + 2 * BLOCK);
    used += 2 * BLOCK;
  }
  flush();
}

/** Pack a run in a thread of its own (this script, `part` set): resolves with its gzip members. */
function packPartInThread(request: PartRequest): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: request });
    worker.once("message", (m: { ok: boolean; members?: Uint8Array[]; message?: string }) => {
      if (m.ok) resolve(m.members!.map((u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength)));
      else reject(new Error(m.message));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`a packing thread ended (exit ${code}) before it finished`)));
  });
}

async function pack({ file, cwd, entries }: PackRequest): Promise<void> {
  const paths = walk(cwd, entries);
  const parts = paths.length < PART_MIN ? 1 : PARTS;
  const size = Math.ceil(paths.length / parts);
  const runs = Array.from({ length: parts }, (_, i) => paths.slice(i * size, (i + 1) * size));
  const others = runs.slice(1).map((run, i) => packPartInThread({ part: true, cwd, paths: run, last: i === runs.length - 2 }));
  // Never left unhandled while the first run is packed here.
  for (const o of others) o.catch(() => undefined);
  // 0600 from the first byte: the archive holds .env and every session.
  const fd = openSync(file, "w", 0o600);
  try {
    const write = (z: Uint8Array) => {
      for (let off = 0; off < z.length; ) off += writeSync(fd, z, off);
    };
    packPaths(cwd, runs[0]!, runs.length === 1, write);
    for (const o of others) for (const z of await o) write(z);
  } finally {
    closeSync(fd);
  }
}

if ("part" in (workerData as PartRequest | PackRequest)) {
  const { cwd, paths, last } = workerData as PartRequest;
  try {
    const members: Buffer[] = [];
    packPaths(cwd, paths, last, (z) => members.push(z));
    // Copied, not transferred: a small member may share its memory with other buffers (Node's pool).
    parentPort?.postMessage({ ok: true, members });
  } catch (error) {
    parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
  }
} else {
  const request = workerData as PackRequest;
  try {
    await pack(request);
    parentPort?.postMessage({ ok: true });
    // After the answer: the daemon's reply does not wait for it. A staged tree left by a stop
    // meanwhile is removed by the next backup (backup.ts removeStaleStaging).
    if (request.removeAfter) rmSync(request.cwd, { recursive: true, force: true });
  } catch (error) {
    parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
  }
}

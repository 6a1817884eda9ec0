/**
 * Packs a staged home into the backup's `.tar.gz` off the daemon's event loop (backup.ts runs it
 * as a worker thread), then removes the staged tree.
 *
 * The staged tree no longer changes and holds only files and folders (stage.ts, links.ts), so
 * this is a plain walk with synchronous reads (this thread has nothing else to serve): headers
 * are node-tar's (`Header`, `Pax` for long paths: the same entries `tar.create` with `portable`
 * wrote, read back by `agent import` through node-tar), gathered 4 MiB at a time, each batch
 * compressed here as a gzip member. This thread runs at a lower priority than the event loop.
 * `tar.create` took 13 s for a 40,000-file home where this takes about as long as `tar -czf`
 * (docs/benchmarks.md): its per-entry streams and a synchronous deflate call per small write
 * dominated.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { lowerThreadPriority } from "../thread-script.js";
import { parentPort, workerData } from "node:worker_threads";
import { gzipSync } from "node:zlib";
import { Header, Pax } from "tar";

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

// Bulk work: the event loop of the daemon goes first on a busy machine.
lowerThreadPriority();

const { file, cwd, entries, removeAfter } = workerData as PackRequest;

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

function pack(): void {
  // 0600 from the first byte: the archive holds .env and every session.
  const fd = openSync(file, "w", 0o600);
  try {
    packInto(fd);
  } finally {
    closeSync(fd);
  }
}

function packInto(out: number): void {
  let buf = Buffer.allocUnsafe(BATCH);
  let used = 0;
  /**
   * Each batch is compressed here, as a gzip member of its own (a .gz of several members is one
   * stream to gzip, tar, Node and node-tar): the deflate runs on this low-priority thread, not
   * on the thread pool the event loop's file calls share.
   */
  const flush = () => {
    if (!used) return;
    const z = gzipSync(buf.subarray(0, used));
    for (let off = 0; off < z.length; ) off += writeSync(out, z, off);
    used = 0;
  };
  /** Room for `n` more bytes in the batch (a larger buffer for one large header). */
  const room = (n: number) => {
    if (used + n <= buf.length) return;
    flush();
    if (n > buf.length) buf = Buffer.allocUnsafe(n);
  };
  const header = (path: string, mode: number, size: number, mtime: Date | undefined, type: "File" | "Directory") => {
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
  const walk = (rel: string) => {
    const abs = join(cwd, rel);
    const fd = openSync(abs, "r");
    let st: import("node:fs").Stats;
    try {
      st = fstatSync(fd);
      if (st.isFile()) return packFile(rel, fd, st);
    } finally {
      closeSync(fd);
    }
    if (!st.isDirectory()) return;
    // Folders: no time in a portable archive, as node-tar writes them.
    header(`${rel}/`, portableMode(st.mode, true), 0, undefined, "Directory");
    for (const name of readdirSync(abs)) walk(`${rel}/${name}`);
  };
  for (const e of entries) walk(e);
  // The end of the archive: two zero blocks.
  room(2 * BLOCK);
  buf.fill(0, used, used + 2 * BLOCK);
  used += 2 * BLOCK;
  flush();
}

try {
  pack();
  parentPort?.postMessage({ ok: true });
  // After the answer: the daemon's reply does not wait for it. A staged tree left by a stop
  // meanwhile is removed by the next backup (backup.ts removeStaleStaging).
  if (removeAfter) rmSync(cwd, { recursive: true, force: true });
} catch (error) {
  parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
}

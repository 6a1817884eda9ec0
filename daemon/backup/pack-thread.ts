/**
 * Packs a staged home into the backup's `.tar.gz` off the daemon's event loop (backup.ts runs it
 * as a worker thread), then removes the staged tree.
 *
 * The staged tree no longer changes and holds only files and folders (stage.ts, links.ts), so
 * this is a plain walk with synchronous reads (this thread has nothing else to serve): headers
 * are node-tar's (`Header`, `Pax` for long paths: the same entries `tar.create` with `portable`
 * wrote, read back by `agent import` through node-tar), written into one large buffer at a
 * time that Node's gzip stream compresses on the thread pool. `tar.create` took 13 s for a
 * 40,000-file home where this takes about as long as `tar -czf` (docs/benchmarks.md): its
 * per-entry streams and a synchronous deflate call per small write dominated.
 */
import { closeSync, createWriteStream, fstatSync, openSync, readdirSync, readSync, rmSync } from "node:fs";
import { join } from "node:path";
import { once } from "node:events";
import { lowerThreadPriority } from "../thread-script.js";
import { parentPort, workerData } from "node:worker_threads";
import { createGzip } from "node:zlib";
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
/** Bytes gathered before they go to gzip. */
const BATCH = 1 << 20;

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

async function pack(): Promise<void> {
  const gzip = createGzip();
  const out = createWriteStream(file, { mode: 0o600 });
  const written = new Promise<void>((resolve, reject) => {
    out.once("finish", resolve);
    out.once("error", reject);
    gzip.once("error", reject);
  });
  gzip.pipe(out);
  let buf = Buffer.allocUnsafe(BATCH);
  let used = 0;
  const flush = async () => {
    if (!used) return;
    const chunk = buf.subarray(0, used);
    buf = Buffer.allocUnsafe(BATCH);
    used = 0;
    if (!gzip.write(chunk)) await once(gzip, "drain");
  };
  /** Room for `n` more bytes in the batch (a larger buffer for one large header). */
  const room = async (n: number) => {
    if (used + n <= buf.length) return;
    await flush();
    if (n > buf.length) buf = Buffer.allocUnsafe(n);
  };
  const header = async (path: string, mode: number, size: number, mtime: Date | undefined, type: "File" | "Directory") => {
    const h = new Header({ path, mode, size, mtime, type });
    if (h.encode()) {
      const pax = new Pax({ path, mtime, size }).encode();
      await room(pax.length);
      pax.copy(buf, used);
      used += pax.length;
    }
    await room(BLOCK);
    h.block!.copy(buf, used);
    used += BLOCK;
  };
  const packFile = async (rel: string, fd: number, st: import("node:fs").Stats) => {
    await header(rel, portableMode(st.mode, false), st.size, st.mtime, "File");
    let left = st.size;
    while (left > 0) {
      if (used === buf.length) await flush();
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
      await room(pad);
      buf.fill(0, used, used + pad);
      used += pad;
    }
  };
  const walk = async (rel: string) => {
    const abs = join(cwd, rel);
    const fd = openSync(abs, "r");
    let st: import("node:fs").Stats;
    try {
      st = fstatSync(fd);
      if (st.isFile()) return await packFile(rel, fd, st);
    } finally {
      closeSync(fd);
    }
    if (!st.isDirectory()) return;
    // Folders: no time in a portable archive, as node-tar writes them.
    await header(`${rel}/`, portableMode(st.mode, true), 0, undefined, "Directory");
    for (const name of readdirSync(abs)) await walk(`${rel}/${name}`);
  };
  for (const e of entries) await walk(e);
  // The end of the archive: two zero blocks.
  await room(2 * BLOCK);
  buf.fill(0, used, used + 2 * BLOCK);
  used += 2 * BLOCK;
  await flush();
  gzip.end();
  await written;
}

pack().then(
  () => {
    parentPort?.postMessage({ ok: true });
    // After the answer: the daemon's reply does not wait for it. A staged tree left by a stop
    // meanwhile is removed by the next backup (backup.ts removeStaleStaging).
    if (removeAfter) rmSync(cwd, { recursive: true, force: true });
  },
  (error: unknown) => parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) }),
);

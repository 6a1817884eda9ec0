/**
 * An import's file writes (import.ts, a fresh home), off the thread that inflates and parses the
 * archive: at 100k actors that is 200,000 exclusive creates, writes, times and closes, which took
 * most of an import on the one thread while it also parsed (docs/benchmarks.md). Batches are
 * done in the order they came, so a path that appears twice ends as its later entry, as with
 * tar. `state[0]` counts the batches done (the parser waits on it to keep at most a few batches
 * in memory); `state[1]` is set once a write failed: the rest is skipped and the error is the
 * answer to `end`.
 */
import { closeSync, constants as fsConstants, futimesSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { parentPort, workerData } from "node:worker_threads";

/**
 * A folder to make; a file to write whole (mode, modification time in ms); or a large file in
 * parts: `open`, its `write`s, `close` (its time), one after the other.
 */
export type ExtractOp =
  | { dir: string; mode: number }
  | { file: string; mode: number; mtime: number | null; data: Uint8Array }
  | { open: string; mode: number }
  | { write: Uint8Array }
  | { close: number | null };

export type ExtractMessage = { ops: ExtractOp[] } | { end: true };
export type ExtractReply = { end: true; error: { message: string; code?: string } | null };

export interface ExtractThreadData {
  root: string;
  state: SharedArrayBuffer;
}

if (parentPort) {
  const port = parentPort;
  const { root, state: shared } = workerData as ExtractThreadData;
  const state = new Int32Array(shared);
  const made = new Set<string>([root]);
  let failure: { message: string; code?: string } | null = null;

  const ensureDir = (d: string, mode = 0o755) => {
    if (made.has(d)) return;
    ensureDir(dirname(d));
    try {
      mkdirSync(d, { mode: mode | 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    made.add(d);
  };

  const open = (path: string, mode: number): number => {
    ensureDir(dirname(path));
    const flags = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL;
    try {
      return openSync(path, flags, mode);
    } catch (error) {
      // The same path twice in an archive: the later one wins, as with tar.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      unlinkSync(path);
      return openSync(path, flags, mode);
    }
  };
  const writeAll = (fd: number, data: Uint8Array) => {
    for (let off = 0; off < data.length; ) off += writeSync(fd, data, off);
  };
  const close = (fd: number, mtime: number | null) => {
    try {
      if (mtime !== null) futimesSync(fd, mtime / 1000, mtime / 1000);
    } finally {
      closeSync(fd);
    }
  };
  // The large file being written in parts.
  let current = -1;
  const apply = (op: ExtractOp) => {
    if ("dir" in op) ensureDir(op.dir, op.mode);
    else if ("file" in op) {
      const fd = open(op.file, op.mode);
      try {
        writeAll(fd, op.data);
      } catch (error) {
        closeSync(fd);
        throw error;
      }
      close(fd, op.mtime);
    } else if ("open" in op) current = open(op.open, op.mode);
    else if ("write" in op) writeAll(current, op.write);
    else {
      const fd = current;
      current = -1;
      close(fd, op.close);
    }
  };

  port.on("message", (m: ExtractMessage) => {
    if ("end" in m) {
      port.postMessage({ end: true, error: failure } satisfies ExtractReply);
      return;
    }
    if (!failure) {
      try {
        for (const op of m.ops) apply(op);
      } catch (error) {
        const e = error as NodeJS.ErrnoException;
        failure = { message: e.message, code: e.code };
        if (current >= 0) closeSync(current);
        current = -1;
        Atomics.store(state, 1, 1);
      }
    }
    Atomics.add(state, 0, 1);
    Atomics.notify(state, 0);
  });
}

/**
 * Where a thread's script is (a `node:worker_threads` Worker): the compiled JavaScript next to the module that starts it
 * (`dist/…`), or, when that module runs from source (tests under tsx), the build's copy of it.
 * A thread runs compiled code either way, so it starts without a TypeScript loader.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The script `name` (e.g. `pool-thread.js`) next to the module whose `import.meta.url` is `moduleUrl`. */
export function threadScript(moduleUrl: string, name: string): string {
  const here = fileURLToPath(moduleUrl);
  if (here.endsWith(".js")) return join(dirname(here), name);
  return join(SOURCE_ROOT, "dist", relative(SOURCE_ROOT, dirname(here)), name);
}

/**
 * Lower the calling thread's scheduling priority by `by` (Linux: the nice value of this thread alone;
 * `/proc/thread-self` names its id), so that on a busy machine the daemon's event loop gets the
 * CPU before bulk work in a thread (a backup's links and packing). Best effort: a no-op elsewhere.
 */
export function lowerThreadPriority(by = 10): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    // Relative to the daemon's own (a thread starts with its creator's), at most 19.
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + by));
  } catch {
    // Not Linux, or not allowed: the thread runs at the daemon's priority.
  }
}

/**
 * The calling thread's time on a core and waiting for one (ms, Linux: `/proc/thread-self/schedstat`),
 * for a backup's account of where its time went (a thread at a lower priority waits longer on a
 * busy machine). null elsewhere.
 */
export function threadTimes(): { cpuMs: number; waitMs: number } | null {
  try {
    const [cpu, wait] = readFileSync("/proc/thread-self/schedstat", "latin1").split(" ").map(Number);
    if (!Number.isFinite(cpu) || !Number.isFinite(wait)) return null;
    return { cpuMs: cpu! / 1e6, waitMs: wait! / 1e6 };
  } catch {
    return null;
  }
}

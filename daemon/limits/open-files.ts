/**
 * The daemon's file-descriptor budget (docs/limits.md). Node cannot raise RLIMIT_NOFILE itself,
 * so the daemon reads the limit it was started with and sizes its connection caps under it,
 * keeping the rest for what must never fail with EMFILE: its files (stores, journals, logs),
 * runner threads, model calls and child processes.
 */
import { openFileLimit } from "../../shared/process.js";

export { openFileLimit };

/** Assumed when the limit cannot be read (the usual default soft limit). */
const FALLBACK_LIMIT = 1024;
/** A budget this large is plenty for the connections of one home (and keeps the tables small). */
const CEILING = 1_000_000;

/**
 * Default caps: 40% of the descriptors for gateway connections, 20% for socket connections;
 * the other 40% (at least) stay for files and everything else. A configured cap (`> 0`) wins.
 */
export function connectionCaps(configured: { gateway: number; socket: number }, limit = openFileLimit()): { gateway: number; socket: number; nofile: number } {
  const nofile = Math.min(CEILING, limit?.soft ?? FALLBACK_LIMIT);
  return {
    gateway: configured.gateway > 0 ? configured.gateway : Math.max(16, Math.floor(nofile * 0.4)),
    socket: configured.socket > 0 ? configured.socket : Math.max(16, Math.floor(nofile * 0.2)),
    nofile,
  };
}

/**
 * Temp files a `kill -9` or a full disk left behind: the one atomic write (atomic-file.ts)
 * writes `<file>.tmp` and renames it; a crash between the two leaves it, and older versions
 * wrote `<file>.<pid>.<rand>.tmp`. At start, under the daemon lock, no write is on its way, so
 * every such file is stale. Only our names are removed (a data file's name plus `.tmp`), only
 * in the home's own folders: never in `actors/` (the user's code), `snapshots/` or `logs/`.
 * `data/actors/` is left to the actor storage, which sweeps its shard folders in the background
 * (layout.ts): listing 100k actors' files here would hold every start.
 */
import { readdirSync, unlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { isAlive } from "../../shared/process.js";

/** What the atomic write names its temp files: `<name>.<ext>.tmp`, or the old `<name>.<ext>.<pid>.<rand>.tmp`. */
const TEMP_RE = /^(?:.+\.(?:json|yaml|bak|wal)|\.env)(?:\.\d+\.[0-9a-z]+)?\.tmp$/i;
/**
 * What a lock file is written as before it is linked to its name (file-lock.ts):
 * `<name>.lock[.takeover].<pid>.<rand>.tmp`. Another process of the home (a CLI call, a kanban
 * worker) may be writing one now: only a dead pid's is removed.
 */
const LOCK_TEMP_RE = /\.(?:lock|takeover)\.(\d+)\.[0-9a-f]+\.tmp$/;
/** Folders of the home that hold no files the daemon writes atomically. */
const SKIP = new Set(["actors", "logs", "snapshots", "node_modules", ".git"]);
/** Folders below the home skipped the same way. */
const SKIP_PATHS = new Set([join("data", "actors")]);
const MAX_DEPTH = 6;

export function isOurTempName(name: string): boolean {
  return TEMP_RE.test(name) || LOCK_TEMP_RE.test(name);
}

/** Whether the temp file may be removed now: not a lock's being written by a live process. */
function staleNow(name: string): boolean {
  const lock = LOCK_TEMP_RE.exec(name);
  return !lock || !isAlive(Number(lock[1]));
}

/** Remove stale temp files under `home`; returns the paths removed. */
export function removeStaleTempFiles(home: string): string[] {
  const removed: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (depth < MAX_DEPTH && !(depth === 0 && SKIP.has(e.name)) && !SKIP_PATHS.has(relative(home, p))) walk(p, depth + 1);
      } else if (e.isFile() && isOurTempName(e.name) && staleNow(e.name)) {
        try {
          unlinkSync(p);
          removed.push(p);
        } catch {}
      }
    }
  };
  walk(home, 0);
  return removed;
}

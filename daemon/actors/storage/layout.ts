/**
 * The layout of `data/actors` (README "Design notes", actor files):
 *
 *   index/   the actor index (`index.json`, `index.journal.<gen>`) and the journal of small
 *            files (`files.journal.<gen>`): a start lists only this small folder
 *   <xx>/    the files of the actors whose id hashes to `xx` (two hex digits, 256 folders):
 *            `<id>.json`, `<id>.json.wal`, `<id>.json.bak`, `<id>.kv/`, `<id>.traces`
 *
 * so no folder holds more than a few thousand entries at 100k actors, a start never lists the
 * actors' files, and a backup walks small folders. A shard folder is made on first use.
 *
 * Homes of the older flat layout (everything directly in `data/actors`) are migrated from the
 * first start on (prepareActorLayout). Journal lines name files by `<id>.<ext>`, the same in
 * both layouts, so journals move as they are.
 */
import { copyFileSync, linkSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { syncDirSync, syncsWrites } from "../../store/durability.js";

export const INDEX_DIR = "index";
const INDEX_TMP = "index.tmp";
const SHARD_RE = /^[0-9a-f]{2}$/;
/** The index's and the file journal's own files (they live in `index/`). */
const INDEX_FILE_RE = /^(?:index\.json|index\.journal\.\d+|files\.journal\.\d+)$/;
/** An actor's own entries: `<id>.json`, `.json.wal`, `.json.bak`, `.kv`, `.traces`. */
const ACTOR_ENTRY_RE = /^([^.]+)\.(?:json|json\.wal|json\.bak|kv|traces)$/;
/** Temp files of the atomic write (`<file>.tmp`, older `<file>.<pid>.<rand>.tmp`). */
const TEMP_RE = /\.tmp$/;

/** The shard of an actor id: FNV-1a (32 bits) of its characters, low 8 bits, as two hex digits. */
export function shardOf(id: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h & 0xff).toString(16).padStart(2, "0");
}

/** The folder that holds the files of actor `id`. */
export function shardDir(dataDir: string, id: string): string {
  if (flatEntries.size) settle(dataDir, id);
  return join(dataDir, shardOf(id));
}

/** The folder of the index and journals. */
export function indexDir(dataDir: string): string {
  return join(dataDir, INDEX_DIR);
}

/** The path of a file named `<id>.<ext>` (as the file journal names them). */
export function actorEntryPath(dataDir: string, name: string): string {
  const dot = name.indexOf(".");
  return join(shardDir(dataDir, dot < 0 ? name : name.slice(0, dot)), name);
}

const madeDirs = new Set<string>();

/** Make sure the folder `dir` (a shard) exists; remembered, so it costs a set lookup after the first time. */
export function ensureDir(dir: string): string {
  if (madeDirs.has(dir)) return dir;
  try {
    mkdirSync(dir);
    if (syncsWrites()) syncDirSync(join(dir, ".."));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  madeDirs.add(dir);
  return dir;
}

/** The shard folder of actor `id`, made if missing. */
export function ensureShardDir(dataDir: string, id: string): string {
  return ensureDir(shardDir(dataDir, id));
}

/** Actor entries of the flat layout still to move, per data dir: actor id → entry names. */
const flatEntries = new Map<string, Map<string, string[]>>();
/** Actors moved per turn by the background migration. */
const MIGRATE_BATCH = 100;

/** Move the flat entries of actor `id` into its shard now (before any path of it is used). */
function settle(dataDir: string, id: string): void {
  const left = flatEntries.get(dataDir);
  const names = left?.get(id);
  if (!left || !names) return;
  left.delete(id);
  if (left.size === 0) flatEntries.delete(dataDir);
  const dir = ensureDir(join(dataDir, shardOf(id)));
  for (const n of names) {
    try {
      renameSync(join(dataDir, n), join(dir, n));
    } catch {
      // Gone meanwhile (removed with its actor): nothing to move.
    }
  }
  if (syncsWrites()) syncDirSync(dir);
}

/** Move every flat entry left now (the index is being rebuilt from the actor files). */
export function settleAll(dataDir: string): void {
  const left = flatEntries.get(dataDir);
  if (left) for (const id of [...left.keys()]) settle(dataDir, id);
}

/**
 * Make `dataDir` of the current layout. A current home costs one listing of at most 258
 * entries. A flat home: the index and journal files are linked into `index.tmp/`, which is
 * renamed to `index/` (the commit), then their flat names are removed; the actors' entries are
 * moved into their shards in the background, in batches, and any actor used before is moved
 * first (every path of an actor is asked for here). A start that finds flat entries left (a
 * stop or a crash meanwhile) lists them and goes on. Returns the number of actors left to move.
 */
export function prepareActorLayout(dataDir: string): number {
  mkdirSync(dataDir, { recursive: true });
  const names = readdirSync(dataDir);
  const hasIndex = names.includes(INDEX_DIR);
  const flat = names.filter((n) => n !== INDEX_DIR && n !== INDEX_TMP && !SHARD_RE.test(n));
  flatEntries.delete(dataDir);
  if (hasIndex && flat.length === 0) return 0;
  const indexFiles = flat.filter((n) => INDEX_FILE_RE.test(n));
  if (!hasIndex) {
    const tmp = join(dataDir, INDEX_TMP);
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp);
    for (const n of indexFiles) {
      try {
        linkSync(join(dataDir, n), join(tmp, n));
      } catch {
        copyFileSync(join(dataDir, n), join(tmp, n));
      }
    }
    if (syncsWrites()) syncDirSync(tmp);
    renameSync(tmp, join(dataDir, INDEX_DIR));
    if (syncsWrites()) syncDirSync(dataDir);
  }
  // Committed (now or by an earlier start that stopped before removing the flat names).
  for (const n of indexFiles) unlinkSync(join(dataDir, n));
  const left = new Map<string, string[]>();
  for (const n of flat) {
    if (TEMP_RE.test(n)) {
      // A stale temp file: no write is on its way before the daemon opened its stores.
      rmSync(join(dataDir, n), { recursive: true, force: true });
      continue;
    }
    const m = ACTOR_ENTRY_RE.exec(n);
    if (!m || INDEX_FILE_RE.test(n)) continue;
    const list = left.get(m[1]!);
    if (list) list.push(n);
    else left.set(m[1]!, [n]);
  }
  if (left.size === 0) return 0;
  flatEntries.set(dataDir, left);
  const step = () => {
    if (flatEntries.get(dataDir) !== left) return; // done, or a newer start of this data dir took over
    let n = 0;
    for (const id of left.keys()) {
      settle(dataDir, id);
      if (++n === MIGRATE_BATCH) break;
    }
    if (left.size) setImmediate(step).unref();
  };
  setTimeout(step, 1000).unref();
  return left.size;
}

/** Stop moving flat entries in the background (the data dir is closed): the next start goes on. */
export function stopMigration(dataDir: string): void {
  flatEntries.delete(dataDir);
}

/**
 * Remove the temp files a crash left in the shards, in the background (the start does not list
 * them). A temp file changed since `since` (this run's start) may belong to a write on its way
 * and is kept; so is one whose file `busy` says is being written elsewhere (a writer thread).
 * The check and the removal of one file happen in one turn, so no write of this thread starts
 * between them. Stops when `stopped()` says so. Returns the number of files removed.
 */
export async function sweepStaleTemps(dataDir: string, since: number, busy: (file: string) => boolean, stopped: () => boolean): Promise<number> {
  let removed = 0;
  const sweep = (dir: string, names: string[]) => {
    for (const n of names) {
      if (!TEMP_RE.test(n)) continue;
      const p = join(dir, n);
      try {
        const st = lstatSync(p);
        if (!st.isFile() || st.ctimeMs >= since || busy(p.slice(0, -".tmp".length))) continue;
        unlinkSync(p);
        removed++;
      } catch {}
    }
  };
  let shards: string[];
  try {
    shards = (await readdir(dataDir)).filter((n) => SHARD_RE.test(n));
  } catch {
    return 0;
  }
  for (const s of shards) {
    if (stopped()) break;
    const dir = join(dataDir, s);
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    if (stopped()) break;
    sweep(
      dir,
      entries.filter((e) => e.isFile()).map((e) => e.name),
    );
    // The KV folders of this shard: bucket files are written atomically too.
    for (const e of entries) {
      if (stopped() || !e.isDirectory() || !e.name.endsWith(".kv")) continue;
      try {
        sweep(join(dir, e.name), await readdir(join(dir, e.name)));
      } catch {}
    }
  }
  return removed;
}

/**
 * What the staging of a backup (stage.ts) and its link thread (link-thread.ts) both decide:
 * which files are linked rather than copied, and when a folder's time can be trusted.
 */
import { type Dirent, linkSync, readdirSync } from "node:fs";
import { join, sep } from "node:path";
import { nameGroup } from "./tar-members.js";

/**
 * Files the daemon only ever replaces by rename (atomic-file.ts, the batch writer), never writes
 * in place: an actor's `<id>.json`, `<id>.json.bak`, `<id>.traces` and KV buckets in its shard
 * folder (`data/actors/<xx>/`, see actors/storage/layout.ts), and the two large snapshots, the
 * actor index (`data/actors/index/index.json`) and the session-search index
 * (`data/agent/search/index.json`), each written by `writeFileAtomicChunks` only. A hard link to
 * one of them keeps its contents of this instant even after the daemon replaces the file.
 * Everything else (journals, which are appended to; logs; other stores) is copied.
 */
const RENAMED_ONLY =
  /^data\/(?:actors\/[0-9a-f]{2}\/[^/]+(?:\.json|\.json\.bak|\.traces|\.kv\/[^/]+\.json(?:\.bak)?)|actors\/index\/index\.json|agent\/search\/index\.json)$/;
export const renamedOnly = (rel: string): boolean => RENAMED_ONLY.test(sep === "/" ? rel : rel.split(sep).join("/"));

/**
 * A folder (or file) changed less than this long before it was listed (or copied) is looked at
 * again in the final turn: times are as coarse as the kernel's clock tick, so a change in the
 * same tick as the listing would not move them.
 */
export const FRESH_NS = 2_000_000_000n;

/** Whether a time (ns) is too recent to tell a later change by. */
export const isFresh = (timeNs: bigint): boolean => BigInt(Date.now()) * 1_000_000n - timeNs < FRESH_NS;

/**
 * Link the rename-only files of the folder `rel` in the groups `groups` (of `k`, nameGroup)
 * that are not staged yet: a folder packed early is not linked (link-thread.ts), and a group of
 * it one of whose files changed since is packed again from the staged tree, which must then
 * hold all the group's files as of the final turn. Returns the names linked.
 */
export function linkGroups(home: string, staging: string, rel: string, k: number, groups: Set<number>): string[] {
  const src = join(home, rel);
  const dst = join(staging, rel);
  let entries: Dirent[];
  try {
    entries = readdirSync(src, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const prefix = rel === "" ? "" : `${rel}${sep}`;
  const linked: string[] = [];
  for (const d of entries) {
    if (!d.isFile() || !groups.has(nameGroup(d.name, k)) || !renamedOnly(prefix + d.name)) continue;
    try {
      linkSync(`${src}${sep}${d.name}`, `${dst}${sep}${d.name}`);
      linked.push(d.name);
    } catch (error) {
      // Gone since the listing, or staged already (the staging's own relink of a changed file).
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "EEXIST") throw error;
    }
  }
  return linked;
}

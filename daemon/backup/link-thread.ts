/**
 * The staging's bulk work for a backup (stage.ts), off the daemon's event loop: listing the
 * home's folders, making the hard links of their rename-only files (at 100k actors 200,000
 * links; done on the main thread, the listing's strings and the messages carrying each path
 * made a young collection every 25 ms there), and copying ahead the large files written in place.
 *
 * - `folder`: note the folder's time (before listing it), make its staged copy (with its mode),
 *   list it, link its rename-only files (stage-rules.ts; one gone meanwhile is not linked), and
 *   answer with the rest by kind. Never consulted: the caller's skip rules for rename-only
 *   files, which no rule names (they are actor files and index snapshots).
 * - `copy`: copy a file (copy_file_range where the kernel has it) and answer with what the final
 *   turn needs to tell whether it changed since.
 * Any other error (EXDEV, EPERM: no hard links here) is the answer.
 */
import { copyFileSync, type Dirent, linkSync, mkdirSync, readdirSync, rmdirSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { lowerThreadPriority, threadTimes } from "../thread-script.js";
import type { EarlyPack } from "./pack-thread.js";
import { isFresh, linkGroups, renamedOnly } from "./stage-rules.js";
import { FolderPacker, groupCount } from "./tar-members.js";

/** Where this thread sends each folder it staged, packed (the backup's packing thread), and at which deflate level. */
export interface LinkThreadData {
  /** `busy[0]` set: the home is being written to, folders are linked, not packed (stage.ts). */
  early?: { port: MessagePort; level: number; busy: Int32Array };
}

export type LinkRequest =
  | { id: number; op: "folder"; home: string; staging: string; rel: string; pack: boolean }
  | { id: number; op: "copy"; src: string; dst: string }
  | { id: number; op: "times" }
  | { id: number; op: "group"; home: string; staging: string; rel: string; k: number; groups: number[] };

export interface FolderListing {
  /** The folder's modification time, noted before the listing. */
  mtime: bigint;
  /** Changed too recently for its time to tell a later change. */
  fresh: boolean;
  /** Rename-only files linked. */
  linked: number;
  /**
   * Packed (its rename-only files in this many groups, sent to the packing thread) instead of
   * linked, unless unset: the staging links a group's files only once one of them changes
   * (`group`), and the packing thread packs only those groups again.
   */
  k?: number;
  /** Other files (to copy), folders and other entries (links, sockets), by name. */
  copies: string[];
  dirs: string[];
  others: string[];
}

export interface CopyAhead {
  /** The file's inode before and after the copy (the same file only if equal). */
  ino: bigint;
  inoAfter: bigint;
  /** Bytes copied. */
  size: number;
  /** The file's times and size before the copy: equal in the final turn, and not fresh, means unchanged. */
  mtimeNs: bigint;
  ctimeNs: bigint;
  sizeBefore: number;
  fresh: boolean;
}

export type LinkAnswer =
  | { id: number; folder: FolderListing | null }
  | { id: number; copy: CopyAhead | null }
  | { id: number; times: { cpuMs: number; waitMs: number } | null }
  | { id: number; grouped: number }
  | { id: number; error: { code?: string; message: string } };

// Bulk work: the event loop of the daemon goes first on a busy machine.
lowerThreadPriority();

const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";

const early = (workerData as LinkThreadData | null)?.early;
let packer: FolderPacker | null = null;

/**
 * Pack the rename-only files `names` of the folder `rel`, read from the home (a file replaced
 * since the listing is read as it is now, and one removed is left out: either change is the
 * staging's to see, in the watch or in the folder's time), and send them to the packing thread.
 * Undefined (nothing sent): not packed, the caller links them instead.
 */
function packEarly(home: string, rel: string, names: string[]): { k: number; files: number } | undefined {
  if (!early) return undefined;
  try {
    packer ??= new FolderPacker(home, early.level, true);
    const k = groupCount(names.length);
    const packed = packer.folder(rel, k, undefined, { files: names, dirs: [] });
    early.port.postMessage({ rel, k, head: packed.head, groups: packed.groups, files: packed.files } satisfies EarlyPack);
    return { k, files: packed.files.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

/** null: the folder is gone (removed since its parent was listed). */
function folder(home: string, staging: string, rel: string, pack: boolean): FolderListing | null {
  const src = join(home, rel);
  const dst = join(staging, rel);
  let mtimeNs: bigint;
  let mode: bigint;
  try {
    ({ mtimeNs, mode } = statSync(src, { bigint: true }));
  } catch (error) {
    if (rel !== "" && missing(error)) return null;
    throw error;
  }
  // With the folder's own mode (logs/ is 0700), which the archive keeps; always the owner's to fill.
  mkdirSync(dst, { mode: Number(mode & 0o777n) | 0o700 });
  let entries: Dirent[];
  try {
    entries = readdirSync(src, { withFileTypes: true });
  } catch (error) {
    if (rel === "" || !missing(error)) throw error;
    rmdirSync(dst);
    return null;
  }
  const out: FolderListing = { mtime: mtimeNs, fresh: isFresh(mtimeNs), linked: 0, copies: [], dirs: [], others: [] };
  // Plain concatenation (`join` normalizes every path: a tenth of this thread's time).
  const prefix = rel === "" ? "" : `${rel}${sep}`;
  const renamed: string[] = [];
  for (const d of entries) {
    if (d.isDirectory()) out.dirs.push(d.name);
    else if (!d.isFile()) out.others.push(d.name);
    else if (!renamedOnly(prefix + d.name)) out.copies.push(d.name);
    else renamed.push(d.name);
  }
  // Packed now instead of linked (not the root: the packing thread packs it, with the manifest).
  const packed = rel === "" || !pack || (early && Atomics.load(early.busy, 0) !== 0) ? undefined : packEarly(home, rel, renamed);
  if (packed) {
    out.k = packed.k;
    out.linked = packed.files;
    return out;
  }
  for (const name of renamed) {
    try {
      linkSync(`${src}${sep}${name}`, `${dst}${sep}${name}`);
      out.linked++;
    } catch (error) {
      // Gone since the listing: the folder's time moved, so the final turn lists it again
      // (or, in a watched folder, the watch has its removal).
      if (!missing(error)) throw error;
    }
  }
  return out;
}

/** null: the file is gone. */
function copyAhead(src: string, dst: string): CopyAhead | null {
  try {
    const before = statSync(src, { bigint: true });
    copyFileSync(src, dst);
    const size = statSync(dst).size;
    const after = statSync(src, { bigint: true });
    return {
      ino: before.ino,
      inoAfter: after.ino,
      size,
      mtimeNs: before.mtimeNs,
      ctimeNs: before.ctimeNs,
      sizeBefore: Number(before.size),
      fresh: isFresh(before.ctimeNs) || isFresh(before.mtimeNs),
    };
  } catch (error) {
    if (missing(error)) return null;
    throw error;
  }
}

parentPort?.on("message", (m: LinkRequest) => {
  try {
    if (m.op === "folder") parentPort?.postMessage({ id: m.id, folder: folder(m.home, m.staging, m.rel, m.pack) } satisfies LinkAnswer);
    else if (m.op === "times") parentPort?.postMessage({ id: m.id, times: threadTimes() } satisfies LinkAnswer);
    else if (m.op === "group")
      parentPort?.postMessage({ id: m.id, grouped: linkGroups(m.home, m.staging, m.rel, m.k, new Set(m.groups)).length } satisfies LinkAnswer);
    else parentPort?.postMessage({ id: m.id, copy: copyAhead(m.src, m.dst) } satisfies LinkAnswer);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    parentPort?.postMessage({ id: m.id, error: { code: e.code, message: e.message } } satisfies LinkAnswer);
  }
});

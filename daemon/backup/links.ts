/**
 * Symbolic links in a home being backed up (docs/backup.md "Links"): a link is followed, so a
 * skill symlinked from a dotfiles folder is in the archive as the files it points at, wherever
 * they are. Following is bounded: a folder already on the way down (a loop) is not entered
 * again, and everything followed in one backup together stays under a cap of bytes and files;
 * a link that would pass it is left out whole. What is left out, and why, is reported.
 */
import type { Dirent } from "node:fs";
import { copyFile, lstat, mkdir, readdir, readlink, realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";
import { removeTree } from "./stage.js";

export interface FollowLimits {
  maxBytes: number;
  maxFiles: number;
}
export const DEFAULT_FOLLOW_LIMITS: Readonly<FollowLimits> = Object.freeze({ maxBytes: 1024 ** 3, maxFiles: 100_000 });

export interface Skipped {
  path: string;
  reason: string;
}

class OverCap extends Error {}

/**
 * Copy what each entry of `rels` (relative to `home`: links and other non-files the staging left
 * out) points at into `staging`. Resolves with the files copied, the links followed and what was skipped.
 */
export async function followLinks(
  home: string,
  staging: string,
  rels: string[],
  limits: FollowLimits = DEFAULT_FOLLOW_LIMITS,
  /** Folders (real paths) never entered, with the reason reported: the backups folder, where the staging is. */
  exclude: { path: string; reason: string }[] = [],
): Promise<{ files: number; followed: string[]; skipped: Skipped[] }> {
  let files = 0;
  let bytes = 0;
  const followed: string[] = [];
  const skipped: Skipped[] = [];
  const realHome = await realpath(home).catch(() => home);
  // Never entered, whoever links to them: the staging being written (a link to the backups
  // folder would copy the copy into itself), and the kernel's pseudo file systems, whose files
  // can be endless or block a read (/proc/kmsg).
  const fence: Fence = (real) => {
    for (const e of exclude) if (real === e.path || real.startsWith(`${e.path}${sep}`)) return e.reason;
    for (const f of SYSTEM_FOLDERS) if (real === f || real.startsWith(`${f}/`)) return `a link into ${f}, a system folder`;
    return null;
  };
  for (const rel of rels.sort()) {
    const src = join(home, rel);
    const dst = join(staging, rel);
    let ls: import("node:fs").Stats;
    try {
      ls = await lstat(src);
    } catch {
      continue; // gone since the staging
    }
    if (!ls.isSymbolicLink()) {
      skipped.push({ path: rel, reason: `a ${kind(ls)}, not a file or folder` });
      continue;
    }
    const to = await readlink(src).catch(() => "?");
    let real: string;
    let st: import("node:fs").Stats;
    try {
      real = await realpath(src);
      st = await stat(real);
    } catch {
      skipped.push({ path: rel, reason: `a link to ${to}, which does not exist` });
      continue;
    }
    const fenced = fence(real);
    if (fenced) {
      skipped.push({ path: rel, reason: fenced });
      continue;
    }
    // The folders the link is in (the home and those under it down to the link) are on the way
    // down: a link to one of them is a loop, and so is a link into a folder that holds the home.
    const ancestors = new Set([realHome]);
    const parts = rel.split(sep).slice(0, -1);
    for (let i = 1; i <= parts.length; i++) ancestors.add(await realpath(join(home, ...parts.slice(0, i))).catch(() => join(home, ...parts.slice(0, i))));
    if (st.isDirectory() && ancestors.has(real)) {
      skipped.push({ path: rel, reason: "a link to a folder it is inside of (a loop)" });
      continue;
    }
    const before = { files, bytes, skipped: skipped.length };
    const count = (size: number) => {
      files++;
      bytes += size;
      if (files > limits.maxFiles || bytes > limits.maxBytes) throw new OverCap();
    };
    try {
      if (st.isFile()) {
        count(st.size);
        await copyFile(real, dst);
      } else if (st.isDirectory()) {
        await copyTree(real, dst, new Set([...ancestors, real]), rel, count, skipped, fence);
      } else {
        skipped.push({ path: rel, reason: `a link to ${to}, a ${kind(st)}` });
        continue;
      }
      followed.push(`${rel} -> ${to}`);
    } catch (error) {
      await removeTree(dst).catch(() => undefined);
      // Dropped whole: what was skipped inside it is not reported, only the link.
      ({ files, bytes } = before);
      skipped.length = before.skipped;
      skipped.push({
        path: rel,
        reason:
          error instanceof OverCap
            ? `a link to ${to}, which holds more than the cap for followed links (${limits.maxFiles} files, ${Math.round(limits.maxBytes / 1024 ** 2)} MiB in one backup)`
            : `a link to ${to}, which could not be read: ${(error as Error).message}`,
      });
    }
  }
  return { files, followed, skipped };
}

function kind(st: import("node:fs").Stats): string {
  return st.isSocket() ? "socket" : st.isFIFO() ? "named pipe" : st.isCharacterDevice() || st.isBlockDevice() ? "device" : "special file";
}

/** Copy the folder `src` (a real path) to `dst`, following links inside it, never into a folder on the way down. */
type Fence = (real: string) => string | null;
const SYSTEM_FOLDERS = ["/proc", "/sys", "/dev"];

async function copyTree(
  src: string,
  dst: string,
  ancestors: Set<string>,
  rel: string,
  count: (size: number) => void,
  skipped: Skipped[],
  fence: Fence,
): Promise<void> {
  await mkdir(dst, { mode: 0o700 });
  let entries: Dirent[];
  try {
    entries = await readdir(src, { withFileTypes: true });
  } catch (error) {
    skipped.push({ path: rel, reason: `could not be read: ${(error as Error).message}` });
    return;
  }
  for (const d of entries) {
    const s = join(src, d.name);
    const r = join(rel, d.name);
    let real = s;
    let st: import("node:fs").Stats;
    try {
      if (d.isSymbolicLink()) real = await realpath(s);
      st = await stat(real);
    } catch {
      skipped.push({ path: r, reason: `a link to ${await readlink(s).catch(() => "?")}, which does not exist` });
      continue;
    }
    const fenced = fence(real);
    if (fenced) {
      skipped.push({ path: r, reason: fenced });
      continue;
    }
    if (st.isDirectory()) {
      if (ancestors.has(real)) {
        skipped.push({ path: r, reason: "a link to a folder it is inside of (a loop)" });
        continue;
      }
      await copyTree(real, join(dst, d.name), new Set([...ancestors, real]), r, count, skipped, fence);
    } else if (st.isFile()) {
      count(st.size);
      await copyFile(real, join(dst, d.name));
    } else skipped.push({ path: r, reason: `a ${kind(st)}, not a file or folder` });
  }
}

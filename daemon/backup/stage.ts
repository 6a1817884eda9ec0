/**
 * Staging a live home for `agent backup` (README "Design notes", backups): a tree of the home as
 * a `kill -9` at one instant would leave it, made of hard links to the files the daemon only
 * ever replaces by rename and copies of the rest.
 *
 * Linking 200,000 actor files takes a few seconds on a slow disk, too long to hold the event
 * loop. So the links are made first, by a link thread (link-thread.ts), folder by folder, each
 * folder's modification time noted before it is listed (listings run in slices of a few
 * milliseconds between turns of the event loop). Then one synchronous turn (no daemon write can
 * start during it) settles the instant: a folder whose time is unchanged had no entry added, removed
 * or renamed over since it was listed, so its links are still the current files; the others
 * are listed again and relinked; every other file (journals, logs: written in place) is copied
 * in that turn. That turn costs a stat per folder plus the changed folders.
 */
import { copyFileSync, type Dirent, existsSync, linkSync, mkdirSync, readdirSync, rmdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { readdir, rmdir, unlink } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { Worker } from "node:worker_threads";
import type { ChangeWatch } from "../store/atomic-file.js";
import { threadScript } from "../thread-script.js";
import type { LinkAnswer, LinkBatch } from "./link-thread.js";

/**
 * Files the daemon only ever replaces by rename (atomic-file.ts, the batch writer), never writes
 * in place: an actor's `<id>.json`, `<id>.json.bak`, `<id>.traces` and KV buckets in its shard
 * folder (`data/actors/<xx>/`, see actors/storage/layout.ts). A hard link to one of them keeps
 * its contents of this instant even after the daemon replaces the file. Everything else
 * (journals, which are appended to; logs; other stores) is copied.
 */
const RENAMED_ONLY = /^data\/actors\/[0-9a-f]{2}\/[^/]+(?:\.json|\.json\.bak|\.traces|\.kv\/[^/]+\.json(?:\.bak)?)$/;
const renamedOnly = (rel: string) => RENAMED_ONLY.test(sep === "/" ? rel : rel.split(sep).join("/"));
/**
 * The actors' shard folders and their KV folders: with a ChangeWatch, what changed in them since
 * the first pass is known path by path (every write there goes through the store kit), so the
 * final turn relinks those paths instead of listing the folders again and relinking everything
 * in them (at 100k actors under writes to every shard: 200k unlink and link pairs in one turn).
 */
const WATCHED_DIR = /^data\/actors\/[0-9a-f]{2}(?:\/[^/]+\.kv)?$/;
const watchedDir = (rel: string) => WATCHED_DIR.test(sep === "/" ? rel : rel.split(sep).join("/"));
/** Changes applied before the final turn, in rounds, while a round still finds this many. */
const CATCH_UP_MIN = 64;
const CATCH_UP_ROUNDS = 8;
/**
 * The longest slice of synchronous work (links, listings, changes applied) between two turns of
 * the event loop, before the final turn: short enough that the daemon's calls wait at most
 * about this long (times the machine's load) behind the backup.
 */
const SLICE_MS = 4;
/**
 * A folder changed less than this long before it was listed is listed again in the final turn:
 * folder times are as coarse as the kernel's clock tick, so a change in the same tick as the
 * listing would not move them.
 */
const FRESH_NS = 2_000_000_000n;
/** Unlinks made at once by removeTree. */
const LINKS_AT_ONCE = 64;

/** The link thread (link-thread.ts): batches of links made off the event loop. */
class Linker {
  private readonly worker = new Worker(threadScript(import.meta.url, "link-thread.js"));
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (vanished: number[]) => void; reject: (error: Error) => void }>();
  constructor() {
    this.worker.on("message", (m: LinkAnswer) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if ("error" in m) w?.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else w?.resolve(m.vanished);
    });
    const fail = (error: Error) => {
      for (const w of this.waiting.values()) w.reject(error);
      this.waiting.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", () => fail(new Error("the link thread ended")));
  }
  /** Link each [source, destination]; resolves with the indexes of the sources gone meanwhile. */
  link(pairs: [string, string][]): Promise<number[]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, pairs } satisfies LinkBatch);
    });
  }
  /** Stop the thread (resolves once it is gone: no link of it lands after). */
  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** Runs synchronous work in slices of SLICE_MS: `tick()` yields to the event loop once a slice is spent. */
class Slices {
  private start = performance.now();
  async tick(): Promise<void> {
    if (performance.now() - this.start < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.start = performance.now();
  }
}

interface Folder {
  mtime: bigint;
  fresh: boolean;
  files: string[];
  /** How many of `files` are rename-only (linked by the first pass). */
  linked: number;
  /** The others of `files`: copied in the final turn. */
  copies: string[];
  dirs: string[];
  /** Entries that are neither files nor folders (symbolic links, sockets): left to the caller. */
  others: string[];
}

export interface StageOptions {
  home: string;
  staging: string;
  /** Entries (relative to the home) left out. */
  skip: (rel: string) => boolean;
  /**
   * Filled with the entries (relative to the home) that are neither files nor folders as of the
   * staged instant: symbolic links and the like, which staging leaves to the caller (backup.ts
   * follows links, with caps, and reports what it skipped).
   */
  others?: string[];
  /**
   * The store kit's record of changed paths, opened before the staging starts: the shard folders
   * are then settled from it (WATCHED_DIR). Without it every changed folder is listed again.
   */
  watch?: ChangeWatch;
}

/** Stage the home into `staging` (which must not exist); resolves with the number of files. */
export async function stageHome(options: StageOptions): Promise<number> {
  const { home, staging } = options;
  const folders = new Map<string, Folder>();
  let links = true;
  const slices = new Slices();
  const linker = new Linker();
  try {
    const pending: Promise<void>[] = [];
    await prelink(options, "", folders, slices, linker, pending);
    await Promise.all(pending);
  } catch {
    // No hard links here (another file system under the home, or none at all): copy everything in the final turn.
    links = false;
    await linker.close();
    await removeTree(staging);
    folders.clear();
  } finally {
    void linker.close();
  }
  // From here on synchronous on purpose: the staged tree is the home at this one instant.
  let files = 0;
  const place = (src: string, dst: string, rel: string) => {
    if (links && renamedOnly(rel)) {
      try {
        linkSync(src, dst);
        files++;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EXDEV" && (error as NodeJS.ErrnoException).code !== "EPERM") throw error;
        links = false;
      }
    }
    // Never copy onto a staged link: that would write into the home's own file.
    rmSync(dst, { force: true });
    copyFileSync(src, dst);
    files++;
  };
  // A folder not seen in the first pass: everything now. Not `recursive` mkdir: each folder's
  // parent exists by now, and Node's recursive mkdir spins forever where a filesystem answers
  // ENOENT for a parent that exists (/proc).
  const whole = (rel: string) => {
    // A folder the watch's rounds staged in part already (made since its parent was listed):
    // each entry staged again as it is now.
    const again = existsSync(join(staging, rel));
    // With the folder's own mode (logs/ is 0700), which the archive keeps; always the owner's to fill.
    if (!again) mkdirSync(join(staging, rel), { mode: (statSync(join(home, rel)).mode & 0o777) | 0o700 });
    for (const d of readdirSync(join(home, rel), { withFileTypes: true })) {
      const r = join(rel, d.name);
      if (options.skip(r)) continue;
      if (d.isDirectory()) whole(r);
      else if (d.isFile()) {
        if (again && existsSync(join(staging, r))) {
          rmSync(join(staging, r));
          files--;
        }
        place(join(home, r), join(staging, r), r);
      } else options.others?.push(r);
    }
  };
  const settle = (rel: string, folder: Folder) => {
    const src = join(home, rel);
    const dst = join(staging, rel);
    let mtime: bigint;
    try {
      mtime = statSync(src, { bigint: true }).mtimeNs;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      rmSync(dst, { recursive: true, force: true });
      return;
    }
    let { files: names, dirs, others } = folder;
    const watched = watching && watchedDir(rel);
    const changed = !watched && (folder.fresh || mtime !== folder.mtime);
    if (changed) {
      names = [];
      dirs = [];
      others = [];
      for (const d of readdirSync(src, { withFileTypes: true })) {
        if (options.skip(join(rel, d.name))) continue;
        if (d.isDirectory()) dirs.push(d.name);
        else if (d.isFile()) names.push(d.name);
        else others.push(d.name);
      }
      const now = new Set([...names, ...dirs]);
      for (const n of readdirSync(dst)) if (!now.has(n)) rmSync(join(dst, n), { recursive: true, force: true });
    }
    for (const n of others) options.others?.push(join(rel, n));
    // A listed file copied as it is now; in a watched folder it may be gone since the listing
    // (the watch has its removal).
    const placeListed = (n: string) => {
      try {
        place(join(src, n), join(dst, n), join(rel, n));
      } catch (error) {
        if (!watched || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        rmSync(join(dst, n), { force: true });
      }
    };
    const settleDirs = () => {
      for (const n of dirs) {
        const r = join(rel, n);
        const sub = folders.get(r);
        if (sub) settle(r, sub);
        else whole(r);
      }
    };
    if (!changed && links) {
      // Listed and linked by the first pass, unchanged since (or settled from the watch): only
      // the files written in place are copied as they are now.
      files += folder.linked;
      for (const n of folder.copies) placeListed(n);
      settleDirs();
      return;
    }
    for (const n of names) {
      const r = join(rel, n);
      if (links && renamedOnly(r)) {
        if (!changed) {
          files++;
          continue;
        }
        rmSync(join(dst, n), { force: true });
      }
      placeListed(n);
    }
    settleDirs();
  };
  /**
   * Stage one changed path of a watched folder as it is now (or drop it: gone). Before the final
   * turn (`early`) only links and folders: the files copied in place (step journals) are copied
   * by the final turn from the listing, and those made since by the final pass.
   */
  const apply = (path: string, early: boolean) => {
    const rel = relative(home, path);
    if (!rel || rel.startsWith("..") || options.skip(rel)) return;
    if (early && !watchedDir(rel) && !(links && renamedOnly(rel))) return;
    const dst = join(staging, rel);
    if (watchedDir(rel)) {
      // A KV folder made or removed whole.
      if (!folders.has(dirname(rel)) && !existsSync(join(staging, dirname(rel)))) return;
      rmSync(dst, { recursive: true, force: true });
      if (existsSync(path)) whole(rel);
      return;
    }
    if (!watchedDir(dirname(rel))) return;
    let had = true;
    try {
      unlinkSync(dst);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      had = false;
    }
    if (had) files--;
    try {
      if (!existsSync(dirname(dst))) {
        if (!existsSync(dirname(path))) return;
        mkdirSync(dirname(dst), { recursive: true });
      }
      place(path, dst, rel);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  };
  const watching = links && options.watch !== undefined;
  if (watching) {
    // What changed during the first pass, relinked in rounds between event-loop turns, until a
    // round finds little left for the final turn.
    for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
      const changed = options.watch!.take();
      for (const p of changed) {
        apply(p, true);
        await slices.tick();
      }
      if (changed.size < CATCH_UP_MIN) break;
    }
  }
  // The final turn (synchronous from here on).
  const root = folders.get("");
  if (root) settle("", root);
  else whole("");
  if (watching) for (const p of options.watch!.take()) apply(p, false);
  return files;
}

/**
 * First pass, before the final turn: note each folder's time, list it, and have the link thread
 * link its rename-only files. Listings are synchronous calls in slices of SLICE_MS.
 */
async function prelink(
  options: StageOptions,
  rel: string,
  folders: Map<string, Folder>,
  slices: Slices,
  linker: Linker,
  pending: Promise<void>[],
): Promise<void> {
  await slices.tick();
  const src = join(options.home, rel);
  const dst = join(options.staging, rel);
  // A folder removed meanwhile (an actor destroyed) is skipped, not a reason to give up the
  // links: its parent's time moved, so the final turn lists the parent again.
  const gone = (error: unknown) => rel !== "" && (error as NodeJS.ErrnoException).code === "ENOENT";
  let mtimeNs: bigint;
  let mode: bigint;
  try {
    ({ mtimeNs, mode } = statSync(src, { bigint: true }));
  } catch (error) {
    if (gone(error)) return;
    throw error;
  }
  const fresh = BigInt(Date.now()) * 1_000_000n - mtimeNs < FRESH_NS;
  // With the folder's own mode (logs/ is 0700), which the archive keeps; always the owner's to fill.
  mkdirSync(dst, { mode: Number(mode & 0o777n) | 0o700 });
  let entries: Dirent[];
  try {
    entries = readdirSync(src, { withFileTypes: true });
  } catch (error) {
    if (!gone(error)) throw error;
    rmdirSync(dst);
    return;
  }
  const folder: Folder = { mtime: mtimeNs, fresh, files: [], linked: 0, copies: [], dirs: [], others: [] };
  folders.set(rel, folder);
  const toLink: [string, string][] = [];
  for (const d of entries) {
    const r = join(rel, d.name);
    if (options.skip(r)) continue;
    if (d.isDirectory()) folder.dirs.push(d.name);
    else if (d.isFile()) {
      folder.files.push(d.name);
      if (renamedOnly(r)) toLink.push([join(src, d.name), join(dst, d.name)]);
      else folder.copies.push(d.name);
    } else folder.others.push(d.name);
  }
  if (toLink.length) {
    folder.linked = toLink.length;
    const linked = linker.link(toLink).then((vanished) => {
      // Gone since the listing: the folder's time moved, so the final turn lists it again
      // (or, in a watched folder, the watch has its removal).
      if (!vanished.length) return;
      const gone = new Set(vanished.map((i) => basename(toLink[i]![0])));
      folder.files = folder.files.filter((n) => !gone.has(n));
      folder.linked -= gone.size;
    });
    // Awaited with the others by stageHome (never left unhandled when the listing fails first).
    linked.catch(() => undefined);
    pending.push(linked);
  }
  for (const n of folder.dirs) await prelink(options, join(rel, n), folders, slices, linker, pending);
}

/**
 * Remove a staged tree without holding the event loop: `fs.promises.rm` with `recursive` held
 * it for seconds on a tree of 200,000 files. Folder by folder, a batch of unlinks at a time.
 */
export async function removeTree(dir: string): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const files = entries.filter((d) => !d.isDirectory()).map((d) => join(dir, d.name));
  for (let i = 0; i < files.length; i += LINKS_AT_ONCE) await Promise.all(files.slice(i, i + LINKS_AT_ONCE).map((f) => unlink(f).catch(() => undefined)));
  for (const d of entries) if (d.isDirectory()) await removeTree(join(dir, d.name));
  await rmdir(dir).catch(() => undefined);
}

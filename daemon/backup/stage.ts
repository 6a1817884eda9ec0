/**
 * Staging a live home for `agent backup` (README "Design notes", backups): a tree of the home as
 * a `kill -9` at one instant would leave it, made of hard links to the files the daemon only
 * ever replaces by rename and copies of the rest.
 *
 * Linking 200,000 actor files takes a few seconds on a slow disk, too long to hold the event
 * loop. So the links are made first, by a link thread (link-thread.ts), folder by folder, each
 * folder's modification time noted before it is listed (the listing is the thread's too: the
 * event loop only receives each folder's counts and the few names that are not linked). The
 * large files written in place (journals) are copied ahead by the same thread. Then one
 * synchronous turn (no daemon write can start during it) settles the instant: a folder whose
 * time is unchanged had no entry added, removed or renamed over since it was listed, so its
 * links are still the current files; the others are listed again and relinked; every other file
 * (journals, logs: written in place) is copied in that turn, or, when copied ahead, only from
 * where it changed since (an append-only journal: its tail). That turn costs a stat per folder
 * plus the changed folders and the journals' new lines.
 */
import {
  closeSync,
  copyFileSync,
  type Dirent,
  existsSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { readdir, rmdir, unlink } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { basename, dirname, join, relative, sep } from "node:path";
import { Worker } from "node:worker_threads";
import type { ChangeWatch } from "../store/atomic-file.js";
import { threadScript } from "../thread-script.js";
import type { MessagePort } from "node:worker_threads";
import type { CopyAhead, FolderListing, LinkAnswer, LinkRequest, LinkThreadData } from "./link-thread.js";
import { linkGroups, renamedOnly } from "./stage-rules.js";
import { nameGroup } from "./tar-members.js";

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
/** Files written in place at least this large are copied ahead of the final turn (only their changes in it). */
const COPY_AHEAD_MIN = 256 * 1024;
/** The buffer that copies a file's changed part in the final turn. */
const TAIL_BUFFER = 1 << 20;
/**
 * Folders are packed early (instead of linked) while fewer paths than this changed since the
 * staging started: at 100k actors a quiet home changes a few, 8 writers thousands.
 */
const EARLY_PACK_MAX_CHANGES = 256;
/** Unlinks made at once by removeTree. */
const LINKS_AT_ONCE = 64;

/**
 * The link threads (link-thread.ts): folders listed and linked, files copied, off the event
 * loop. Two of them where there are two cores: the links are most of a staging's time, and a
 * folder's links are independent of another's.
 */
class Linkers {
  private readonly pool: Linker[];
  constructor(early?: EarlyPacking) {
    this.pool = Array.from({ length: Math.max(1, Math.min(2, availableParallelism())) }, () => new Linker(early));
  }
  /** To the thread with the fewest requests waiting. */
  folder(home: string, staging: string, rel: string, pack: boolean): Promise<FolderListing | null> {
    const idle = this.pool.reduce((a, b) => (b.waiting < a.waiting ? b : a));
    return idle.folder(home, staging, rel, pack);
  }
  copy(src: string, dst: string): Promise<CopyAhead | null> {
    return this.pool[0]!.copy(src, dst);
  }
  /** Link the groups `groups` of a folder packed early (stage-rules.ts linkGroups). */
  group(home: string, staging: string, rel: string, k: number, groups: number[]): Promise<LinkAnswer> {
    const idle = this.pool.reduce((a, b) => (b.waiting < a.waiting ? b : a));
    return idle.ask({ id: idle.nextId(), op: "group", home, staging, rel, k, groups });
  }
  /** Each thread's time on a core and waiting for one (ms) since it started. */
  times(): Promise<({ cpuMs: number; waitMs: number } | null)[]> {
    return Promise.all(this.pool.map((l) => l.times()));
  }
  async close(): Promise<void> {
    await Promise.all(this.pool.map((l) => l.close()));
  }
}

/** One link thread. */
class Linker {
  private readonly worker: Worker;
  private next = 0;
  private readonly requests = new Map<number, { resolve: (answer: LinkAnswer) => void; reject: (error: Error) => void }>();
  /** Requests not answered yet. */
  get waiting(): number {
    return this.requests.size;
  }
  constructor(early?: EarlyPacking) {
    const port = early?.port();
    const data: LinkThreadData = port ? { early: { port, level: early!.level, busy: early!.busy! } } : {};
    this.worker = new Worker(threadScript(import.meta.url, "link-thread.js"), { workerData: data, transferList: port ? [port] : [] });
    this.worker.on("message", (m: LinkAnswer) => {
      const w = this.requests.get(m.id);
      this.requests.delete(m.id);
      if ("error" in m) w?.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else w?.resolve(m);
    });
    const fail = (error: Error) => {
      for (const w of this.requests.values()) w.reject(error);
      this.requests.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", () => fail(new Error("the link thread ended")));
  }
  nextId(): number {
    return this.next++;
  }
  ask(request: LinkRequest): Promise<LinkAnswer> {
    return new Promise((resolve, reject) => {
      this.requests.set(request.id, { resolve, reject });
      this.worker.postMessage(request);
    });
  }
  /** Stage the folder `rel` (its copy made, its rename-only files linked); null: it is gone. */
  async folder(home: string, staging: string, rel: string, pack: boolean): Promise<FolderListing | null> {
    const a = await this.ask({ id: this.next++, op: "folder", home, staging, rel, pack });
    return "folder" in a ? a.folder : null;
  }
  /** Copy `src` to `dst` ahead; null: it is gone. */
  async copy(src: string, dst: string): Promise<CopyAhead | null> {
    const a = await this.ask({ id: this.next++, op: "copy", src, dst });
    return "copy" in a ? a.copy : null;
  }
  async times(): Promise<{ cpuMs: number; waitMs: number } | null> {
    const a = await this.ask({ id: this.next++, op: "times" });
    return "times" in a ? a.times : null;
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

/** A folder as the first pass found it (link-thread.ts), the caller's skip rules applied. */
type Folder = FolderListing;

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
  /**
   * Packing alongside the staging: each link thread packs the folders it stages and sends them
   * over a port of its own to the packing thread (pack-thread.ts); filled with what the staging
   * changed in them since.
   */
  early?: EarlyPacking;
  /** Filled with where the staging's time went (ms), for the backup's log line. */
  marks?: StageMarks;
}

/** A folder's changes since it was packed early: the names of files staged again, or "all" (listed again, or its subfolders changed). */
export type Touched = Map<string, Set<string> | "all">;

/** Packing alongside the staging (StageOptions.early). */
export interface EarlyPacking {
  /** A new port to the packing thread, one per link thread. */
  port: () => MessagePort;
  level: number;
  /** Filled: the folders packed early (by their path relative to the home; "" the root), each with its groups and subfolders as listed. */
  packed: Map<string, { k: number; dirs: string[] }>;
  /** Filled: what the staging changed in the staged tree after the first pass. */
  touched: Touched;
  /** Filled: the folders whose subfolders changed after the first pass. */
  dirsChanged: Set<string>;
  /** Set by the staging (`[0]` = 1) once the home is being written to: the link threads then link folders instead of packing them. */
  busy?: Int32Array;
}

/** Where a staging's time went (ms): its phases, the catch-up rounds, and the link threads' time on and waiting for a core. */
export interface StageMarks {
  firstPassMs?: number;
  copyAheadMs?: number;
  catchUpMs?: number;
  catchUpRounds?: number;
  catchUpPaths?: number;
  /** The home was being written to during the first pass: folders from then on linked, not packed early. */
  busy?: boolean;
  finalTurnMs?: number;
  linkThreads?: ({ cpuMs: number; waitMs: number } | null)[];
}

/** Stage the home into `staging` (which must not exist); resolves with the number of files. */
export async function stageHome(options: StageOptions): Promise<number> {
  const { home, staging } = options;
  const folders = new Map<string, Folder>();
  let links = true;
  const slices = new Slices();
  if (options.early) options.early.busy = new Int32Array(new SharedArrayBuffer(4));
  const linker = new Linkers(options.early);
  // Folders are packed early unless the home is being written to (every shard, as under load):
  // then most groups would change and be linked and packed again after all; linked instead.
  const checkBusy = () => {
    if (options.early?.busy && (options.watch?.pending() ?? 0) >= EARLY_PACK_MAX_CHANGES) Atomics.store(options.early.busy, 0, 1);
  };
  checkBusy();
  const busyCheck = setInterval(checkBusy, 20);
  let linkerOpen = true;
  const touched: Touched = options.early?.touched ?? new Map();
  /** A folder staged again whole (or its subfolders changed): packed whole. */
  const touchAll = (dir: string) => {
    touched.set(dir === "." ? "" : dir, "all");
  };
  const newDirs = options.early?.dirsChanged ?? new Set<string>();
  /** A folder whose subfolders changed (one made or removed): listed again by the packing. */
  const dirsChanged = (dir: string) => {
    newDirs.add(dir === "." ? "" : dir);
  };
  /** A file staged again (or removed): its group packed again. */
  const touch = (rel: string) => {
    const dir = dirname(rel) === "." ? "" : dirname(rel);
    const t = touched.get(dir);
    if (t === "all") return;
    if (t) t.add(basename(rel));
    else touched.set(dir, new Set([basename(rel)]));
  };
  /** Files copied ahead of the final turn (by their path relative to the home). */
  const ahead = new Map<string, CopyAhead>();
  const marks = options.marks ?? {};
  let t = performance.now();
  const lap = () => {
    const now = performance.now();
    const ms = now - t;
    t = now;
    return Math.round(ms);
  };
  try {
    await prelink(options, folders, linker);
    if (options.early) for (const [rel, f] of folders) if (f.k !== undefined) options.early.packed.set(rel, { k: f.k, dirs: f.dirs });
    marks.firstPassMs = lap();
    await copyAhead(options, folders, linker, ahead);
    clearInterval(busyCheck);
    marks.copyAheadMs = lap();
    if (options.early?.busy) marks.busy = Atomics.load(options.early.busy, 0) !== 0;
  } catch {
    clearInterval(busyCheck);
    // No hard links here (another file system under the home, or none at all): copy everything in the final turn.
    links = false;
    linkerOpen = false;
    await linker.close();
    await removeTree(staging);
    folders.clear();
    ahead.clear();
    options.early?.packed.clear();
  }
  // From here on synchronous on purpose: the staged tree is the home at this one instant.
  let files = 0;
  const place = (src: string, dst: string, rel: string) => {
    touch(rel);
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
    const early = ahead.get(rel);
    if (early) {
      ahead.delete(rel);
      if (finishCopy(src, dst, early, options.watch)) {
        files++;
        return;
      }
    }
    // Never copy onto a staged link: that would write into the home's own file.
    rmSync(dst, { force: true });
    copyFileSync(src, dst);
    keepTimes(statSync(src, { bigint: true }), dst);
    files++;
  };
  // A folder not seen in the first pass: everything now. Not `recursive` mkdir: each folder's
  // parent exists by now, and Node's recursive mkdir spins forever where a filesystem answers
  // ENOENT for a parent that exists (/proc).
  const whole = (rel: string) => {
    // A folder the watch's rounds staged in part already (made since its parent was listed):
    // each entry staged again as it is now.
    const again = existsSync(join(staging, rel));
    touchAll(rel);
    if (rel !== "") dirsChanged(dirname(rel));
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
      if (rel !== "") dirsChanged(dirname(rel));
      return;
    }
    let names: string[] = [];
    let { dirs, others } = folder;
    const watched = watching && watchedDir(rel);
    const changed = !watched && (folder.fresh || mtime !== folder.mtime);
    if (changed) {
      touchAll(rel);
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
    for (const n of others) {
      options.others?.push(join(rel, n));
      // Followed after the final turn (links.ts): a new entry of this folder, file or folder.
      touch(join(rel, n));
      dirsChanged(rel);
    }
    // A listed file copied as it is now; in a watched folder it may be gone since the listing
    // (the watch has its removal).
    const placeListed = (n: string) => {
      try {
        place(join(src, n), join(dst, n), join(rel, n));
      } catch (error) {
        if (!watched || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        touch(join(rel, n));
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
    if (!changed) {
      // Listed and linked by the first pass, unchanged since (or settled from the watch): only
      // the files written in place are copied as they are now.
      files += folder.linked;
      for (const n of folder.copies) placeListed(n);
      settleDirs();
      return;
    }
    for (const n of names) {
      if (links && renamedOnly(join(rel, n))) rmSync(join(dst, n), { force: true });
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
      dirsChanged(dirname(rel));
      rmSync(dst, { recursive: true, force: true });
      if (existsSync(path)) whole(rel);
      return;
    }
    if (!watchedDir(dirname(rel))) return;
    touch(rel);
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
        // The topmost folder made here is a new subfolder of its parent.
        let top = dirname(rel);
        while (dirname(top) !== "." && !existsSync(join(staging, dirname(top)))) top = dirname(top);
        dirsChanged(dirname(top));
        mkdirSync(dirname(dst), { recursive: true });
      }
      place(path, dst, rel);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  };
  /** Groups of the folders packed early whose files are linked (a file of theirs changed). */
  const linkedGroups = new Map<string, Set<number>>();
  /** The groups of folders packed early with a changed file (touched by name) not linked yet. */
  const groupsDue = (): [string, number, number[]][] => {
    const out: [string, number, number[]][] = [];
    for (const [dir, t] of touched) {
      const k = t === "all" ? undefined : folders.get(dir)?.k;
      if (k === undefined) continue;
      const done = linkedGroups.get(dir) ?? new Set<number>();
      const due = [...new Set([...(t as Set<string>)].map((n) => nameGroup(n, k)))].filter((g) => !done.has(g));
      if (due.length) out.push([dir, k, due]);
    }
    return out;
  };
  const markLinked = (dir: string, groups: number[]) => {
    const done = linkedGroups.get(dir) ?? new Set<number>();
    for (const g of groups) done.add(g);
    linkedGroups.set(dir, done);
  };
  const watching = links && options.watch !== undefined;
  if (watching) {
    // What changed during the first pass, relinked in rounds between event-loop turns, until a
    // round finds little left for the final turn.
    marks.catchUpRounds = 0;
    marks.catchUpPaths = 0;
    for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
      const changed = options.watch!.take();
      marks.catchUpRounds++;
      marks.catchUpPaths += changed.size;
      if (options.early) {
        // The groups of the changed files, linked by the link threads first (then the changed
        // files relinked here: never both at once).
        for (const p of changed) {
          const rel = relative(home, p);
          if (rel && !rel.startsWith("..")) touch(rel);
        }
        await Promise.all(
          groupsDue().map(([dir, k, groups]) =>
            linker.group(home, staging, dir, k, groups).then(
              (a) => {
                if ("grouped" in a) markLinked(dir, groups);
              },
              () => undefined, // left to the final turn
            ),
          ),
        );
      }
      for (const p of changed) {
        apply(p, true);
        await slices.tick();
      }
      if (changed.size < CATCH_UP_MIN) break;
    }
  }
  marks.catchUpMs = lap();
  if (linkerOpen) {
    marks.linkThreads = await linker.times().catch(() => []);
    void linker.close();
  }
  // The final turn (synchronous from here on).
  const root = folders.get("");
  if (root) settle("", root);
  else whole("");
  if (watching) for (const p of options.watch!.take()) apply(p, false);
  // The groups (packed early) of files changed since the last round: linked as they are now.
  for (const [dir, k, groups] of groupsDue()) {
    markLinked(dir, groups);
    if (links) {
      try {
        linkGroups(home, staging, dir, k, new Set(groups));
        continue;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EXDEV" && (error as NodeJS.ErrnoException).code !== "EPERM") throw error;
        links = false;
      }
    }
    const want = new Set(groups);
    if (!existsSync(join(home, dir)) || !existsSync(join(staging, dir))) continue;
    for (const d of readdirSync(join(home, dir), { withFileTypes: true })) {
      const r = join(dir, d.name);
      if (d.isFile() && renamedOnly(r) && want.has(nameGroup(d.name, k)) && !existsSync(join(staging, r))) place(join(home, r), join(staging, r), r);
    }
  }
  marks.finalTurnMs = lap();
  return files;
}

/**
 * First pass, before the final turn: each folder's time noted, listed and its rename-only files
 * linked, by the link thread; here only the caller's skip rules for the rest of its entries.
 */
async function prelink(options: StageOptions, folders: Map<string, Folder>, linker: Linkers): Promise<void> {
  const visit = async (rel: string): Promise<void> => {
    // A folder removed meanwhile (an actor destroyed) is skipped, not a reason to give up the
    // links: its parent's time moved, so the final turn lists the parent again.
    const listing = await linker.folder(options.home, options.staging, rel, options.early !== undefined);
    if (!listing) return;
    const kept = (names: string[]) => names.filter((n) => !options.skip(join(rel, n)));
    const folder: Folder = {
      mtime: listing.mtime,
      fresh: listing.fresh,
      linked: listing.linked,
      k: listing.k,
      copies: kept(listing.copies),
      dirs: kept(listing.dirs),
      others: kept(listing.others),
    };
    folders.set(rel, folder);
    await Promise.all(folder.dirs.map((n) => visit(join(rel, n))));
  };
  await visit("");
}

/**
 * The large files written in place (journals), copied by the link thread before the final turn,
 * which then copies only what changed since (finishCopy). The watch, when there is one, keeps
 * from now on where each of them changes.
 */
async function copyAhead(options: StageOptions, folders: Map<string, Folder>, linker: Linkers, ahead: Map<string, CopyAhead>): Promise<void> {
  const copies: Promise<void>[] = [];
  for (const [rel, folder] of folders) {
    for (const n of folder.copies) {
      const r = join(rel, n);
      const src = join(options.home, r);
      let size: number;
      try {
        size = statSync(src).size;
      } catch {
        continue; // gone: the final turn sees it
      }
      if (size < COPY_AHEAD_MIN) continue;
      options.watch?.track(src);
      copies.push(
        linker.copy(src, join(options.staging, r)).then((copied) => {
          if (copied) ahead.set(r, copied);
        }),
      );
    }
  }
  await Promise.all(copies);
}

/**
 * In the final turn: bring the copy `dst` made ahead of `src` up to date. The bytes of `src`
 * below the lowest offset the watch saw change are as they were copied; from there on they are
 * copied now (an appended journal: its new lines). Without a reported change the copy stands if
 * the file's inode, size and times are those it had before the copy (and were not too recent to
 * tell). False: `src` is not that file any more (replaced, or changed by a writer that does not
 * report): the caller copies it whole.
 */
function finishCopy(src: string, dst: string, early: CopyAhead, watch: ChangeWatch | undefined): boolean {
  let st: import("node:fs").BigIntStats;
  try {
    st = statSync(src, { bigint: true });
  } catch {
    return false;
  }
  if (st.ino !== early.ino || early.inoAfter !== early.ino) return false;
  const low = watch?.lowestChange(src);
  const size = Number(st.size);
  if (low === undefined) {
    if (early.fresh || early.size !== early.sizeBefore || size !== early.sizeBefore || st.mtimeNs !== early.mtimeNs || st.ctimeNs !== early.ctimeNs)
      return false;
    keepTimes(st, dst);
    return true;
  }
  const from = Math.min(low, early.size);
  if (size < from) return false;
  const fd = openSync(src, "r");
  try {
    // The file may have been replaced since the stat above only by this thread: not during this turn.
    if (fstatSync(fd, { bigint: true }).ino !== early.ino) return false;
    const out = openSync(dst, "r+");
    try {
      ftruncateSync(out, from);
      const buf = Buffer.allocUnsafe(Math.min(TAIL_BUFFER, Math.max(1, size - from)));
      for (let at = from; at < size; ) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, size - at), at);
        // Shorter than its size said a moment ago: cut by a writer that does not report.
        if (n === 0) return false;
        for (let w = 0; w < n; ) w += writeSync(out, buf, w, n - w, at + w);
        at += n;
      }
    } finally {
      closeSync(out);
    }
  } finally {
    closeSync(fd);
  }
  keepTimes(st, dst);
  return true;
}

/** A copy with its source's times (the archive keeps a file's modification time, not the backup's). */
function keepTimes(st: import("node:fs").BigIntStats, dst: string): void {
  utimesSync(dst, Number(st.atimeNs) / 1e9, Number(st.mtimeNs) / 1e9);
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

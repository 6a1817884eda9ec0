/**
 * A staged folder as tar entries in gzip members, for the backup's packing (pack-thread.ts) and
 * its link threads (link-thread.ts, which pack a folder right after staging it): the folder's own
 * entry in a member of its own, then its files in `k` groups (a file's group is a hash of its
 * name, so the staging can tell which group a changed file falls in without a list of names),
 * each group in members of its own (one per 4 MiB of tar). A tar's entries can be cut between any
 * two and a `.gz` of several members is one stream to gzip, tar, Node and node-tar, so a group
 * packed early stands in the archive unless a file of it changed since.
 *
 * Headers are node-tar's (`Header`, `Pax` for long paths: the same entries `tar.create` with
 * `portable` wrote); the common ones written in place by tar-header.ts, byte for byte the same;
 * node-tar itself is loaded only for an entry that needs it (a long or non-ASCII path).
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { gzipSync } from "node:zlib";
import { threadTimes } from "../thread-script.js";
import { writeTarHeader } from "./tar-header.js";

const BLOCK = 512;
/** Bytes gathered before they are compressed (one gzip member each). */
const BATCH = 4 << 20;
/** Files per group, about: a group's members are compressed apart from the others (measured: docs/benchmarks.md). */
export const GROUP_FILES = 128;

/** The number of groups for a folder of `files` files. */
export const groupCount = (files: number): number => Math.max(1, Math.ceil(files / GROUP_FILES));

/** The group of the file `name` in a folder packed in `k` groups (FNV-1a of its UTF-16 code units). */
export function nameGroup(name: string, k: number): number {
  if (k <= 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % k;
}

/** Where one packing thread's time went (ms; cpu and wait from the kernel, null where it has no account). */
export interface PackStats {
  /** From the thread's start to its last folder packed. */
  wallMs: number;
  deflateMs: number;
  cpuMs: number | null;
  waitMs: number | null;
  entries: number;
  /** Bytes of tar before compression. */
  rawBytes: number;
}

/** A folder packed: its own entry's members (none for the root), its groups' (in the order asked), its subfolders' names. */
export interface PackedFolder {
  head: Uint8Array[];
  groups: Uint8Array[][];
  /** Files in each group. */
  files: number[];
  dirs: string[];
}

/** node-tar, loaded on the first entry that needs it: most backups never do. */
let tarModule: typeof import("tar") | null = null;
const tar = () => {
  tarModule ??= createRequire(import.meta.url)("tar") as typeof import("tar");
  return tarModule;
};

/** node-tar's portable mode: owner read/write always, no group or other write; folders listable where readable. */
function portableMode(mode: number, dir: boolean): number {
  let m = ((mode & 0o7777) | 0o600) & ~0o22;
  if (dir) {
    if (m & 0o400) m |= 0o100;
    if (m & 0o40) m |= 0o10;
    if (m & 0o4) m |= 0o1;
  }
  return m;
}

/** Packs folders of the staged tree `cwd` as tar entries in gzip members, keeping count of where its time went. */
export class FolderPacker {
  private buf = Buffer.allocUnsafe(BATCH);
  private used = 0;
  private members: Uint8Array[] = [];
  readonly stats: PackStats = { wallMs: 0, deflateMs: 0, cpuMs: null, waitMs: null, entries: 0, rawBytes: 0 };
  private readonly started = performance.now();
  private readonly times0 = threadTimes();

  constructor(
    private readonly cwd: string,
    private readonly level: number,
    /** A file gone since it was listed is left out (a live folder: its removal is the staging's to see), not an error. */
    private readonly tolerant = false,
  ) {}

  /**
   * The folder `rel` ("" the root: no entry of its own): its entry (`head`), then its files in `k`
   * groups by name (only the groups in `only`, in that order, when given). `listed`: its files
   * and folders as the caller listed them (else it is listed now).
   */
  folder(rel: string, k = 1, only?: number[], listed?: { files: string[]; dirs: string[] }, withHead = true): PackedFolder {
    const dirs: string[] = listed ? [...listed.dirs] : [];
    const abs = rel === "" ? this.cwd : `${this.cwd}/${rel}`;
    const prefix = rel === "" ? "" : `${rel}/`;
    const head: Uint8Array[] = [];
    if (rel !== "" && withHead) {
      // Folders: no time in a portable archive, as node-tar writes them.
      this.header(prefix, portableMode(statSync(abs).mode, true), 0, undefined, "Directory");
      this.stats.entries++;
      head.push(...this.take());
    }
    const wanted = only ?? Array.from({ length: k }, (_, g) => g);
    const slot = new Map(wanted.map((g, i) => [g, i]));
    const byGroup: string[][] = wanted.map(() => []);
    const add = (name: string) => {
      const i = slot.get(nameGroup(name, k));
      if (i !== undefined) byGroup[i]!.push(name);
    };
    if (listed) for (const n of listed.files) add(n);
    else
      for (const d of readdirSync(abs, { withFileTypes: true })) {
        if (d.isDirectory()) dirs.push(d.name);
        else if (d.isFile()) add(d.name);
      }
    const files: number[] = [];
    const groups = byGroup.map((names) => {
      let n = 0;
      for (const name of names) if (this.file(prefix + name)) n++;
      files.push(n);
      return this.take();
    });
    this.finish();
    return { head, groups, files, dirs };
  }

  /** The archive's end: two zero blocks, as a member of its own. */
  end(): Uint8Array {
    return gzipSync(Buffer.alloc(2 * BLOCK), { level: this.level });
  }

  /** The stats brought up to now. */
  finish(): PackStats {
    const times1 = threadTimes();
    this.stats.wallMs = performance.now() - this.started;
    if (this.times0 && times1) {
      this.stats.cpuMs = times1.cpuMs - this.times0.cpuMs;
      this.stats.waitMs = times1.waitMs - this.times0.waitMs;
    }
    return this.stats;
  }

  /** The members made since the last call (the batch so far compressed). */
  private take(): Uint8Array[] {
    this.flush();
    const members = this.members;
    this.members = [];
    return members;
  }

  /**
   * The batch so far as a gzip member: the deflate runs on this low-priority thread, not on the
   * thread pool the event loop's file calls share.
   */
  private flush(): void {
    if (!this.used) return;
    const t = performance.now();
    this.members.push(gzipSync(this.buf.subarray(0, this.used), { level: this.level }));
    this.stats.deflateMs += performance.now() - t;
    this.stats.rawBytes += this.used;
    this.used = 0;
  }

  /** Room for `n` more bytes in the batch (a larger buffer for one large header). */
  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  private header(path: string, mode: number, size: number, mtime: Date | undefined, type: "File" | "Directory"): void {
    this.room(BLOCK);
    // node-tar's bytes, written in place (tar-header.ts); node-tar itself for long or non-ASCII paths.
    if (writeTarHeader(this.buf, this.used, path, mode, size, mtime, type === "File" ? "0" : "5")) {
      this.used += BLOCK;
      return;
    }
    const { Header, Pax } = tar();
    const h = new Header({ path, mode, size, mtime, type });
    if (h.encode()) {
      const pax = new Pax({ path, mtime, size }).encode();
      this.room(pax.length);
      pax.copy(this.buf, this.used);
      this.used += pax.length;
    }
    this.room(BLOCK);
    h.block!.copy(this.buf, this.used);
    this.used += BLOCK;
  }

  /** Pack the file `rel`; false: it is not a file (or, tolerant, gone). */
  private file(rel: string): boolean {
    let fd: number;
    try {
      fd = openSync(`${this.cwd}/${rel}`, "r");
    } catch (error) {
      if (this.tolerant && (error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return false;
      this.stats.entries++;
      this.header(rel, portableMode(st.mode, false), st.size, st.mtime, "File");
      let left = st.size;
      while (left > 0) {
        if (this.used === this.buf.length) this.flush();
        const n = readSync(fd, this.buf, this.used, Math.min(left, this.buf.length - this.used), null);
        if (n === 0) {
          // Shorter than its size said (never for a staged file): zeros keep the archive readable.
          const pad = Math.min(left, this.buf.length - this.used);
          this.buf.fill(0, this.used, this.used + pad);
          this.used += pad;
          left -= pad;
          continue;
        }
        this.used += n;
        left -= n;
      }
      const pad = (BLOCK - (st.size % BLOCK)) % BLOCK;
      if (pad) {
        this.room(pad);
        this.buf.fill(0, this.used, this.used + pad);
        this.used += pad;
      }
      return true;
    } finally {
      closeSync(fd);
    }
  }
}

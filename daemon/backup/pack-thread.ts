/**
 * Packs a staged home into the backup's `.tar.gz` off the daemon's event loop (backup.ts starts
 * it as a worker thread when the staging starts), then removes the staged tree.
 *
 * Reading 200,000 small files and compressing them is CPU work of more than one core (`tar -czf`
 * has two: tar reads while gzip compresses), and so is the staging's linking. So the packing
 * runs alongside the staging: each link thread packs a folder as soon as it has staged it
 * (tar-members.ts: the folder's entry, then its files in groups by a hash of their names, each
 * group in gzip members of its own) and sends the members here through a port of its own. Once
 * the staging is done, backup.ts sends the plan: for each folder packed early, its groups that
 * changed since (the staging's catch-up and final turn relinked or copied a file of them, or
 * "all": the folder was listed again) and its subfolders. This thread then walks the staged tree
 * from the root, folder before subfolders, and hands what is left (a changed group, a folder
 * not packed early, a folder whose subfolders are not those planned) to the packing threads (one
 * per core, at most PACKERS), and appends every folder's members in that order. A tar's entries
 * can be cut between any two, and a `.gz` of several members is one stream to gzip, tar, Node
 * and node-tar, so the archive is exactly the staged tree.
 *
 * `tar.create` took 13 s for a 40,000-file home (docs/benchmarks.md): its per-entry streams and a
 * synchronous deflate call per small write dominated.
 */
import { closeSync, openSync, readdirSync, rmSync, statSync, writeSync } from "node:fs";
import { availableParallelism } from "node:os";
import { type MessagePort, parentPort, Worker, workerData } from "node:worker_threads";
import { lowerThreadPriority } from "../thread-script.js";
import { FolderPacker, type PackedFolder, type PackStats } from "./tar-members.js";

export type { PackStats } from "./tar-members.js";

/** The packing thread's start. */
export interface PackStart {
  /** The archive to write (created 0600). */
  file: string;
  /** The staged tree. */
  cwd: string;
  /** The deflate's level (1–9: faster to smaller; the config's `backup.compression_level`). */
  level: number;
}

/** A link thread's port, sent to the packing thread (`{ port }`), over which its early packs come (`EarlyPack`). */
export interface PortMessage {
  port: MessagePort;
}

/** A folder packed by a link thread right after it staged it. */
export interface EarlyPack {
  rel: string;
  /** Its files' groups. */
  k: number;
  head: Uint8Array[];
  groups: Uint8Array[][];
  /** Files in each group. */
  files: number[];
}

/** What the staging changed in a folder packed early: its groups to pack again ("all": the whole folder), and its subfolders. */
export interface FolderPlan {
  rel: string;
  changed: number[] | "all";
  /** Its subfolders as first listed, unless `dirsChanged` (a subfolder made or removed since: listed again here). */
  dirs: string[];
  dirsChanged: boolean;
}

/** The go: the staged tree's top-level entries to pack, the plan, and how many early packs were sent. */
export interface PackGo {
  go: true;
  entries: string[];
  plan: FolderPlan[];
  /** Early packs the link threads sent (all of them are waited for). */
  expected: number;
  /** Remove the staged tree once the archive is written (after the answer). */
  removeAfter: boolean;
}

/** The packing's answer: each packing thread's stats and this thread's. */
export interface PackAnswer {
  ok: boolean;
  message?: string;
  runs?: PackStats[];
  /** This thread (the root's files packed here too), from its start. */
  main?: PackStats;
  /** Files in the archive (the manifest included). */
  files?: number;
  /** Folders taken as packed early, in part (groups packed again) and packed here whole. */
  early?: { folders: number; partly: number; whole: number };
}

/** A packing thread's start: this script again, with `packer` set. */
interface PackerData {
  packer: true;
  cwd: string;
  level: number;
}
/** Work for a packing thread: a folder whole (`only` unset: its entry, its files, its subfolders) or some of its groups. */
interface FolderTask {
  index: number;
  rel: string;
  k: number;
  only?: number[];
}
type PackerAnswer = { index: number; packed: PackedFolder; stats: PackStats } | { index: number; error: string };

// Bulk work: the event loop of the daemon goes first on a busy machine.
lowerThreadPriority();

/** Packing threads: one per core, at most 2. */
const PACKERS = Math.max(1, Math.min(2, availableParallelism()));

/** A packing thread: folders in, their members and subfolders out. */
class Packer {
  private readonly worker: Worker;
  stats: PackStats | null = null;
  onAnswer: (packer: Packer, answer: PackerAnswer) => void = () => undefined;
  onError: (error: Error) => void = () => undefined;
  constructor(data: PackerData) {
    this.worker = new Worker(new URL(import.meta.url), { workerData: data });
    this.worker.on("message", (m: PackerAnswer) => this.onAnswer(this, m));
    this.worker.on("error", (e) => this.onError(e));
    this.worker.once("exit", (code) => this.onError(new Error(`a packing thread ended (exit ${code}) before it finished`)));
  }
  send(task: FolderTask): void {
    this.worker.postMessage(task);
  }
  async close(): Promise<void> {
    this.worker.removeAllListeners("exit");
    await this.worker.terminate();
  }
}

/** The staged folder's subfolders, by name. */
function subfolders(abs: string): string[] {
  return readdirSync(abs, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
}

/** The staged folder's subfolders as a folder's link count tells (2 + subfolders on most file systems; null where it is not kept). */
function subfolderCount(abs: string): number | null {
  const n = statSync(abs).nlink;
  return n >= 2 ? n - 2 : null;
}

/**
 * Pack the staged tree into `file`: the folders in the order found from the root (each before
 * its subfolders), each from its early pack where the plan says it is current, else packed (in
 * part or whole) by the packing threads.
 */
async function pack(start: PackStart, go: PackGo, early: Map<string, EarlyPack>, packers: Packer[]): Promise<PackAnswer> {
  const { file, cwd, level } = start;
  // 0600 from the first byte: the archive holds .env and every session.
  const fd = openSync(file, "w", 0o600);
  const counts = { folders: 0, partly: 0, whole: 0 };
  try {
    const write = (z: Uint8Array) => {
      for (let off = 0; off < z.length; ) off += writeSync(fd, z, off);
    };
    // The root's top-level files are packed here (a few; the manifest among them).
    const root = new FolderPacker(cwd, level);
    const top = { files: [] as string[], dirs: [] as string[] };
    for (const n of go.entries) {
      const st = statSync(`${cwd}/${n}`);
      if (st.isDirectory()) top.dirs.push(n);
      else if (st.isFile()) top.files.push(n);
    }
    const packedRoot = root.folder("", 1, undefined, top);
    let files = packedRoot.files.reduce((a, b) => a + b, 0);
    for (const g of packedRoot.groups) for (const z of g) write(z);
    const plans = new Map(go.plan.map((p) => [p.rel, p]));
    /** Folders in the order found, and each one's members in parts (null: not packed yet). */
    const folders: string[] = [...top.dirs];
    const parts: (Uint8Array[] | null)[][] = [];
    /** Where each task's groups go: the folder's index and the parts' positions. */
    const tasks: FolderTask[] = [];
    let scanned = 0;
    let written = 0;
    let working = 0;
    const idle: Packer[] = [...packers];
    await new Promise<void>((resolve, reject) => {
      let failed = false;
      const fail = (error: Error) => {
        if (!failed) reject(error);
        failed = true;
      };
      /** Each folder found since: from its early pack (with tasks for its changed groups), or a task for it whole. */
      const scan = () => {
        while (scanned < folders.length) {
          const index = scanned++;
          const rel = folders[index]!;
          const plan = plans.get(rel);
          const e = early.get(rel);
          early.delete(rel);
          const abs = `${cwd}/${rel}`;
          const dirs = plan?.dirsChanged ? subfolders(abs) : plan?.dirs;
          const subs = plan && e && plan.changed !== "all" ? subfolderCount(abs) : null;
          if (plan && dirs && e && plan.changed !== "all" && (subs === null || subs === dirs.length)) {
            counts.folders++;
            const changed = new Set(plan.changed);
            parts[index] = [e.head, ...e.groups.map((g, i) => (changed.has(i) ? null : g))];
            e.files.forEach((n, i) => {
              if (!changed.has(i)) files += n;
            });
            if (changed.size) {
              counts.partly++;
              tasks.push({ index, rel, k: e.k, only: [...changed].sort((a, b) => a - b) });
            }
            for (const d of dirs) folders.push(`${rel}/${d}`);
          } else {
            counts.whole++;
            parts[index] = [null];
            tasks.push({ index, rel, k: 1 });
          }
        }
      };
      const flush = () => {
        while (written < parts.length && parts[written]!.every((p) => p !== null)) {
          for (const p of parts[written]!) for (const z of p!) write(z);
          parts[written] = [];
          written++;
        }
      };
      const dispatch = () => {
        while (idle.length && tasks.length) {
          working++;
          idle.pop()!.send(tasks.shift()!);
        }
        if (!working && !tasks.length && scanned === folders.length) {
          flush();
          if (written === folders.length) resolve();
          else fail(new Error("the packing ended with folders not packed"));
        }
      };
      const onAnswer = (p: Packer, m: PackerAnswer) => {
        if (failed) return;
        working--;
        if ("error" in m) return fail(new Error(m.error));
        p.stats = m.stats;
        const slots = parts[m.index]!;
        files += m.packed.files.reduce((a, b) => a + b, 0);
        if (slots.length === 1 && slots[0] === null) {
          // A folder whole: its entry and its one group, then its subfolders.
          slots[0] = [...m.packed.head, ...m.packed.groups.flat()];
          for (const d of m.packed.dirs) folders.push(`${folders[m.index]}/${d}`);
        } else {
          const plan = plans.get(folders[m.index]!)!;
          const only = [...new Set(plan.changed as number[])].sort((a, b) => a - b);
          only.forEach((g, i) => {
            slots[1 + g] = m.packed.groups[i]!;
          });
        }
        idle.push(p);
        scan();
        flush();
        dispatch();
      };
      for (const p of packers) {
        p.onAnswer = onAnswer;
        p.onError = fail;
      }
      scan();
      flush();
      dispatch();
    });
    write(root.end());
    return {
      ok: true,
      runs: packers.map((p) => p.stats).filter((s): s is PackStats => s !== null),
      main: root.finish(),
      files,
      early: counts,
    };
  } finally {
    closeSync(fd);
  }
}

if (workerData && "packer" in (workerData as PackerData | PackStart)) {
  const { cwd, level } = workerData as PackerData;
  const packer = new FolderPacker(cwd, level);
  parentPort?.on("message", (task: FolderTask) => {
    try {
      // Changed groups alone, listed now (files added since are in them), or the folder whole.
      const packed = task.only ? packer.folder(task.rel, task.k, task.only, undefined, false) : packer.folder(task.rel, 1);
      // Copied, not transferred: a small member may share its memory with other buffers (Node's pool).
      parentPort?.postMessage({ index: task.index, packed, stats: packer.stats } satisfies PackerAnswer);
    } catch (error) {
      parentPort?.postMessage({ index: task.index, error: error instanceof Error ? error.message : String(error) } satisfies PackerAnswer);
    }
  });
} else if (workerData) {
  const start = workerData as PackStart;
  const early = new Map<string, EarlyPack>();
  let received = 0;
  let go: PackGo | null = null;
  // Started now: their start-up runs while the staging does.
  const packers = Array.from({ length: PACKERS }, () => new Packer({ packer: true, cwd: start.cwd, level: start.level }));
  const ports: MessagePort[] = [];
  let running = false;
  let closed = 0;
  const run = async () => {
    // Every early pack sent is waited for; a link thread gone (its port closed) sends no more, and
    // a folder whose pack never came is packed here whole.
    if (!go || running || (received < go.expected && closed < ports.length)) return;
    running = true;
    for (const p of ports) p.close();
    try {
      const answer = await pack(start, go, go.expected ? early : new Map(), packers);
      parentPort?.postMessage(answer satisfies PackAnswer);
    } catch (error) {
      parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) } satisfies PackAnswer);
    }
    await Promise.all(packers.map((p) => p.close()));
    parentPort?.close();
    // After the answer: the daemon's reply does not wait for it. A staged tree left by a stop
    // meanwhile is removed by the next backup (backup.ts removeStaleStaging).
    if (go.removeAfter) rmSync(start.cwd, { recursive: true, force: true });
  };
  parentPort?.on("message", (m: PortMessage | PackGo) => {
    if ("port" in m) {
      ports.push(m.port);
      m.port.on("message", (e: EarlyPack) => {
        early.set(e.rel, e);
        received++;
        void run();
      });
      m.port.once("close", () => {
        closed++;
        void run();
      });
    } else {
      go = m;
      void run();
    }
  });
}

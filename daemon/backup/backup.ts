import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { chmod, realpath, rename, stat } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { HomePaths } from "../../shared/paths.js";
import type { BackupResult } from "../../shared/protocol/sessions.js";
import { APP_VERSION } from "../../shared/version.js";
import { CONFIG_DEFAULTS } from "../../shared/config/defaults.js";
import { DEFAULT_FOLLOW_LIMITS, type FollowLimits, followLinks } from "./links.js";
import { type EarlyPacking, removeTree, type StageMarks, stageHome } from "./stage.js";
import { type ChangeWatch, watchChanges } from "../store/atomic-file.js";
import { type EnvName, envNumber } from "../../shared/config/env.js";
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import { threadScript } from "../thread-script.js";
import type { FolderPlan, PackAnswer, PackGo, PackStart, PortMessage } from "./pack-thread.js";
import { nameGroup } from "./tar-members.js";

/** The archive's own file at its root: what `agent import` checks before it restores anything. */
export const MANIFEST = "agent-backup.json";

/** Never in a backup: the live daemon's socket and lock, temp files, and the backups themselves. */
const ALWAYS_SKIP = new Set(["daemon.sock", "daemon.lock", "backups"]);
/** Left out by `--quick`: logs and what can be rebuilt (the search index, installed language servers, caches). */
const QUICK_SKIP = ["logs", join("data", "agent", "search"), "lsp"];

export interface BackupOptions {
  quick?: boolean;
  label?: string;
  output?: string;
  /** Folds the daemon's journals into their snapshots first, so the archive is compact. */
  flush?: () => Promise<void>;
  /** The deflate's level, 1–9 (the config's `backup.compression_level`; default 3). */
  compressionLevel?: number;
  /** Told where the backup's time went once the archive is written (the daemon's log). */
  account?: (fields: Record<string, unknown>) => void;
}

/**
 * `agent backup`: a `.tar.gz` of the home, consistent while the daemon runs. The home is first
 * staged as of one turn of the daemon's event loop: no write of the daemon can
 * start meanwhile, so the staged tree is the home as a `kill -9` at that instant would leave it,
 * which every store recovers from (files are replaced by rename; journals drop a torn last
 * line). Staging hard-links the files that are only replaced by rename (the bulk of a home with
 * many actors), mostly before that turn, and copies the rest (stage.ts); the staging folder is
 * inside the home (`backups/`, never archived) so the links stay on one file system. The slow
 * part (reading every file, gzip, removing the staged tree) then runs in a packing thread
 * (pack-thread.ts) while the daemon goes on.
 */
/** mkdir -p one level at a time (Node's recursive mkdir spins forever under /proc and the like). */
function ensureDir(dir: string): void {
  if (existsSync(dir)) return;
  if (dirname(dir) !== dir) ensureDir(dirname(dir));
  mkdirSync(dir);
}

/**
 * Staging folders a killed daemon left (`.staging-<pid>-<ms>`): only one daemon runs per home,
 * so one named for another pid is no one's. Its links would keep old actor files on disk.
 */
async function removeStaleStaging(dir: string): Promise<void> {
  for (const n of readdirSync(dir)) {
    const m = /^\.staging-(\d+)-\d+$/.exec(n);
    if (m && Number(m[1]) !== process.pid) await removeTree(join(dir, n)).catch(() => undefined);
  }
}

/** Archives being written by this process (their `.tmp`), so a cleanup never removes one in progress. */
const writing = new Set<string>();
/** What `agent backup` names its archives, and the temp file it writes first. */
const ARCHIVE_TMP_RE = /^agent-backup-.*\.(?:tar\.gz|tgz)\.tmp$/;

/**
 * Unfinished archives (`<archive>.tmp`) a killed backup left in `dir` (the home's `backups/` by
 * default): removed at daemon start and before each backup into that folder. They hold a copy
 * of the home, `.env` included. Returns the paths removed.
 */
export function removeStaleBackupTemps(paths: Pick<HomePaths, "home">, dir = join(paths.home, "backups")): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const n of names) {
    const p = join(dir, n);
    if (!ARCHIVE_TMP_RE.test(n) || writing.has(p)) continue;
    try {
      rmSync(p, { force: true });
      removed.push(p);
    } catch {
      // left for the next time
    }
  }
  return removed;
}

/** The caps on followed links, from AGENT_BACKUP_FOLLOW_MAX_FILES and _MAX_BYTES (whole numbers) over the defaults. */
function followLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): FollowLimits {
  const pick = (name: EnvName, fallback: number) => envNumber(name, fallback, (n) => Number.isInteger(n) && n > 0, env);
  return {
    maxFiles: pick("AGENT_BACKUP_FOLLOW_MAX_FILES", DEFAULT_FOLLOW_LIMITS.maxFiles),
    maxBytes: pick("AGENT_BACKUP_FOLLOW_MAX_BYTES", DEFAULT_FOLLOW_LIMITS.maxBytes),
  };
}

/**
 * The packing thread (pack-thread.ts), started with the staging so that the link threads can send
 * it each folder packed as soon as it is staged (`port`: one per link thread); `go` sends the plan
 * once the staging is done and resolves once the archive is written, without waiting for the
 * staged tree's removal, which the thread does after its answer.
 */
function startPacking(start: PackStart): { port: () => MessagePort; go: (go: PackGo) => Promise<PackAnswer>; cancel: () => void } {
  const worker = new Worker(threadScript(import.meta.url, "pack-thread.js"), { workerData: start });
  let answered = false;
  const answer = new Promise<PackAnswer>((resolve, reject) => {
    worker.once("message", (m: PackAnswer) => {
      answered = true;
      if (m.ok) resolve(m);
      else reject(new Error(m.message));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (!answered) reject(new Error(`the packing thread ended (exit ${code}) before it finished`));
    });
  });
  // Not left unhandled while the staging runs (a failed staging cancels it).
  answer.catch(() => undefined);
  return {
    port: () => {
      const { port1, port2 } = new MessageChannel();
      worker.postMessage({ port: port1 } satisfies PortMessage, [port1]);
      return port2;
    },
    go: (go) => {
      worker.postMessage(go);
      return answer;
    },
    cancel: () => void worker.terminate(),
  };
}

/** The plan for the packing thread: each folder packed early, with the groups the staging changed since (nameGroup of each file's name) and its subfolders. */
function packPlan(early: EarlyPacking): FolderPlan[] {
  return [...early.packed].map(([rel, { k, dirs }]) => {
    const t = early.touched.get(rel);
    return {
      rel,
      dirs,
      dirsChanged: early.dirsChanged.has(rel),
      changed: t === "all" ? "all" : t ? [...new Set([...t].map((n) => nameGroup(n, k)))] : [],
    };
  });
}

/** A packing run's figures, rounded to whole ms for the log. */
function roundStats(s: import("./pack-thread.js").PackStats): Record<string, number | null> {
  const r = (n: number | null) => (n === null ? null : Math.round(n));
  return { wallMs: r(s.wallMs), deflateMs: r(s.deflateMs), cpuMs: r(s.cpuMs), waitMs: r(s.waitMs), entries: s.entries, rawBytes: s.rawBytes };
}

export async function createBackup(paths: HomePaths, options: BackupOptions = {}): Promise<BackupResult> {
  const home = paths.home;
  const t0 = performance.now();
  let t = t0;
  /** Milliseconds since the last lap (the backup's account of its phases). */
  const lap = () => {
    const now = performance.now();
    const ms = Math.round(now - t);
    t = now;
    return ms;
  };
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const name = `agent-backup-${stamp}${options.label ? `-${options.label}` : ""}.tar.gz`;
  const out = options.output ? resolve(options.output) : join(home, "backups", name);
  const target = out.endsWith(".tar.gz") || out.endsWith(".tgz") ? out : join(out, name);
  const staging = join(home, "backups", `.staging-${process.pid}-${Date.now()}`);
  try {
    ensureDir(dirname(target));
    ensureDir(dirname(staging));
  } catch (error) {
    throw new AgentError("backup.failed", `cannot write the backup to ${dirname(target)}: ${toAgentError(error).message}`);
  }
  await removeStaleStaging(dirname(staging));
  removeStaleBackupTemps(paths);
  if (dirname(target) !== join(home, "backups")) removeStaleBackupTemps(paths, dirname(target));
  const cleanupMs = lap();
  await options.flush?.();
  const flushMs = lap();
  const tmp = `${target}.tmp`;
  let watch: ChangeWatch | null = null;
  /** The packing thread removes the staged tree once the archive is written. */
  let removed = false;
  const level = options.compressionLevel ?? CONFIG_DEFAULTS.backup.compression_level;
  writing.add(tmp);
  const packing = startPacking({ file: tmp, cwd: staging, level });
  try {
    const skip = (rel: string) =>
      ALWAYS_SKIP.has(rel) || rel.endsWith(".tmp") || (options.quick === true && (QUICK_SKIP.includes(rel) || /(^|[\\/])[^\\/]*_cache$/.test(rel)));
    const others: string[] = [];
    watch = watchChanges();
    const marks: StageMarks = {};
    const early: EarlyPacking = { port: packing.port, level, packed: new Map(), touched: new Map(), dirsChanged: new Set() };
    const staged = await stageHome({
      marks,
      early,
      home,
      staging,
      others,
      watch,
      skip: (rel) => {
        const abs = join(home, rel);
        return skip(rel) || abs === staging || `${abs}${sep}`.startsWith(`${staging}${sep}`) || abs === target;
      },
    });
    watch.close();
    const stageMs = lap();
    // Links (and anything else that is not a file or folder) after the staged instant: what they
    // point at is not the daemon's, so it needs no consistency, only caps.
    const backups = join(home, "backups");
    const linked = await followLinks(home, staging, others, followLimitsFromEnv(), [
      { path: await realpath(backups).catch(() => backups), reason: "a link to the backups folder (never in a backup)" },
    ]);
    const manifest = { format: 1, createdAt: new Date().toISOString(), label: options.label ?? null, quick: options.quick === true, version: APP_VERSION };
    writeFileSync(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    const entries = readdirSync(staging);
    const followMs = lap();
    const packed = await packing.go({ go: true, entries, plan: packPlan(early), expected: early.packed.size, removeAfter: true });
    // The files in the archive, as the packing counted them (the manifest left out): the staging's
    // own count is of what it linked or copied, and a folder packed early is neither.
    const files = packed.files !== undefined ? packed.files - 1 : staged + linked.files;
    removed = true;
    const packMs = lap();
    await chmod(tmp, 0o600);
    await rename(tmp, target);
    const bytes = (await stat(target)).size;
    options.account?.({
      ms: Math.round(performance.now() - t0),
      files,
      bytes,
      cleanupMs,
      flushMs,
      stageMs,
      stage: marks,
      followMs,
      packMs,
      pack: { main: packed.main ? roundStats(packed.main) : null, runs: packed.runs?.map(roundStats), early: packed.early },
      renameMs: lap(),
    });
    return {
      path: target,
      bytes,
      files,
      quick: options.quick === true,
      label: options.label ?? null,
      followed: linked.followed,
      skipped: linked.skipped,
    };
  } catch (error) {
    if (error instanceof AgentError) throw error;
    throw new AgentError("backup.failed", `the backup failed: ${toAgentError(error).message}`);
  } finally {
    if (!removed) packing.cancel();
    watch?.close();
    if (!removed) await removeTree(staging).catch(() => undefined);
    rmSync(tmp, { force: true });
    writing.delete(tmp);
  }
}

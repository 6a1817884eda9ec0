/**
 * `agent import`: restore a backup into a home without restoring anything unasked and without
 * ever leaving a half home (docs/backup.md).
 *
 * The archive is streamed into a staging folder next to the target (`.<name>.import-<pid>-<ms>`
 * in the target's parent, so the last step is a rename on one file system), under caps on its
 * total size, file count and per-file size. Only files and folders are restored; owners are
 * never kept, and setuid, setgid and sticky bits are dropped. The staged tree is then read for
 * what would run or listen once a daemon starts on it (actor modules, cron jobs, language
 * servers and commands, a non-loopback gateway bind, tokens): the preview the CLI shows and
 * asks about. Applying pauses the restored cron jobs (a marker the cron service reads at its
 * next start) and resets a non-loopback bind unless asked to keep them, then renames the
 * staging folder into place. A failure at any point, a kill included, leaves the target as it
 * was; what a killed import left is removed by the next import or daemon start
 * (cleanImportLeftovers).
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { link, lstat, mkdir, readdir, readFile, readlink, rename, symlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { Worker } from "node:worker_threads";
import { createGunzip } from "node:zlib";
import { isAlias, isDocument, parseDocument, type Scalar, type YAMLMap, type YAMLSeq } from "yaml";
import { parseDotenv, removeDotenvKeys } from "../../shared/config/dotenv.js";
import { isSecretKey } from "../../shared/config/schema.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { ImportPreview, ImportResult } from "../../shared/backup-import.js";
import { CRON_PAUSE_MARKER } from "../../shared/import-marker.js";
import { checkProfileName } from "../../shared/profile-names.js";
import { writeFileAtomic } from "../store/atomic-file.js";
import { isAlive, lockOwnerAlive, readLockPid } from "../lock.js";
import { MANIFEST } from "./backup.js";
import type { ExtractMessage, ExtractOp, ExtractReply, ExtractThreadData } from "./extract-thread.js";
import { removeTree } from "./stage.js";
import { threadScript } from "../thread-script.js";
import { type EnvName, envValue } from "../../shared/config/env.js";

export type { ImportPreview, ImportResult };

const GiB = 1024 ** 3;
/** Caps of one import (flags --max-bytes, --max-files, --max-file-bytes; env AGENT_IMPORT_MAX_*). */
export interface ImportLimits {
  /** Bytes of all files together, as the archive's headers declare them. */
  maxBytes: number;
  maxFiles: number;
  maxFileBytes: number;
}
export const DEFAULT_IMPORT_LIMITS: Readonly<ImportLimits> = Object.freeze({ maxBytes: 20 * GiB, maxFiles: 1_000_000, maxFileBytes: 4 * GiB });

export interface StagedImport {
  readonly home: string;
  readonly archive: string;
  readonly files: number;
  readonly preview: ImportPreview;
  /** Whether the preview names anything that runs or listens (the CLI asks before apply). */
  readonly needsConsent: boolean;
  apply(options: { keepCron?: boolean; keepNetwork?: boolean }): Promise<ImportResult>;
  /** Remove the staging folder (a no-op after apply). */
  discard(): Promise<void>;
}

/** Names of the folders an import of `home` works in (in its parent). */
const STAGING_RE = (name: string) => new RegExp(`^\\.${escapeRe(name)}\\.import-(old-)?(\\d+)-\\d+$`);
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const alive = (pid: number): boolean => pid === process.pid || isAlive(pid);

/**
 * What a killed import of `home` left in its parent: staging folders are removed; a home moved
 * aside by a `--force` import killed between its two renames is put back when the home is
 * missing. Called by every import and at every daemon start. Never throws; returns what it did.
 */
export async function cleanImportLeftovers(home: string): Promise<string[]> {
  const parent = dirname(resolve(home));
  const re = STAGING_RE(basename(resolve(home)));
  const done: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return done;
  }
  for (const n of names.sort()) {
    const m = re.exec(n);
    if (!m || alive(Number(m[2]))) continue;
    const p = join(parent, n);
    try {
      if (m[1] && swapMarker(home) !== n) {
        // A home moved aside by a --force import killed before its swap completed (the home in
        // place does not carry this swap's marker). The home is missing, or holds only what was
        // made after the kill (a CLI creates logs/ before the daemon it starts cleans up): the
        // one moved aside is the user's and goes back; anything else made meanwhile is kept aside.
        if (existsSync(home)) {
          // A live daemon's home (not this one's: the daemon itself cleans up at its start) stays.
          const lock = join(home, "daemon.lock");
          const owner = readLockPid(lock);
          if (owner !== null && owner !== process.pid && lockOwnerAlive(lock)) continue;
          const stray = join(parent, `.${basename(resolve(home))}.import-stray-${process.pid}-${Date.now()}`);
          await rename(home, stray);
          await rename(p, home);
          const made = readdirSync(stray);
          if (made.every((e) => e === "logs")) await removeTree(stray);
          else done.push(`kept what was made in ${home} after an interrupted import at ${stray}`);
        } else await rename(p, home);
        done.push(`restored ${home} from ${p}`);
      } else if (m[1]) {
        // The swap completed: the old home goes, then the marker.
        await removeTree(p);
        rmSync(join(home, SWAP_MARKER), { force: true });
        done.push(`removed ${p}`);
      } else {
        await removeTree(p);
        done.push(`removed ${p}`);
      }
    } catch {
      // Left for the next time.
    }
  }
  return done;
}

/**
 * Remove this process's own staging folders of `home` (not a home moved aside): for an import
 * stopped while it stages, before `stageImport` has handed back its `discard`. Synchronous, so
 * the caller can exit right after with no write of the stream landing in between.
 */
export function dropOwnStaging(home: string): void {
  const parent = dirname(resolve(home));
  const re = STAGING_RE(basename(resolve(home)));
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const n of names) {
    const m = re.exec(n);
    if (m && !m[1] && Number(m[2]) === process.pid) rmSync(join(parent, n), { recursive: true, force: true });
  }
}

/**
 * Written into the staging of a --force import before its swap, naming the folder the home is
 * moved to: a home that carries it is the import's, so the swap completed and the old home can
 * go. Removed once the old home is.
 */
const SWAP_MARKER = ".import-swap.json";

function swapMarker(home: string): string | null {
  try {
    const old = JSON.parse(readFileSync(join(home, SWAP_MARKER), "utf8"))?.old;
    return typeof old === "string" ? old : null;
  } catch {
    return null;
  }
}

/** Caps from the environment (AGENT_IMPORT_MAX_BYTES, _FILES, _FILE_BYTES), over the defaults. */
export function importLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): ImportLimits {
  const pick = (name: EnvName, fallback: number) => {
    const raw = envValue(name, env);
    if (raw === undefined || raw.trim() === "") return fallback;
    return parseSize(raw, name);
  };
  return {
    maxBytes: pick("AGENT_IMPORT_MAX_BYTES", DEFAULT_IMPORT_LIMITS.maxBytes),
    maxFiles: pick("AGENT_IMPORT_MAX_FILES", DEFAULT_IMPORT_LIMITS.maxFiles),
    maxFileBytes: pick("AGENT_IMPORT_MAX_FILE_BYTES", DEFAULT_IMPORT_LIMITS.maxFileBytes),
  };
}

/** `123`, `10k`, `512M`, `20G` (powers of 1024; a count takes the same suffixes). */
export function parseSize(raw: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(raw);
  const n = m ? Number(m[1]) * 1024 ** " kmgt".indexOf((m[2] || " ").toLowerCase()) : Number.NaN;
  if (!m || !Number.isFinite(n) || n < 1)
    throw new AgentError("usage.invalid", `${what} takes a positive number, optionally with k, M, G or T (got ${JSON.stringify(raw.slice(0, 40))})`);
  return Math.floor(n);
}

const human = (n: number) =>
  n >= GiB
    ? `${+(n / GiB).toFixed(1)} GiB`
    : n >= 1024 ** 2
      ? `${+(n / 1024 ** 2).toFixed(1)} MiB`
      : n >= 1024
        ? `${+(n / 1024).toFixed(1)} KiB`
        : `${n} bytes`;

/**
 * Stream `archive` into a staging folder for `home`. The target must be empty (or missing)
 * unless `force`, in which case the staging starts as a hard-linked copy of the home and the
 * archive's files replace those of the same name. Nothing in the target changes here.
 */
export async function stageImport(archiveIn: string, homeIn: string, options: { force?: boolean; limits?: ImportLimits } = {}): Promise<StagedImport> {
  const archive = resolve(archiveIn);
  const home = resolve(homeIn);
  const limits = options.limits ?? DEFAULT_IMPORT_LIMITS;
  let st: import("node:fs").Stats;
  try {
    st = lstatSync(archive);
  } catch {
    throw new AgentError("backup.invalid_archive", `no archive at ${archive}`);
  }
  if (!st.isFile()) throw new AgentError("backup.invalid_archive", `no archive at ${archive} (not a file)`);
  await cleanImportLeftovers(home);
  let existing: string[] = [];
  if (existsSync(home)) {
    const hs = lstatSync(home);
    if (!hs.isDirectory()) throw new AgentError("backup.home_not_empty", `${home} exists and is not a folder`);
    existing = readdirSync(home);
  }
  if (existing.length && !options.force)
    throw new AgentError(
      "backup.home_not_empty",
      `${home} is not empty (${existing.length} entries); import into an empty home, or pass --force to restore over it`,
    );
  const parent = dirname(home);
  if (!existsSync(parent)) throw new AgentError("backup.import_failed", `cannot import into ${home}: its folder ${parent} does not exist`);
  const staging = join(parent, `.${basename(home)}.import-${process.pid}-${Date.now()}`);
  try {
    await mkdir(staging, { mode: 0o700 });
  } catch (error) {
    throw new AgentError("backup.import_failed", `cannot import into ${home}: ${toAgentError(error).message}`, undefined, { cause: error });
  }
  try {
    const links: { rel: string; to: string }[] = [];
    if (existing.length) await cloneTree(home, staging, "", links);
    // Into a fresh staging folder, the archive's files are written by this process directly; over
    // a --force clone of the home, node-tar replaces its links and files.
    const cronCandidates = existing.length === 0 ? new Set<string>() : undefined;
    const files = await extractInto(archive, staging, limits, cronCandidates);
    const preview = await computePreview(staging, cronCandidates);
    // A link of the home where the archive has a folder is replaced by that folder (never written through).
    const replaced: string[] = [];
    for (const l of links) if (!(await lstat(join(staging, l.rel)).catch(() => null))?.isSymbolicLink()) replaced.push(`${l.rel} -> ${l.to}`);
    return makeStaged(archive, home, staging, files, preview, existing.length > 0, replaced);
  } catch (error) {
    await removeTree(staging).catch(() => undefined);
    throw importError(error, home);
  }
}

/** A failure as a product error: what went wrong, in words, with the cause kept for --debug. */
function importError(error: unknown, home: string): AgentError {
  if (error instanceof AgentError) return error;
  const e = error as NodeJS.ErrnoException & { tarCode?: string };
  const code = e.code ?? e.tarCode;
  const why =
    code === "ENOSPC"
      ? "the disk is full"
      : code === "EDQUOT"
        ? "the disk quota is exceeded"
        : code === "TAR_SYMLINK_ERROR"
          ? `a folder of ${home} the archive restores into is a symbolic link (${e.message})`
          : code === "EACCES" || code === "EPERM"
            ? `permission denied (${e.message})`
            : e.message;
  return new AgentError("backup.import_failed", `the import failed: ${why}; ${home} is unchanged`, { code }, { cause: error });
}

/** Hard-link every file of `src` into `dst` (made), folders made, symbolic links copied as links. */
async function cloneTree(src: string, dst: string, rel: string, links: { rel: string; to: string }[]): Promise<void> {
  for (const d of await readdir(src, { withFileTypes: true })) {
    const s = join(src, d.name);
    const t = join(dst, d.name);
    const r = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) {
      await mkdir(t, { mode: (await lstat(s)).mode & 0o777 });
      await cloneTree(s, t, r, links);
    } else if (d.isSymbolicLink()) {
      const to = await readlink(s);
      await symlink(to, t);
      links.push({ rel: r, to });
    } else if (d.isFile()) await link(s, t);
  }
}

/**
 * Stream the archive into `dir` under the caps; resolves with the number of files (manifest
 * excluded). With `cronCandidates`, `dir` is a new empty folder of this import, so entries are
 * written directly (extractFresh), and the actor files that may be cron tables are noted there
 * for the preview; otherwise node-tar's Unpack replaces what is there.
 */
async function extractInto(archive: string, dir: string, limits: ImportLimits, cronCandidates?: Set<string>): Promise<number> {
  const fresh = cronCandidates !== undefined;
  let files = 0;
  let entries = 0;
  let bytes = 0;
  let manifest = false;
  // tar is loaded when an archive is imported, not at every daemon start (main.ts imports this module).
  const { Unpack, Parser } = await import("tar");
  let refusal: AgentError | null = null;
  const refuse = (message: string) => {
    refusal ??= new AgentError(
      "backup.import_too_large",
      `${archive} ${message}; nothing was restored (raise the cap with the flags of \`agent import --help\`)`,
    );
    unpack.abort(refusal);
  };
  const options = {
    cwd: dir,
    strict: true,
    preserveOwner: false,
    // Existing files (a --force import's hard links to the home) are replaced, never written through.
    unlink: true,
    noMtime: false,
    filter: (path: string, entry: import("tar").ReadEntry | import("node:fs").Stats) => {
      if (refusal) return false;
      const p = path.replace(/^\.\//, "");
      if (!("type" in entry)) return false;
      // Every entry counts against the file cap, folders too: a tar of millions of folder
      // entries is millions of mkdirs.
      if (p !== MANIFEST && ++entries > limits.maxFiles) {
        refuse(`holds more than ${limits.maxFiles} files and folders, the cap`);
        return false;
      }
      if (p.startsWith("/") || p.split("/").includes("..")) {
        refusal ??= new AgentError("backup.invalid_archive", `${archive} holds an entry an agent backup never has: ${p.slice(0, 200)}`);
        unpack.abort(refusal);
        return false;
      }
      // A profile the rules would not let anyone create (reserved, `default`, an invalid name) is
      // not restored either: the whole import is refused.
      const parts = p.split("/");
      if (parts[0] === "profiles" && parts[1]) {
        try {
          checkProfileName(parts[1], "new", "profile");
        } catch (error) {
          const e = toAgentError(error);
          refusal ??= new AgentError(e.code, `${archive} holds profiles/${parts[1].slice(0, 80)}: ${e.message}; nothing was restored`, {
            name: parts[1].slice(0, 200),
          });
          unpack.abort(refusal);
          return false;
        }
      }
      if (entry.type === "Directory") {
        if (typeof entry.mode === "number") entry.mode &= 0o777;
        return true;
      }
      if (entry.type !== "File" && entry.type !== "OldFile") {
        refusal ??= new AgentError("backup.invalid_archive", `${archive} holds an entry an agent backup never has: ${p.slice(0, 200)} (${entry.type})`);
        unpack.abort(refusal);
        return false;
      }
      const size = entry.size ?? 0;
      if (p === MANIFEST) manifest = true;
      else files++;
      bytes += size;
      if (size > limits.maxFileBytes) refuse(`holds a file of ${human(size)} (${p.slice(0, 200)}), over the cap of ${human(limits.maxFileBytes)} per file`);
      else if (bytes > limits.maxBytes) refuse(`holds more than ${human(limits.maxBytes)} of files, the cap`);
      // Never setuid, setgid or sticky; the owner is the importing user.
      if (typeof entry.mode === "number") entry.mode &= 0o777;
      return !refusal;
    },
  };
  const unpack = fresh ? new Parser(options) : new Unpack(options);
  let written: Error | null = null;
  const writer = fresh ? new ExtractWriter(dir) : null;
  if (writer)
    extractFresh(unpack, dir, cronCandidates!, writer, (error) => {
      written ??= error;
      unpack.abort(error);
    });
  // Two zero blocks end every tar: without them the archive was cut at an entry's end (a tar
  // killed while piped into gzip still makes a valid .gz) and files would be silently missing.
  let ended = false;
  unpack.on("eof", () => {
    ended = true;
  });
  try {
    // Node's gunzip, not node-tar's: it inflates a chunk at a time as the disk takes it, where
    // one 64 KiB read of zeros inflated at once is 64 MB in memory.
    await pipeline(createReadStream(archive), createGunzip({ chunkSize: 64 * 1024 }), unpack);
    await writer?.finish();
  } catch (error) {
    writer?.close();
    // A write that failed says why (ENOSPC), whatever the parser made of the abort.
    if (writer?.failed) await writer.finish().catch((e: Error) => (written = e));
    if (refusal) throw refusal;
    if (written) throw written;
    if (error instanceof AgentError) throw error;
    const e = error as NodeJS.ErrnoException & { tarCode?: string };
    const code = e.code ?? e.tarCode ?? "";
    if (/^TAR_(BAD_ARCHIVE|ABORT|ENTRY_INVALID|ENTRY_UNSUPPORTED)$|^Z_/.test(code) || /zlib|decompression|invalid|unexpected end/i.test(e.message))
      throw new AgentError("backup.invalid_archive", `${archive} is not a readable .tar.gz: ${e.message}`, { code }, { cause: error });
    throw error;
  }
  if (refusal) throw refusal;
  if (written) throw written;
  if (!ended) throw new AgentError("backup.invalid_archive", `${archive} is cut short (no end-of-archive blocks): a truncated archive; nothing was restored`);
  if (!manifest) throw new AgentError("backup.invalid_archive", `${archive} is not an agent backup (no ${MANIFEST} at its root)`);
  rmSync(join(dir, MANIFEST), { force: true });
  return files;
}

/**
 * The writes of a fresh import, done in a thread of their own (extract-thread.ts) while this
 * one inflates and parses: batches of whole files and folders, in order, at most MAX_BATCHES
 * of them (about 1 MiB each) waiting, so memory stays bounded whatever the archive's ratio.
 * `finish` waits for the last write and throws the first that failed (a full disk).
 */
class ExtractWriter {
  static readonly MAX_BATCHES = 8;
  readonly #state = new Int32Array(new SharedArrayBuffer(8));
  readonly #worker: Worker;
  #batch: ExtractOp[] = [];
  #bytes = 0;
  #posted = 0;
  readonly #reply: Promise<ExtractReply>;

  constructor(root: string) {
    const data: ExtractThreadData = { root, state: this.#state.buffer as SharedArrayBuffer };
    this.#worker = new Worker(threadScript(import.meta.url, "extract-thread.js"), { workerData: data });
    this.#reply = new Promise((resolve, reject) => {
      this.#worker.on("message", (m: ExtractReply) => resolve(m));
      this.#worker.once("error", reject);
      this.#worker.once("exit", (code) => reject(new Error(`the import's writing thread exited (${code})`)));
    });
    // A rejection nobody awaits yet (the import failed before finish) is not unhandled.
    this.#reply.catch(() => undefined);
  }

  /** A write failed: what follows is skipped, and finish throws it. */
  get failed(): boolean {
    return Atomics.load(this.#state, 1) === 1;
  }

  add(op: ExtractOp): void {
    this.#batch.push(op);
    if ("data" in op) this.#bytes += op.data.length;
    else if ("write" in op) this.#bytes += op.write.length;
    if (this.#batch.length >= 256 || this.#bytes >= 1 << 20) this.flush();
  }

  flush(): void {
    if (this.#batch.length === 0) return;
    this.#worker.postMessage({ ops: this.#batch } satisfies ExtractMessage);
    this.#posted++;
    this.#batch = [];
    this.#bytes = 0;
    // The parser runs ahead of the disk: wait (this thread only; an import runs in a process of
    // its own) until few enough batches are left.
    for (let done = Atomics.load(this.#state, 0); this.#posted - done > ExtractWriter.MAX_BATCHES; done = Atomics.load(this.#state, 0))
      Atomics.wait(this.#state, 0, done, 1000);
  }

  async finish(): Promise<void> {
    this.flush();
    this.#worker.postMessage({ end: true } satisfies ExtractMessage);
    const reply = await this.#reply;
    await this.#worker.terminate();
    if (reply.error) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
  }

  close(): void {
    void this.#worker.terminate();
  }
}

/**
 * Hand the entries the parser lets through to `writer`, each file whole (an agent backup's files
 * are small; the file cap bounds one), for the fresh folder `dir`. Only files and folders get
 * here (the filter refuses the rest), and `dir` is this import's own new folder, so no link can
 * be in the way.
 */
function extractFresh(parser: import("tar").Parser, dir: string, cronCandidates: Set<string>, writer: ExtractWriter, fail: (error: Error) => void): void {
  parser.on("entry", (entry: import("tar").ReadEntry) => {
    if (writer.failed) {
      entry.resume();
      return fail(new Error("the import's writes failed"));
    }
    const target = join(dir, entry.path.replace(/^\.\//, "").replace(/\/+$/, ""));
    if (entry.type === "Directory") {
      writer.add({ dir: target, mode: entry.mode ?? 0o755 });
      entry.resume();
      return;
    }
    const mode = (entry.mode ?? 0o644) | 0o600;
    // An actor file that names the cron actor (computePreview reads only those).
    const rel = entry.path.replace(/^\.\//, "");
    let tail = ACTOR_FILE_RE.test(rel) ? "" : null;
    // A file is handed over whole, or, past PART bytes, opened and written in parts as it comes.
    let chunks: Buffer[] = [];
    let held = 0;
    let opened = false;
    const part = () => {
      const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      chunks = [];
      held = 0;
      return data;
    };
    entry.on("data", (chunk: Buffer) => {
      if (tail !== null) {
        const text = tail + chunk.toString("latin1");
        if (text.includes(CRON_MARK)) {
          cronCandidates.add(rel);
          tail = null;
        } else tail = text.slice(-CRON_MARK.length);
      }
      chunks.push(chunk);
      held += chunk.length;
      if (held >= PART) {
        if (!opened) writer.add({ open: target, mode });
        opened = true;
        writer.add({ write: part() });
      }
    });
    entry.on("end", () => {
      const mtime = entry.mtime ? entry.mtime.getTime() : null;
      if (!opened) return writer.add({ file: target, mode, mtime, data: part() });
      if (held > 0) writer.add({ write: part() });
      writer.add({ close: mtime });
    });
  });
}

/** A file larger than this goes to the writing thread in parts of about this size. */
const PART = 256 * 1024;

/** An actor's file in its shard folder, and what a cron table's file holds (computePreview). */
const ACTOR_FILE_RE = /^data\/actors\/[0-9a-f]{2}\/[^/]+\.json$/;
const CRON_MARK = '"name":"cron"';

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost", "[::1]"]);
const isLoopback = (host: string) => LOOPBACK.has(host.trim().toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host.trim());
/** Env names that hold a token or key (the value is never read out). */
const TOKEN_NAME = /(^|_)(TOKEN|KEY|API_KEY|APIKEY|SECRET|PASSWORD|PASSWD)$/i;

/** Profile folders of a home: the home itself and `profiles/*`. */
function profileDirs(root: string): { name: string; dir: string }[] {
  const out = [{ name: "default", dir: root }];
  try {
    for (const d of readdirSync(join(root, "profiles"), { withFileTypes: true }))
      if (d.isDirectory()) out.push({ name: d.name, dir: join(root, "profiles", d.name) });
  } catch {
    // no profiles
  }
  return out;
}

async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return null;
  }
}

async function listFiles(dir: string, rel: string, out: string[], limit = 200): Promise<void> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (out.length >= limit) return;
    if (d.isDirectory()) await listFiles(join(dir, d.name), `${rel}/${d.name}`, out, limit);
    else out.push(`${rel}/${d.name}`);
  }
}

/**
 * What would run or listen in the staged tree `root` (paths in the result are relative to the
 * home). `cronCandidates`: the actor files (relative) that name the cron actor, noted as they
 * were written; without it every actor file is read for that.
 */
export async function computePreview(root: string, cronCandidates?: Set<string>): Promise<ImportPreview> {
  const preview: ImportPreview = { actors: [], cron: [], commands: [], network: [], tokens: [] };
  await listFiles(join(root, "actors"), "actors", preview.actors);
  // Language servers installed in the home run when a file is diagnosed.
  try {
    if (readdirSync(join(root, "lsp")).length) preview.commands.push("lsp/ (installed language servers, run by diagnostics)");
  } catch {
    // none
  }
  for (const { name, dir } of profileDirs(root)) {
    const prefix = name === "default" ? "" : `profiles/${name}/`;
    const configText = await readText(join(dir, "config.yaml"));
    if (configText !== null) {
      const doc = parseDocument(configText);
      let data: Record<string, any> | null = null;
      let unreadable = doc.errors[0]?.message;
      if (!unreadable)
        try {
          data = doc.toJS() as Record<string, any> | null;
        } catch (error) {
          // An alias bomb: the daemon refuses it too, but what it hides is not checked here.
          unreadable = (error as Error).message;
        }
      // Never passed over in silence: a bind in it could not be checked (whoever fixes the file
      // by hand would start the daemon on it).
      if (unreadable)
        preview.network.push({
          file: `${prefix}config.yaml`,
          key: "gateway.host",
          value: `unchecked: ${prefix}config.yaml is not readable YAML (${unreadable.split("\n")[0]!.slice(0, 200)})`,
        });
      // Settings that let tool calls run without asking: listed with what runs.
      const approvals = data?.approvals;
      if (approvals?.mode === "off") preview.commands.push(`${prefix}config.yaml approvals.mode: off (tool calls run without asking)`);
      if (approvals?.non_interactive === "allow")
        preview.commands.push(`${prefix}config.yaml approvals.non_interactive: allow (cron and kanban tool calls run without asking)`);
      if (data?.mcp_servers && typeof data.mcp_servers === "object")
        for (const [id, m] of Object.entries(data.mcp_servers as Record<string, any>))
          if (m?.approve === "off") preview.commands.push(`${prefix}config.yaml mcp_servers.${id}.approve: off (its tools run without asking)`);
      // Every listener of the daemon: the gateway, the local proxy and the API server.
      for (const section of ["gateway", "proxy", "api_server"] as const) {
        const host = data?.[section]?.host;
        if (typeof host === "string" && !isLoopback(host)) preview.network.push({ file: `${prefix}config.yaml`, key: `${section}.host`, value: host });
      }
      const servers = data?.lsp?.servers;
      if (servers && typeof servers === "object")
        for (const [id, s] of Object.entries(servers as Record<string, any>))
          if (Array.isArray(s?.command) && s.command.length)
            preview.commands.push(`${prefix}config.yaml lsp.servers.${id}.command: ${s.command.join(" ").slice(0, 200)}`);
      const walk = (obj: unknown, path: string) => {
        if (!obj || typeof obj !== "object" || Array.isArray(obj)) return;
        for (const [k, v] of Object.entries(obj)) {
          const key = path ? `${path}.${k}` : k;
          if (typeof v === "string" && v !== "" && isSecretKey(key)) preview.tokens.push({ file: `${prefix}config.yaml`, name: key });
          else walk(v, key);
        }
      };
      walk(data, "");
    }
    const envText = await readText(join(dir, ".env"));
    if (envText !== null) {
      const env = parseDotenv(envText);
      for (const [k, v] of Object.entries(env)) {
        if ((k === "AGENT_GATEWAY_HOST" || k === "AGENT_PROXY_HOST") && !isLoopback(v)) preview.network.push({ file: `${prefix}.env`, key: k, value: v });
        else if (TOKEN_NAME.test(k) && v !== "") preview.tokens.push({ file: `${prefix}.env`, name: k });
      }
    }
    // Jobs declared in cron/ files: enabled only when the file says so.
    try {
      for (const f of readdirSync(join(dir, "cron")).sort()) {
        if (!/\.(ya?ml|json)$/.test(f)) continue;
        const text = await readText(join(dir, "cron", f));
        if (text === null) continue;
        let data: any;
        try {
          data = f.endsWith(".json") ? JSON.parse(text) : parseDocument(text).toJS();
        } catch {
          continue;
        }
        const list = Array.isArray(data) ? data : Array.isArray(data?.jobs) ? data.jobs : data && typeof data === "object" ? [data] : [];
        for (const [i, j] of list.entries())
          if (j && typeof j === "object" && j.enabled === true)
            preview.cron.push({
              profile: name,
              // The id the cron service gives a job declared in a file (service.ts syncFiles).
              id: `c_${createHash("sha256")
                .update(`${name}\0cron/${f}\0${typeof j.name === "string" ? j.name : `#${i}`}`)
                .digest("hex")
                .slice(0, 8)}`,
              name: typeof j.name === "string" ? j.name : `#${i}`,
              schedule: String(j.schedule ?? ""),
              runs: typeof j.script === "string" ? `script: ${j.script}` : `prompt: ${String(j.prompt ?? (j.skills ?? []).join(" "))}`,
            });
      }
    } catch {
      // no cron folder
    }
  }
  // Cron tables: the `cron` actors' state (backups fold journals into these files first).
  const actorData = join(root, "data", "actors");
  let shards: string[] = [];
  try {
    shards = readdirSync(actorData).filter((n) => /^[0-9a-f]{2}$/.test(n));
  } catch {
    // no actors
  }
  for (const shard of shards) {
    let names: string[];
    try {
      names = readdirSync(join(actorData, shard));
    } catch {
      continue;
    }
    for (const n of names) {
      if (!n.endsWith(".json")) continue;
      if (cronCandidates && !cronCandidates.has(`data/actors/${shard}/${n}`)) continue;
      try {
        const text = readFileSync(join(actorData, shard, n), "utf8");
        if (!text.includes(CRON_MARK)) continue;
        const doc = JSON.parse(text);
        const file = doc?.data ?? doc;
        if (file?.record?.name !== "cron" || file?.record?.destroy_ts || typeof file.state !== "string") continue;
        const state = JSON.parse(file.state) as { profile?: string; jobs?: Record<string, any> };
        for (const j of Object.values(state.jobs ?? {})) {
          if (!j?.enabled || j.finished) continue;
          // A file-declared job enabled in its file is listed with its file already.
          if (j.source && preview.cron.some((c) => c.profile === (state.profile ?? j.profile) && c.name === j.name)) continue;
          preview.cron.push({
            profile: String(state.profile ?? j.profile ?? "default"),
            id: String(j.id),
            name: String(j.name ?? ""),
            schedule: String(j.schedule ?? ""),
            runs: j.mode === "script" ? `script: ${j.script}` : `prompt: ${String(j.prompt ?? (j.skills ?? []).join(" "))}`,
          });
        }
      } catch {
        // Not readable as an actor file: the daemon decides at its start.
      }
    }
  }
  return preview;
}

function makeStaged(
  archive: string,
  home: string,
  staging: string,
  files: number,
  preview: ImportPreview,
  force: boolean,
  replacedLinks: string[],
): StagedImport {
  let applied = false;
  const needsConsent = Object.values(preview).some((list) => list.length > 0);
  return {
    home,
    archive,
    files,
    preview,
    needsConsent,
    async discard() {
      if (!applied) await removeTree(staging).catch(() => undefined);
    },
    async apply({ keepCron = false, keepNetwork = false }) {
      if (applied) throw new AgentError("backup.import_failed", "this import was already applied");
      try {
        const cronPaused = keepCron ? [] : preview.cron.map((c) => ({ profile: c.profile, id: c.id, name: c.name }));
        // Always (without --keep-cron), not only when the preview found jobs: a job the preview
        // could not read (a table in an unfolded journal) is paused all the same.
        if (!keepCron) {
          await mkdir(join(staging, "data"), { recursive: true });
          await writeFileAtomic(join(staging, CRON_PAUSE_MARKER), `${JSON.stringify({ pauseCron: true, importedAt: new Date().toISOString(), archive })}\n`, {
            mode: 0o600,
          });
        }
        const networkReset = keepNetwork ? [] : await resetNetwork(staging, preview);
        // Into place: one rename into an empty (or missing) home; with --force, the home is moved
        // aside first (a kill between the two renames is undone by cleanImportLeftovers). Only a
        // --force import ever moves a home aside: one staged into an empty home that was filled
        // meanwhile (another import, a daemon start while the question waited) fails instead.
        if (force) {
          // A daemon started on the home while this import waited: its home is never pulled away.
          const lock = join(home, "daemon.lock");
          const owner = readLockPid(lock);
          if (owner !== null && lockOwnerAlive(lock))
            throw new AgentError(
              "backup.daemon_running",
              `a daemon (pid ${owner}) started on ${home} while the archive was restored; nothing of this import was put in place: stop it (agent daemon stop), then import again`,
              { pid: owner },
            );
          const old = join(dirname(home), `.${basename(home)}.import-old-${process.pid}-${Date.now()}`);
          await writeFileAtomic(join(staging, SWAP_MARKER), `${JSON.stringify({ old: basename(old) })}\n`, { mode: 0o600 });
          await rename(home, old);
          try {
            await rename(staging, home);
          } catch (error) {
            await rename(old, home);
            throw error;
          }
          applied = true;
          await removeTree(old).catch(() => undefined);
          if (!existsSync(old)) rmSync(join(home, SWAP_MARKER), { force: true });
        } else {
          // rename(2) replaces an empty folder.
          try {
            await rename(staging, home);
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (code === "ENOTEMPTY" || code === "EEXIST")
              throw new AgentError(
                "backup.home_not_empty",
                `${home} was filled while the archive was restored (another import, or a daemon start?); nothing of this import was put in place`,
              );
            throw error;
          }
          applied = true;
        }
        return { home, archive, files, preview, cronPaused, networkReset, replacedLinks };
      } catch (error) {
        await removeTree(staging).catch(() => undefined);
        applied = true;
        throw importError(error, home);
      }
    },
  };
}

/** Point every non-loopback bind of the staged home back at 127.0.0.1 (config.yaml) or drop it (.env). */
async function resetNetwork(root: string, preview: ImportPreview): Promise<ImportPreview["network"]> {
  const reset: ImportPreview["network"] = [];
  for (const n of preview.network) {
    const file = join(root, n.file);
    const text = await readText(file);
    if (text === null) continue;
    if (n.file.endsWith(".env")) {
      const out = removeDotenvKeys(text, [n.key]);
      await writeFileAtomic(file, out.text, { mode: 0o600 });
    } else {
      const doc = parseDocument(text);
      if (!isDocument(doc) || doc.errors.length) continue;
      const path = n.key.split(".");
      // A section that is an alias of another (`gateway: *shared`) becomes its own copy first:
      // setIn cannot go through an alias, and the anchored original is left as it was.
      for (let i = 1; i < path.length; i++) {
        const node = doc.getIn(path.slice(0, i), true);
        if (isAlias(node)) {
          const copy = node.resolve(doc)?.clone() as Scalar | YAMLMap | YAMLSeq | undefined;
          if (copy) copy.anchor = undefined;
          doc.setIn(path.slice(0, i), copy);
        }
      }
      doc.setIn(path, "127.0.0.1");
      await writeFileAtomic(file, doc.toString(), { mode: 0o600 });
    }
    reset.push(n);
  }
  return reset;
}

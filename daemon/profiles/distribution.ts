import { execFile } from "node:child_process";
import { copyFile, lstat, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { isAbsolute, join, normalize, resolve, sep } from "node:path";
import semver from "semver";
import { isMap, isSeq, parseDocument, type Document } from "yaml";
import { AgentError } from "../../shared/errors.js";
import { checkProfileName } from "./names.js";

/**
 * Profile distributions: a folder (a git repository or a local directory) with a
 * `distribution.yaml` at its root, installed as a profile. Everything here runs in the daemon.
 */

export const MANIFEST = "distribution.yaml";

export interface EnvRequirement {
  name: string;
  description: string | null;
  optional: boolean;
}

export interface Manifest {
  name: string;
  version: string;
  agent_requires: string | null;
  author: string | null;
  description: string | null;
  env_requires: EnvRequirement[];
  distribution_owned: string[];
}

/** Paths an update replaces, besides the manifest's own `distribution_owned` list. */
export const DISTRIBUTION_OWNED = ["SOUL.md", "skills", "cron", "mcp.json", MANIFEST];

/** The user's own files: never copied in from a distribution, never replaced by an update. */
const USER_OWNED = [".env", "auth.json", "memories", "sessions", "logs"];
const isStateDb = (name: string) => name === "state.db" || name.startsWith("state.db");

/** What an update never touches (user-owned files and the profile's working folders). */
export function neverTouched(top: string): boolean {
  return USER_OWNED.includes(top) || isStateDb(top) || ["workspace", "plans", "home", "local"].includes(top) || top.endsWith("_cache");
}

/** Whether a distribution file is copied in at install (user-owned files and `.git` are not). */
export function installable(rel: string): boolean {
  const top = rel.split("/")[0]!;
  return top !== ".git" && !USER_OWNED.includes(top) && !isStateDb(top);
}

function invalid(file: string, why: string): AgentError {
  return new AgentError("profile.invalid_distribution", `${file}: ${why}`, { file });
}

const optString = (v: unknown, key: string, file: string): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v === "number") return String(v);
  if (typeof v !== "string") throw invalid(file, `${key} must be a string`);
  return v;
};

/** A relative path inside the profile: no absolute paths, no `..`, no empty parts. */
export function safeRelative(p: string, what: string, file: string): string {
  const n = normalize(p).replace(/\/+$/, "");
  if (!p || isAbsolute(p) || n === "." || n === ".." || n.startsWith(`..${sep}`) || n.includes(`${sep}..${sep}`) || n.endsWith(`${sep}..`)) {
    throw new AgentError(
      "profile.unsafe_distribution",
      `${file}: ${what} ${JSON.stringify(p)} leaves the profile folder; paths must be relative and inside it`,
      { file, path: p },
    );
  }
  return n;
}

/** Read and check a manifest. The Document is kept so installing it keeps its comments. */
export function parseManifest(text: string, file: string): { doc: Document; manifest: Manifest } {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) throw invalid(file, `not valid YAML: ${doc.errors[0]!.message}`);
  const raw = doc.toJS() as Record<string, unknown> | null;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalid(file, "must be a mapping (name, version, ...)");
  const name = optString(raw.name, "name", file);
  if (!name) throw invalid(file, "name is missing");
  checkProfileName(name, "new", "distribution name");
  const version = optString(raw.version, "version", file);
  if (!version) throw invalid(file, "version is missing");
  if (!semver.valid(version) && !semver.coerce(version)) throw invalid(file, `version ${JSON.stringify(version)} is not a version number`);
  const envRaw = raw.env_requires ?? [];
  if (!Array.isArray(envRaw)) throw invalid(file, "env_requires must be a list");
  const env_requires = envRaw.map((e): EnvRequirement => {
    if (typeof e === "string") return { name: e, description: null, optional: false };
    if (e && typeof e === "object" && typeof (e as { name?: unknown }).name === "string") {
      const o = e as { name: string; description?: unknown; optional?: unknown; required?: unknown };
      return { name: o.name, description: optString(o.description, "env_requires description", file), optional: o.optional === true || o.required === false };
    }
    throw invalid(file, "each env_requires entry is a variable name or {name, description, optional}");
  });
  for (const e of env_requires)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(e.name)) throw invalid(file, `env_requires: ${JSON.stringify(e.name)} is not a variable name`);
  const ownedRaw = raw.distribution_owned ?? [];
  if (!Array.isArray(ownedRaw) || !ownedRaw.every((p) => typeof p === "string")) throw invalid(file, "distribution_owned must be a list of paths");
  const distribution_owned = (ownedRaw as string[]).map((p) => {
    const rel = safeRelative(p, "distribution_owned entry", file);
    if (neverTouched(rel.split(sep)[0]!)) throw invalid(file, `distribution_owned cannot claim ${p}: it belongs to the user`);
    return rel;
  });
  return {
    doc,
    manifest: {
      name,
      version,
      agent_requires: optString(raw.agent_requires, "agent_requires", file),
      author: optString(raw.author, "author", file),
      description: optString(raw.description, "description", file),
      env_requires,
      distribution_owned,
    },
  };
}

const CONSTRAINT = /(>=|<=|==|!=|>|<|=)?\s*v?([0-9][^\s,]*)/g;

/**
 * Whether `version` meets `spec`: constraints (`>=, <=, ==, !=, >, <`, or a bare version
 * meaning `>=`) separated by commas or spaces, all of which must hold. Compared with semver;
 * `1.2` means `1.2.0`.
 */
export function meetsRequirement(spec: string, version: string): boolean {
  const parts = [...spec.matchAll(CONSTRAINT)];
  const rest = spec.replace(CONSTRAINT, "").replace(/[\s,]/g, "");
  if (!parts.length || rest)
    throw new AgentError(
      "profile.invalid_distribution",
      `agent_requires ${JSON.stringify(spec)} is not understood; use e.g. ">=0.1.0", "<2", "==1.0.0", "!=1.1.0" or a bare version`,
    );
  const have = semver.coerce(version, { includePrerelease: true })?.version ?? version;
  return parts.every(([, op, raw]) => {
    const want = semver.valid(raw!) ?? semver.coerce(raw!)?.version;
    if (!want) throw new AgentError("profile.invalid_distribution", `agent_requires: ${JSON.stringify(raw)} is not a version`);
    switch (op ?? ">=") {
      case ">=":
        return semver.gte(have, want);
      case "<=":
        return semver.lte(have, want);
      case ">":
        return semver.gt(have, want);
      case "<":
        return semver.lt(have, want);
      case "!=":
        return semver.neq(have, want);
      default: // "==" and "="
        return semver.eq(have, want);
    }
  });
}

const looksLikeGit = (s: string) => /^(https?|ssh|git|file):\/\//.test(s) || /^[\w.-]+@[\w.-]+:/.test(s) || s.endsWith(".git");

/**
 * Get a distribution: a local directory is read in place; a git URL is shallow-cloned into
 * `staging` with the system git (argument list, no shell). Returns the folder to read.
 */
export async function fetchSource(source: string, cwd: string, staging: string): Promise<{ kind: "git" | "directory"; root: string; source: string }> {
  if (source.startsWith("-")) throw new AgentError("profile.source_not_found", `invalid source ${JSON.stringify(source)}`);
  if (!/^[a-z]+:\/\//.test(source) && !/^[\w.-]+@[\w.-]+:/.test(source)) {
    const dir = resolve(cwd, source);
    const st = await stat(dir).catch(() => null);
    if (st?.isDirectory()) return { kind: "directory", root: dir, source: dir };
    if (!looksLikeGit(source)) throw new AgentError("profile.source_not_found", `no directory at ${dir}, and ${source} is not a git URL`, { source });
  }
  const dest = join(staging, "repo");
  await new Promise<void>((done, fail) => {
    execFile(
      "git",
      ["clone", "--depth", "1", "--quiet", "--", source, dest],
      { env: { ...process.env, GIT_TERMINAL_PROMPT: "0" }, timeout: 300_000, maxBuffer: 4 * 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (!error) return done();
        const e = error as NodeJS.ErrnoException;
        if (e.code === "ENOENT") return fail(new AgentError("profile.clone_failed", "git is not installed: installing from a git URL needs the git command"));
        fail(new AgentError("profile.clone_failed", `git clone ${source} failed: ${String(stderr).trim() || e.message}`, { source }));
      },
    );
  });
  return { kind: "git", root: dest, source };
}

/**
 * Every file of a distribution, relative to its root, walked with lstat: a symlink (or a
 * device, a socket, …) anywhere is refused, so nothing can point or write outside the profile.
 */
export async function walkDistribution(root: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const entry of (await readdir(join(root, rel))).sort()) {
      const child = rel ? `${rel}/${entry}` : entry;
      if (!rel && entry === ".git") continue;
      const st = await lstat(join(root, child));
      if (st.isSymbolicLink())
        throw new AgentError("profile.unsafe_distribution", `the distribution contains a symlink (${child}); symlinks are refused`, { path: child });
      if (st.isDirectory()) await walk(child);
      else if (st.isFile()) files.push(child);
      else throw new AgentError("profile.unsafe_distribution", `the distribution contains ${child}, which is not a regular file or folder`, { path: child });
    }
  };
  await walk("");
  return files;
}

/** Copy `files` (relative paths) from `from` to `to`, creating folders; each target is checked to stay inside `to`. */
export async function copyFiles(from: string, to: string, files: string[]): Promise<void> {
  const base = resolve(to);
  for (const rel of files) {
    const target = resolve(base, rel);
    if (!target.startsWith(base + sep)) throw new AgentError("profile.unsafe_distribution", `${rel} leaves the profile folder`, { path: rel });
    await mkdir(join(target, ".."), { recursive: true });
    await copyFile(join(from, rel), target);
  }
}

/**
 * Cron jobs come installed but not scheduled: every job in `cron/*.yaml|yml|json` gets
 * `enabled: false` (a file holding a `jobs` list, a list, or one job), so the user turns each
 * on deliberately. Returns the number of jobs.
 */
export async function disableCronJobs(profileDir: string, files: string[]): Promise<number> {
  let jobs = 0;
  for (const rel of files.filter((f) => /^cron\/.+\.(ya?ml|json)$/.test(f))) {
    const file = join(profileDir, rel);
    const text = await readFile(file, "utf8");
    if (rel.endsWith(".json")) {
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        throw invalid(rel, "not valid JSON");
      }
      const list = Array.isArray(data)
        ? data
        : data && typeof data === "object" && Array.isArray((data as { jobs?: unknown }).jobs)
          ? (data as { jobs: unknown[] }).jobs
          : [data];
      for (const job of list) if (job && typeof job === "object") ((job as Record<string, unknown>).enabled = false), jobs++;
      await writeFile(file, JSON.stringify(data, null, 2) + "\n");
      continue;
    }
    const doc = parseDocument(text);
    if (doc.errors.length) throw invalid(rel, `not valid YAML: ${doc.errors[0]!.message}`);
    const jobsNode = isMap(doc.contents) ? doc.get("jobs") : null;
    const list = isSeq(doc.contents) ? doc.contents.items : isSeq(jobsNode) ? jobsNode.items : isMap(doc.contents) ? [doc.contents] : [];
    for (const job of list) if (isMap(job)) job.set("enabled", false), jobs++;
    await writeFile(file, doc.toString());
  }
  return jobs;
}

/** ISO-8601 UTC with seconds, no milliseconds. */
export function isoSeconds(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { copyFile, lstat, mkdir, readdir, readFile, stat } from "node:fs/promises";
import { isAbsolute, join, normalize, resolve, sep } from "node:path";
import { parseDocument, type Document } from "yaml";
import { CONFIG_VERSION } from "../../shared/config/defaults.js";
import { cronFileJobs, formatCronFile, parseCronFile } from "../../shared/cron-file.js";
import { AgentError } from "../../shared/errors.js";
import { parseSchedule } from "../cron/api.js";
import { writeFileAtomic } from "../store/atomic-file.js";
import { checkProfileName } from "../../shared/profile-names.js";

// semver compiles its regular expressions when it loads: it is loaded when a distribution's
// version is first checked, not at every daemon start (this module is part of the profiles feature).
const requireCjs = createRequire(import.meta.url);
let semverLib: typeof import("semver") | null = null;
function semverApi(): typeof import("semver") {
  semverLib ??= requireCjs("semver") as typeof import("semver");
  return semverLib;
}

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

/** What a manifest's `distribution_owned` may never claim: what an update never touches, and the user's config and description. */
export function userOwned(top: string): boolean {
  return neverTouched(top) || top === "config.yaml" || top === "profile.yaml";
}
const USER_FILES_TEXT = "config.yaml, profile.yaml, .env, auth.json, memories/, sessions/, state.db*, logs/, workspace/, plans/, home/, *_cache/ or local/";

/** Whether a distribution file is copied in at install (user-owned files, profile.yaml and `.git` are not). */
export function installable(rel: string): boolean {
  const top = rel.split("/")[0]!;
  return top !== ".git" && top !== "profile.yaml" && !USER_OWNED.includes(top) && !isStateDb(top);
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
  const semver = semverApi();
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
    if (userOwned(rel.split(sep)[0]!))
      throw invalid(
        file,
        `distribution_owned cannot claim ${p}: it belongs to the user (an update never replaces ${USER_FILES_TEXT}; config.yaml only with --force-config)`,
      );
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
  const semver = semverApi();
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
 * on deliberately. The file is read as the cron loader reads it (anchors, aliases and `<<` merge
 * keys resolved) and written back spelled out, so no alias can carry an `enabled: true` past
 * this. A schedule that is not valid or never fires refuses the distribution. Returns the
 * number of jobs.
 */
export async function disableCronJobs(profileDir: string, files: string[]): Promise<number> {
  let jobs = 0;
  for (const rel of files.filter(isCronFile)) {
    const file = join(profileDir, rel);
    const json = rel.endsWith(".json");
    let data: unknown;
    try {
      data = parseCronFile(await readFile(file, "utf8"), json);
    } catch (error) {
      throw invalid(rel, (error as Error).message);
    }
    const list = cronFileJobs(data);
    for (const [i, job] of list.entries()) {
      if (!job || typeof job !== "object" || Array.isArray(job)) continue;
      const j = job as Record<string, unknown>;
      j.enabled = false;
      jobs++;
      if (typeof j.schedule === "string") {
        try {
          parseSchedule(j.schedule, Date.now(), "UTC");
        } catch (error) {
          throw invalid(rel, `job ${typeof j.name === "string" ? JSON.stringify(j.name) : `#${i}`}: ${(error as Error).message}`);
        }
      }
    }
    // Replaced, never rewritten in place: a crash leaves the old or the new file, and a file
    // that shares its inode with another (a hard link) never changes the other.
    await writeFileAtomic(file, formatCronFile(data, json), { mode: 0o644 });
  }
  return jobs;
}

/**
 * The MCP servers a distribution brings are installed switched off, like its cron jobs: each
 * server of `mcpJsonDir`'s mcp.json (and, for a config.yaml that came with the distribution,
 * each of its `mcp_servers`) gets `mcp_servers.<name>.enabled: false` in `configFile`, which
 * wins over mcp.json, until the user runs `agent -p <profile> mcp enable <name>`. With
 * `keepChoices` (an update that keeps the user's config.yaml), a server the config already
 * says `enabled` about keeps that choice and the config's own servers are the user's. Returns
 * the names switched off.
 */
export async function disableMcpServers(mcpJsonDir: string, configFile: string, keepChoices: boolean): Promise<string[]> {
  const names = new Set<string>();
  const json = await readFile(join(mcpJsonDir, "mcp.json"), "utf8").catch(() => null);
  if (json !== null) {
    let servers: unknown;
    try {
      servers = (JSON.parse(json) as { mcpServers?: unknown } | null)?.mcpServers;
    } catch (error) {
      throw invalid("mcp.json", `not valid JSON: ${(error as Error).message}`);
    }
    if (servers && typeof servers === "object" && !Array.isArray(servers)) for (const name of Object.keys(servers)) names.add(name);
  }
  const text = await readFile(configFile, "utf8").catch(() => null);
  // A profile without a config.yaml gets one of the current version, holding just these switches.
  const doc = parseDocument(text ?? `_config_version: ${CONFIG_VERSION}\n`);
  if (doc.errors.length) throw invalid("config.yaml", doc.errors[0]!.message);
  if (!keepChoices) {
    const own = (doc.toJS() as { mcp_servers?: unknown } | null)?.mcp_servers;
    if (own && typeof own === "object" && !Array.isArray(own)) for (const name of Object.keys(own)) names.add(name);
  }
  const off: string[] = [];
  for (const name of [...names].sort()) {
    if (keepChoices && doc.hasIn(["mcp_servers", name, "enabled"])) continue;
    doc.setIn(["mcp_servers", name, "enabled"], false);
    off.push(name);
  }
  if (off.length) await writeFileAtomic(configFile, doc.toString(), { mode: 0o600 });
  return off;
}

export const isCronFile = (rel: string): boolean => /^cron\/.+\.(ya?ml|json)$/.test(rel);

/** ISO-8601 UTC with seconds, no milliseconds. */
export function isoSeconds(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A URL a distribution's config (or mcp.json) points somewhere, with where it was found. */
export interface Endpoint {
  file: string;
  path: string;
  url: string;
}

/** An environment variable a distribution's config reads (by name), with where. */
export interface ConfigEnv {
  file: string;
  path: string;
  name: string;
}

/** An API key the config would send: the variables tried, in order, and the endpoint they go to. */
export interface KeyUse {
  provider: string;
  endpoint: string;
  env: string[];
}

export interface ConfigReach {
  endpoints: Endpoint[];
  env: ConfigEnv[];
  keys: KeyUse[];
}

const URL_KEY = /^(url|base_url|.+_url|endpoint|host)$/i;
const ENV_KEY = /^(.+_env|env_var|.+_env_var)$/i;

function readData(text: string, file: string): unknown {
  if (file.endsWith(".json")) {
    try {
      return JSON.parse(text);
    } catch {
      throw invalid(file, "not valid JSON");
    }
  }
  const doc = parseDocument(text, { merge: true });
  if (doc.errors.length) throw invalid(file, `not valid YAML: ${doc.errors[0]!.message}`);
  return doc.toJS({ maxAliasCount: 1000 });
}

/**
 * Everywhere a distribution's `config.yaml` and `mcp.json` reach: every URL-like value (keys
 * url, base_url, *_url, endpoint, host), every environment variable named (keys *_env), and the
 * API key each provider would send where (its `api_key_env`, else the `AGENT_API_KEY` fallback;
 * `model.base_url` without an entry sends `OPENAI_API_KEY`), as the provider resolver picks them.
 */
export function configReach(
  files: Array<{ file: string; text: string }>,
  inherited: { providers?: Record<string, { api_key_env?: string }> } = {},
): ConfigReach {
  const reach: ConfigReach = { endpoints: [], env: [], keys: [] };
  for (const { file, text } of files) {
    const data = readData(text, file);
    const walk = (v: unknown, path: string): void => {
      if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${path}[${i}]`);
      else if (v && typeof v === "object")
        for (const [k, x] of Object.entries(v)) {
          const p = path ? `${path}.${k}` : k;
          if (typeof x === "string" && URL_KEY.test(k) && x.trim()) reach.endpoints.push({ file, path: p, url: x.trim() });
          else if (typeof x === "string" && ENV_KEY.test(k) && x.trim()) reach.env.push({ file, path: p, name: x.trim() });
          else walk(x, p);
        }
    };
    walk(data, "");
    if (file !== "config.yaml" || !data || typeof data !== "object") continue;
    const cfg = data as { model?: { base_url?: unknown; provider?: unknown }; providers?: Record<string, unknown> };
    const providers = cfg.providers && typeof cfg.providers === "object" ? cfg.providers : {};
    const modelUrl = typeof cfg.model?.base_url === "string" ? cfg.model.base_url.trim() : "";
    for (const [name, raw] of Object.entries(providers)) {
      const entry = (raw && typeof raw === "object" ? raw : {}) as { base_url?: unknown; api_key_env?: unknown };
      const endpoint = (typeof entry.base_url === "string" && entry.base_url.trim()) || modelUrl;
      if (!endpoint) continue;
      // The profile's config is layered over the home's: an entry naming no key takes the home's.
      const own = typeof entry.api_key_env === "string" && entry.api_key_env.trim() ? entry.api_key_env.trim() : null;
      const home = inherited.providers?.[name]?.api_key_env;
      const keyEnv = own ? [own] : typeof home === "string" && home ? [home] : [];
      reach.keys.push({ provider: name, endpoint, env: [...keyEnv, "AGENT_API_KEY"] });
    }
    const named = typeof cfg.model?.provider === "string" ? cfg.model.provider : null;
    if (modelUrl && !(named && named in providers))
      reach.keys.push({ provider: named ?? "default", endpoint: modelUrl, env: ["OPENAI_API_KEY", "AGENT_API_KEY"] });
  }
  return reach;
}

/** The (endpoint, variable) pairs a reach sends keys along. */
export function keyPairs(keys: KeyUse[]): Array<{ endpoint: string; env: string }> {
  const out = new Map<string, { endpoint: string; env: string }>();
  for (const k of keys) for (const env of k.env) out.set(`${k.endpoint}\0${env}`, { endpoint: k.endpoint, env });
  return [...out.values()];
}

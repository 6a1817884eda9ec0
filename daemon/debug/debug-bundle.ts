/**
 * `agent debug share` (docs/debug-and-update.md): one redacted diagnostics bundle, a JSON file
 * (0600) under $AGENT_HOME/debug/. Each section is gathered through what its feature declares:
 * the RPC methods `agent lsp status`, `agent mcp list`, `agent cron list`, … call (run in
 * process by `RpcServer.invoke`), never the features' files. The only files read are the logs
 * (the log kit's own, recent lines per component) and, to know what to scrub, the values of
 * every `.env` and `auth.json`: none of those files, nor any session, is put in the bundle.
 *
 * Redaction is the log redactor's (daemon/log/redact.ts), not a second one: a Redactor seeded
 * with every secret the daemon's own knows, plus every `.env` value (whatever its name) and the
 * string values of each `auth.json`; config values under a secret-named key are replaced too.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { arch, platform, release, type as osType } from "node:os";
import { join } from "node:path";
import { parseDotenv } from "../../shared/config/dotenv.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { appRoot, gitCommitAt } from "../../shared/install-info.js";
import { readLastLines } from "../../shared/log-follow.js";
import { profilePaths } from "../../shared/paths.js";
import type { DebugShareResult } from "../../shared/protocol/debug.js";
import type { MethodName, Params, Result } from "../../shared/protocol/index.js";
import { APP_VERSION } from "../../shared/version.js";
import { isSecretEnvName, isSecretFieldName, REDACTED, Redactor } from "../log/redact.js";
import { writeFileAtomic } from "../store/atomic-file.js";

/** Recent lines kept of each component's log. */
export const LOG_LINES = 200;
/** Bundle files kept in $AGENT_HOME/debug/ (the oldest go). */
const KEEP_BUNDLES = 10;
const UPLOAD_TIMEOUT_MS = 30_000;

export interface BundleSources {
  home: string;
  logsDir: string;
  /** Every profile of the home, `default` first. */
  profiles: string[];
  /** The secrets the daemon's log redactor knows (tokens of config, secret-named env). */
  knownSecrets: string[];
  /** A method of the RPC table, run in process as `profile`. */
  invoke<M extends MethodName>(method: M, params: Params<M>, profile?: string): Promise<Result<M>>;
  now(): number;
}

/** The redactor for a bundle: what the daemon knows, every `.env` value, and the strings of each `auth.json`. */
export function bundleRedactor(s: Pick<BundleSources, "home" | "profiles" | "knownSecrets">): Redactor {
  const r = new Redactor();
  r.setSecrets("daemon", s.knownSecrets);
  const values: string[] = [];
  for (const name of s.profiles) {
    const p = profilePaths(s.home, name);
    try {
      values.push(...Object.values(parseDotenv(readFileSync(p.env, "utf8"))));
    } catch {}
    try {
      values.push(...stringLeaves(JSON.parse(readFileSync(join(p.dir, "auth.json"), "utf8"))).filter((v) => v.length >= 12));
    } catch {}
    // mcp.json's servers: the config's redactor never saw them (a server's stderr tail may print its token).
    try {
      values.push(...mcpServerSecrets((JSON.parse(readFileSync(join(p.dir, "mcp.json"), "utf8")) as { mcpServers?: unknown })?.mcpServers));
    } catch {}
  }
  r.setSecrets("files", values);
  return r;
}

/** A flag of a server's argv that is followed by (or `=`) a credential: `--api-key X`, `--token=X`. */
const SECRET_FLAG = /^--?[\w-]*(token|secret|password|passwd|api[-_]?key|key|auth)$/i;

/**
 * What an MCP server entry (config.yaml's `mcp_servers`, mcp.json's `mcpServers`) may hold of a
 * credential: every value of its `env` and `headers` maps, whatever their names, and the value of
 * a credential-named flag in its `args`.
 */
export function mcpServerSecrets(servers: unknown): string[] {
  if (servers === null || typeof servers !== "object") return [];
  const out: string[] = [];
  for (const entry of Object.values(servers as Record<string, unknown>)) {
    if (entry === null || typeof entry !== "object") continue;
    const e = entry as { env?: unknown; headers?: unknown; args?: unknown };
    for (const map of [e.env, e.headers])
      if (map && typeof map === "object") for (const v of Object.values(map as Record<string, unknown>)) if (typeof v === "string" && v) out.push(v);
    const args = Array.isArray(e.args) ? e.args.filter((a): a is string => typeof a === "string") : [];
    args.forEach((a, i) => {
      const eq = a.indexOf("=");
      if (eq > 0 && SECRET_FLAG.test(a.slice(0, eq))) out.push(a.slice(eq + 1));
      else if (SECRET_FLAG.test(a) && args[i + 1]) out.push(args[i + 1]!);
    });
  }
  return out;
}

function stringLeaves(value: unknown, depth = 0): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object" || depth > 8) return [];
  return Object.values(value as Record<string, unknown>).flatMap((v) => stringLeaves(v, depth + 1));
}

const secretKey = (name: string): boolean => isSecretEnvName(name) || isSecretFieldName(name) || /(^|[._-])(token|secret|password|api_?key)$/i.test(name);

/** The values under secret-named keys, at any depth (a config's tokens, an MCP server's env): scrubbed wherever else they appear. */
export function secretValuesOf(value: unknown, depth = 0): string[] {
  if (value === null || typeof value !== "object" || depth > 12) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === "string" && v && secretKey(k)) out.push(v);
    else out.push(...secretValuesOf(v, depth + 1));
  }
  return out;
}

/** A value with every field under a secret-named key replaced, at any depth (config sections, MCP env and headers). */
export function scrubFields(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object" || depth > 12) return value;
  if (Array.isArray(value)) return value.map((v) => scrubFields(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = secretKey(k) && v !== "" && v !== null && typeof v !== "object" && typeof v !== "boolean" ? REDACTED : scrubFields(v, depth + 1);
  }
  return out;
}

type Section = { name: string; gather: () => unknown | Promise<unknown> };

/** Gathers every section; a section that fails holds its error instead (and is listed in `problems`). */
export async function buildBundle(s: BundleSources): Promise<{ bundle: Record<string, unknown>; problems: DebugShareResult["problems"] }> {
  const perProfile = async <T>(work: (profile: string) => Promise<T>): Promise<Record<string, T | { error: string }>> => {
    const out: Record<string, T | { error: string }> = {};
    for (const p of s.profiles) {
      try {
        out[p] = await work(p);
      } catch (error) {
        out[p] = { error: toAgentError(error).message };
      }
    }
    return out;
  };
  const sections: Section[] = [
    {
      name: "versions",
      gather: () => {
        const dir = appRoot();
        return {
          app: APP_VERSION,
          commit: gitCommitAt(dir),
          app_dir: dir,
          node: process.versions.node,
          os: { type: osType(), platform: platform(), release: release(), arch: arch() },
        };
      },
    },
    { name: "daemon", gather: () => s.invoke("daemon.status", {}) },
    {
      name: "config",
      gather: async () => {
        const list = await s.invoke("config.list", {});
        return {
          file: list.file,
          version: list.version,
          warnings: list.warnings,
          // Only what differs from the defaults: what the user set (file or env).
          entries: list.entries
            .filter((e) => e.origin !== "default")
            .map((e) => ({ ...e, value: secretKey(e.key.split(".").pop() ?? "") && e.value !== "" ? REDACTED : scrubFields(e.value) })),
          // Names only: never a value of .env.
          env_files: Object.fromEntries(s.profiles.map((p) => [p, dotenvNames(profilePaths(s.home, p).env)])),
        };
      },
    },
    { name: "logs", gather: () => recentLogs(s.logsDir) },
    { name: "lsp", gather: () => s.invoke("lsp.status", {}) },
    { name: "mcp", gather: () => perProfile(async (p) => (await s.invoke("mcp.list", {}, p)).servers) },
    {
      name: "kanban",
      gather: async () => {
        const { boards, current } = await s.invoke("kanban.boards.list", {});
        const out: Record<string, unknown> = {};
        for (const b of boards.slice(0, 20)) {
          const one: Record<string, unknown> = {};
          for (const [key, run] of [
            ["stats", () => s.invoke("kanban.stats", { board: b.name })],
            ["dispatcher", () => s.invoke("kanban.dispatch", { board: b.name, dryRun: true })],
            ["workers", () => s.invoke("kanban.ps", { board: b.name })],
          ] as const) {
            try {
              one[key] = await run();
            } catch (error) {
              one[key] = { error: toAgentError(error).message };
            }
          }
          out[b.name] = one;
        }
        return { current, boards: out };
      },
    },
    {
      name: "cron",
      gather: () =>
        perProfile(async (p) => {
          const list = await s.invoke("cron.list", {}, p);
          // Schedules and next fires; not a job's prompt or script.
          return {
            timezone: list.timezone,
            jobs: list.jobs.map((j) => ({
              id: j.id,
              name: j.name,
              schedule: j.schedule,
              mode: j.mode,
              enabled: j.enabled,
              finished: j.finished,
              next_fire: j.nextRunAt === null ? null : new Date(j.nextRunAt).toISOString(),
              last_run: j.lastRunAt === null ? null : new Date(j.lastRunAt).toISOString(),
              last_status: j.lastStatus,
              last_error: j.lastError,
              running: j.running !== null,
            })),
          };
        }),
    },
    { name: "channels", gather: () => s.invoke("channels.status", {}) },
  ];
  const bundle: Record<string, unknown> = { kind: "agent-debug-bundle", format: 1, created_at: new Date(s.now()).toISOString() };
  const problems: DebugShareResult["problems"] = [];
  for (const section of sections) {
    try {
      bundle[section.name] = scrubFields(await section.gather());
    } catch (error) {
      const message = toAgentError(error).message;
      problems.push({ section: section.name, error: message });
      bundle[section.name] = { error: message };
    }
  }
  return { bundle, problems };
}

function dotenvNames(file: string): string[] {
  try {
    return Object.keys(parseDotenv(readFileSync(file, "utf8")));
  } catch {
    return [];
  }
}

/** The last LOG_LINES lines of each component's log (`<component>.log` and its rotations). */
function recentLogs(dir: string): Record<string, string[]> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".log"));
  } catch {
    return {};
  }
  const out: Record<string, string[]> = {};
  for (const n of names.sort()) out[n.slice(0, -".log".length)] = readLastLines(join(dir, n), LOG_LINES).lines;
  return out;
}

/** Writes the bundle, redacted as a whole, to `dir` (0600); keeps the newest KEEP_BUNDLES. */
export async function writeBundle(dir: string, bundle: Record<string, unknown>, redactor: Redactor, now: number): Promise<{ path: string; text: string }> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")
    .replace("T", "-");
  const path = join(dir, `debug-${stamp}-${randomBytes(3).toString("hex")}.json`);
  const text = `${redactor.text(JSON.stringify(bundle, null, 2))}\n`;
  await writeFileAtomic(path, text, { mode: 0o600 });
  pruneOld(dir);
  return { path, text };
}

function pruneOld(dir: string): void {
  try {
    const old = readdirSync(dir)
      .filter((n) => /^debug-.*\.json$/.test(n))
      .sort()
      .slice(0, -KEEP_BUNDLES);
    for (const n of old) {
      try {
        unlinkSync(join(dir, n));
      } catch {}
    }
  } catch {}
}

/** POSTs the bundle to the share server; its answer is `{"url": …}` JSON or the URL as text. */
export async function uploadBundle(shareUrl: string, text: string): Promise<string> {
  if (!shareUrl)
    throw new AgentError(
      "debug.share_url_unset",
      "uploading needs debug.share_url: `agent config set debug.share_url https://…` (the bundle was written anyway)",
    );
  let res: Response;
  try {
    res = await fetch(shareUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: text,
      signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS),
      redirect: "error",
    });
  } catch (error) {
    throw new AgentError("debug.upload_failed", `could not upload the bundle to ${origin(shareUrl)}: ${(error as Error).message}`);
  }
  const body = (await res.text()).slice(0, 10_000);
  if (!res.ok) throw new AgentError("debug.upload_failed", `the share server ${origin(shareUrl)} answered ${res.status}: ${body.slice(0, 300)}`);
  let url: unknown = body.trim();
  try {
    const parsed = JSON.parse(body) as { url?: unknown };
    if (parsed && typeof parsed === "object") url = parsed.url;
  } catch {}
  if (typeof url !== "string" || !/^https?:\/\/\S+$/i.test(url))
    throw new AgentError(
      "debug.upload_failed",
      `the share server ${origin(shareUrl)} did not answer with a URL (expected {"url": "https://…"} or the URL as text)`,
    );
  return url;
}

/** The server's origin only, for messages (a share URL may carry a key in its path or query). */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the share URL";
  }
}

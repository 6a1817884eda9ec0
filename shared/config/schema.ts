import { MCP_SERVER_FIELDS, mcpEntryProblems, mcpFieldProblem } from "./mcp-schema.js";
import { AgentError } from "../errors.js";
import { CONFIG_DEFAULTS } from "./defaults.js";
import { ENV_OVERRIDES } from "./env.js";
import { normalizeHostEntry, normalizeOrigin } from "./web-origins.js";
import { coerce, getPath } from "./resolve.js";
import { nestedQuantifier } from "../regex-safety.js";

/**
 * What a config key is, derived from the frozen defaults (the one place keys are defined) plus
 * the `providers.<name>.<field>` record, and the checks a value must pass beyond its type.
 */
export type KeyInfo =
  | { kind: "value"; key: string; type: "string" | "number" | "boolean" | "list" | "mapping"; default: unknown }
  | { kind: "section"; key: string; children: string[] };

const PROVIDER_FIELDS = ["base_url", "model", "api_key_env", "supports_images", "oauth_issuer", "oauth_client_id", "oauth_scopes"] as const;
/** `lsp.servers.<id>.<field>` and each field's type. */
const LSP_SERVER_FIELDS = { disabled: "boolean", command: "list", env: "mapping", initialization_options: "mapping" } as const;

type Check = (value: unknown) => string | null;
const int =
  (min: number, max = Number.MAX_SAFE_INTEGER): Check =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? null
      : max === Number.MAX_SAFE_INTEGER
        ? `must be an integer of at least ${min}`
        : `must be an integer between ${min} and ${max}`;
/** A list of strings, each accepted by `parse` (which throws with what is wrong). */
const listOf =
  (parse: (entry: string) => unknown): Check =>
  (v) => {
    for (const entry of v as string[]) {
      try {
        parse(entry);
      } catch (error) {
        return `has an invalid entry: ${(error as Error).message}`;
      }
    }
    return null;
  };
const range =
  (min: number, max: number): Check =>
  (v) =>
    typeof v === "number" && v >= min && v <= max ? null : `must be a number between ${min} and ${max}`;
const oneOf =
  (...options: string[]): Check =>
  (v) =>
    options.includes(v as string) ? null : `must be one of ${options.join(", ")}`;

/** Constraints beyond the default's type, by key. */
const CHECKS: Record<string, Check> = {
  "agent.max_turns": int(1),
  "gateway.port": int(0, 65535),
  "gateway.max_body_bytes": int(1),
  "gateway.cors_origins": listOf(normalizeOrigin),
  "gateway.allowed_hosts": listOf(normalizeHostEntry),
  "proxy.port": int(0, 65535),
  "proxy.max_body_bytes": int(1),
  "proxy.upstream_timeout": range(0.001, 86_400),
  "proxy.cors_origins": listOf(normalizeOrigin),
  "proxy.allowed_hosts": listOf(normalizeHostEntry),
  "storage.durability": oneOf("process", "power"),
  "backup.compression_level": int(1, 9),
  "logs.level": oneOf("debug", "info", "warn", "error"),
  "display.theme": oneOf("auto", "dark", "light"),
  // Small sizes are allowed on purpose (tests rotate with a few hundred bytes).
  "logs.max_bytes": int(256),
  "logs.keep": int(1, 100),
  "debug.share_url": (v) => (v === "" || /^https?:\/\/[^\s/]+/i.test(v as string) ? null : "must be an http:// or https:// URL (empty: uploading is off)"),
  "kanban.auto_decompose_per_tick": int(0),
  "kanban.failure_limit": int(1),
  "kanban.dispatch_interval_seconds": range(0.05, 3600),
  "kanban.max_in_progress": int(0),
  "kanban.max_in_progress_per_profile": int(0),
  "kanban.claim_ttl_seconds": range(0, 30 * 24 * 3600),
  "kanban.default_workspace": oneOf("", "worktree", "dir", "scratch"),
  "kanban.review": oneOf("none", "required"),
  "memory.provider": oneOf("builtin"),
  "video_gen.provider": oneOf("queue", "endpoint"),
  "video_gen.timeout_seconds": int(10, 86_400),
  "x_search.timeout_seconds": int(1, 3_600),
  "computer_use.display": (v) =>
    v === "" || /^[A-Za-z0-9.-]*:\d+(\.\d+)?$/.test(v as string) ? null : "must be an X display such as :0 (empty: a private Xvfb)",
  "computer_use.screen": (v) => (/^\d{3,5}x\d{3,5}$/.test(v as string) ? null : "must be WIDTHxHEIGHT, for example 1280x800"),
  "computer_use.max_type_chars": int(1, 100_000),
  "x_search.retries": int(0, 10),
  "model.vendor_runtime": oneOf("", "coder_app_server"),
  "model.api_mode": oneOf("", "chat_completions", "responses", "coder_app_server"),
  "coder_runtime.turn_timeout": range(1, 86_400),
  "coder_runtime.silence_timeout": range(0.05, 86_400),
  "memory.memory_char_limit": int(100, 100_000),
  "memory.user_char_limit": int(100, 100_000),
  "cron.timezone": (v) => (v === "" || validTimeZone(v as string) ? null : "must be an IANA time zone such as Europe/Berlin (empty: the system's)"),
  "cron.timeout": range(0.1, 86_400),
  "cron.script_timeout": range(0.1, 86_400),
  "lsp.wait_mode": oneOf("block", "settle"),
  "lsp.wait_timeout": range(0.1, 120),
  "lsp.baseline_timeout": range(0.1, 120),
  "lsp.install_strategy": oneOf("auto", "manual", "off"),
  "approvals.mode": oneOf("ask", "smart", "off"),
  "approvals.non_interactive": oneOf("deny", "allow"),
  "approvals.timeout": range(0.05, 86_400),
  "approvals.dangerous_patterns": (v) => {
    for (const [description, pattern] of Object.entries(v as Record<string, unknown>)) {
      if (typeof pattern !== "string" || pattern === "") return `must map each description to a regular expression (${JSON.stringify(description)} does not)`;
      try {
        new RegExp(pattern);
      } catch (error) {
        return `has an invalid regular expression for ${JSON.stringify(description)}: ${(error as Error).message}`;
      }
      const slow = nestedQuantifier(pattern);
      if (slow) return `has a regular expression for ${JSON.stringify(description)} that could take forever on a long command: ${slow}`;
    }
    return null;
  },
  "gateway.max_connections": int(0),
  "gateway.idle_timeout_ms": int(100, 3_600_000),
  "socket.max_connections": int(0),
  "discord.reply_to_mode": oneOf("off", "first", "all"),
  "discord.max_attachment_bytes": int(0),
  "api_server.port": int(0, 65535),
  "api_server.max_body_bytes": int(1),
  "api_server.cors_origins": listOf(normalizeOrigin),
  "api_server.allowed_hosts": listOf(normalizeHostEntry),
};

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Per key pattern, for keys under a record (`lsp.servers.<id>.env`). */
function patternCheck(key: string): Check | undefined {
  if (/^lsp\.servers\.[^.]+\.env$/.test(key))
    return (v) => (Object.values(v as object).every((x) => typeof x === "string") ? null : "must map names to strings");
  if (/^mcp_servers\.[^.]+\.[^.]+$/.test(key)) return (v) => mcpFieldProblem(key.split(".")[2]!, v);
  if (/^lsp\.servers\.[^.]+\.command$/.test(key))
    return (v) => ((v as string[]).length > 0 && (v as string[])[0] !== "" ? null : "must name the executable first");
  return undefined;
}

/** Keys that hold secrets: never written to config.yaml by `config set`; they belong in `.env`. */
export function isSecretKey(key: string): boolean {
  const last = key.split(".").pop() ?? "";
  return /(^|_)(api_key|apikey|token|secret|password|passwd)$/i.test(last);
}

export function secretHint(key: string): string {
  const env = ENV_OVERRIDES.find(([, path]) => path === key)?.[0];
  return env
    ? `${key} is a secret: put ${env}=<value> in $AGENT_HOME/.env instead of config.yaml`
    : `${key} looks like a secret: secrets live in $AGENT_HOME/.env (for a provider, set its api_key_env to the name of the variable there)`;
}

/** Every settable leaf key of the defaults, in definition order. */
export function configKeys(): string[] {
  const out: string[] = [];
  const walk = (obj: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (key === "_config_version" || key === "providers" || key === "lsp.servers" || key === "mcp_servers") continue;
      if (key === "approvals.dangerous_patterns") {
        out.push(key);
        continue;
      }
      if (v && typeof v === "object" && !Array.isArray(v)) walk(v as Record<string, unknown>, key);
      else out.push(key);
    }
  };
  walk(CONFIG_DEFAULTS as unknown as Record<string, unknown>, "");
  return out;
}

export function describeKey(key: string): KeyInfo | null {
  const parts = key.split(".");
  if (parts.some((p) => p === "")) return null;
  if (parts[0] === "providers") {
    if (parts.length === 1) return { kind: "section", key, children: [] };
    if (!/^[A-Za-z0-9_-]+$/.test(parts[1]!)) return null;
    if (parts.length === 2) return { kind: "section", key, children: PROVIDER_FIELDS.map((f) => `${key}.${f}`) };
    if (parts.length === 3 && (PROVIDER_FIELDS as readonly string[]).includes(parts[2]!))
      return { kind: "value", key, type: parts[2] === "supports_images" ? "boolean" : "string", default: undefined };
    return null;
  }
  if (parts[0] === "lsp" && parts[1] === "servers") {
    if (parts.length === 2) return { kind: "section", key, children: [] };
    if (!/^[A-Za-z0-9_-]+$/.test(parts[2]!)) return null;
    if (parts.length === 3) return { kind: "section", key, children: Object.keys(LSP_SERVER_FIELDS).map((f) => `${key}.${f}`) };
    const type = parts.length === 4 ? LSP_SERVER_FIELDS[parts[3] as keyof typeof LSP_SERVER_FIELDS] : undefined;
    return type ? { kind: "value", key, type, default: undefined } : null;
  }
  if (key === "approvals.dangerous_patterns") return { kind: "value", key, type: "mapping", default: {} };
  if (parts[0] === "mcp_servers") {
    if (parts.length === 1) return { kind: "section", key, children: [] };
    if (!/^[A-Za-z0-9_-]+$/.test(parts[1]!)) return null;
    if (parts.length === 2) return { kind: "section", key, children: Object.keys(MCP_SERVER_FIELDS).map((f) => `${key}.${f}`) };
    const type = parts.length === 3 ? MCP_SERVER_FIELDS[parts[2] as keyof typeof MCP_SERVER_FIELDS] : undefined;
    return type ? { kind: "value", key, type, default: undefined } : null;
  }
  if (key === "_config_version") return null;
  const def = getPath(CONFIG_DEFAULTS, key);
  if (def === undefined) return null;
  if (Array.isArray(def)) return { kind: "value", key, type: "list", default: def };
  if (def && typeof def === "object") return { kind: "section", key, children: configKeys().filter((k) => k.startsWith(key + ".")) };
  return { kind: "value", key, type: typeof def as "string" | "number" | "boolean", default: def };
}

/** Check one typed value against its key's type and constraints; the error names the key and where it came from. */
export function checkValue(key: string, value: unknown, where: string): void {
  const info = describeKey(key);
  if (info?.kind !== "value") return;
  if (info.type === "mapping") {
    if (!value || typeof value !== "object" || Array.isArray(value))
      throw new AgentError("config.invalid_value", `${where}: ${key} must be a mapping, got ${JSON.stringify(value)}`, { key, where });
  } else if (info.type === "list" ? !Array.isArray(value) || !value.every((v) => typeof v === "string") : typeof value !== info.type) {
    if (info.type === "list")
      throw new AgentError("config.invalid_value", `${where}: ${key} must be a list of strings, got ${JSON.stringify(value)}`, { key, where });
    throw new AgentError("config.invalid_value", `${where}: ${key} must be a ${info.type}, got ${JSON.stringify(value)}`, { key, where });
  }
  const problem = (CHECKS[key] ?? patternCheck(key))?.(value);
  if (problem) throw new AgentError("config.invalid_value", `${where}: ${key} ${problem}, got ${JSON.stringify(value)}`, { key, where });
}

/** Parse a value given on the command line as its key's type (`config set`). */
export function parseValueFor(key: string, raw: string | number | boolean): unknown {
  const info = describeKey(key);
  if (info?.kind !== "value") return raw;
  if (info.type === "mapping") {
    let value: unknown = raw;
    try {
      value = typeof raw === "string" ? JSON.parse(raw) : raw;
    } catch {
      throw new AgentError("config.invalid_value", `value must be a JSON object, got ${JSON.stringify(raw)}`);
    }
    checkValue(key, value, "value");
    return value;
  }
  if (info.type === "list") {
    const value = typeof raw === "string" ? parseList(raw) : raw;
    checkValue(key, value, "value");
    return value;
  }
  const value = typeof raw === "string" ? coerce(raw, info.type === "string" ? "" : info.type === "number" ? 0 : false, key) : raw;
  checkValue(key, value, "value");
  return value;
}

/** A list on the command line: a JSON array, or comma-separated entries ("" is the empty list). */
function parseList(raw: string): unknown {
  const text = raw.trim();
  if (text.startsWith("[")) {
    try {
      return JSON.parse(text);
    } catch {
      throw new AgentError("config.invalid_value", `value must be a JSON array or comma-separated entries, got ${JSON.stringify(raw)}`);
    }
  }
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * Validate the mapping read from config.yaml. Wrong types and out-of-range values throw one
 * error naming every bad key (fixing them one restart at a time would be a chore); unknown keys
 * are returned as warnings (a typo must not stop the daemon).
 */
export function validateFileValues(values: Record<string, unknown>, file: string): string[] {
  const warnings: string[] = [];
  const problems: AgentError[] = [];
  const walk = (obj: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (key === "_config_version") continue;
      if (key === "mcp_servers" && v && typeof v === "object" && !Array.isArray(v)) {
        // Each server entry is checked as a whole (command or url, the fields that go with it).
        for (const [name, entry] of Object.entries(v)) problems.push(...mcpEntryProblems(name, entry, file));
        continue;
      }
      const info = describeKey(key);
      if (!info) {
        warnings.push(`${file}: unknown key ${key} (ignored)`);
        continue;
      }
      if (info.kind === "section") {
        if (v === null || v === undefined) continue;
        if (typeof v !== "object" || Array.isArray(v))
          problems.push(new AgentError("config.invalid_value", `${file}: ${key} must be a mapping of keys, got ${JSON.stringify(v)}`, { key, file }));
        else walk(v as Record<string, unknown>, key);
      } else {
        try {
          checkValue(key, v, file);
        } catch (error) {
          if (!(error instanceof AgentError)) throw error;
          problems.push(error);
        }
      }
    }
  };
  walk(values, "");
  if (problems.length === 1) throw problems[0];
  if (problems.length > 1) {
    const keys = problems.map((p) => String(p.metadata?.key));
    const lines = problems.map((p) => `  ${p.message.startsWith(`${file}: `) ? p.message.slice(file.length + 2) : p.message}`);
    throw new AgentError("config.invalid_value", `${file}: ${problems.length} invalid values:\n${lines.join("\n")}`, { key: keys[0], keys, file });
  }
  return warnings;
}

import { AgentError } from "../errors.js";
import { CONFIG_DEFAULTS, type AgentConfig } from "./defaults.js";
import { ENV_OVERRIDES } from "./env.js";

export type ConfigOrigin = "default" | "file" | "env";

/** Where each overridden key's effective value came from (keys absent here are defaults or file values). */
export interface Resolution {
  config: AgentConfig;
  /** key path → env variable name, for keys an `AGENT_*` variable overrode. */
  fromEnv: Map<string, string>;
}

/** Effective config: defaults, overlaid with the user's file, overlaid with `AGENT_*` env. */
export function resolveConfig(fromFile: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): AgentConfig {
  return resolveWithOrigins(fromFile, env).config;
}

/**
 * The one place environment overrides are applied. `check` (from schema.ts) validates each
 * override so a bad `AGENT_*` value is reported with the variable's name.
 */
export function resolveWithOrigins(
  fromFile: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
  check?: (key: string, value: unknown, where: string) => void,
): Resolution {
  const merged = mergeDeep(structuredClone(CONFIG_DEFAULTS) as unknown as Record<string, unknown>, fromFile);
  const fromEnv = new Map<string, string>();
  for (const [name, path] of ENV_OVERRIDES) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const value = coerce(raw, getPath(CONFIG_DEFAULTS, path), name);
    check?.(path, value, `environment variable ${name}`);
    setPath(merged, path, value);
    fromEnv.set(path, name);
  }
  return { config: merged as unknown as AgentConfig, fromEnv };
}

/** Where `key`'s effective value came from. */
export function originOf(key: string, fromFile: Record<string, unknown>, resolution: Resolution): { origin: ConfigOrigin; env?: string } {
  const env = resolution.fromEnv.get(key);
  if (env) return { origin: "env", env };
  return getPath(fromFile, key) !== undefined ? { origin: "file" } : { origin: "default" };
}

export function getPath(obj: unknown, path: string): unknown {
  let at: unknown = obj;
  for (const part of path.split(".")) {
    if (!at || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let at = obj;
  for (const part of parts.slice(0, -1)) {
    if (!at[part] || typeof at[part] !== "object") at[part] = {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts[parts.length - 1]!] = value;
}

/** Parse a string as the type of `example` (the key's default). */
export function coerce(raw: string, example: unknown, source: string): unknown {
  if (typeof example === "number") {
    const n = raw.trim() === "" ? NaN : Number(raw);
    if (!Number.isFinite(n)) throw new AgentError("config.invalid_value", `${source} must be a number, got ${JSON.stringify(raw)}`, { source });
    return n;
  }
  if (typeof example === "boolean") {
    const v = raw.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(v)) return true;
    if (["0", "false", "no", "off"].includes(v)) return false;
    throw new AgentError("config.invalid_value", `${source} must be true or false, got ${JSON.stringify(raw)}`, { source });
  }
  return raw;
}

function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(over ?? {})) {
    const cur = base[key];
    if (value && typeof value === "object" && !Array.isArray(value) && cur && typeof cur === "object" && !Array.isArray(cur)) {
      base[key] = mergeDeep(cur as Record<string, unknown>, value as Record<string, unknown>);
    } else if (value !== null && value !== undefined) {
      // An empty YAML key (`model:` with nothing under it) leaves the default alone.
      base[key] = value;
    }
  }
  return base;
}

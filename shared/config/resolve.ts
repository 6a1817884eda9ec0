import { AgentError } from "../errors.js";
import { CONFIG_DEFAULTS, type AgentConfig } from "./defaults.js";
import { ENV_OVERRIDES } from "./env.js";

/** Effective config: defaults, overlaid with the user's file, overlaid with `AGENT_*` env. */
export function resolveConfig(fromFile: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const merged = mergeDeep(structuredClone(CONFIG_DEFAULTS) as unknown as Record<string, unknown>, fromFile);
  for (const [name, path] of ENV_OVERRIDES) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    setPath(merged, path, coerce(raw, getPath(CONFIG_DEFAULTS, path), name));
  }
  return merged as unknown as AgentConfig;
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
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new AgentError("config.invalid_value", `${source} must be a number, got ${JSON.stringify(raw)}`);
    return n;
  }
  if (typeof example === "boolean") {
    const v = raw.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(v)) return true;
    if (["0", "false", "no", "off"].includes(v)) return false;
    throw new AgentError("config.invalid_value", `${source} must be true or false, got ${JSON.stringify(raw)}`);
  }
  return raw;
}

function mergeDeep(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(over ?? {})) {
    const cur = base[key];
    if (value && typeof value === "object" && !Array.isArray(value) && cur && typeof cur === "object" && !Array.isArray(cur)) {
      base[key] = mergeDeep(cur as Record<string, unknown>, value as Record<string, unknown>);
    } else {
      base[key] = value;
    }
  }
  return base;
}

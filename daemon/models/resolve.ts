import type { AgentConfig } from "../../shared/config/defaults.js";
import { AgentError } from "../../shared/errors.js";
import { type CredentialSource, credentialSource, credentialsFor } from "./credentials.js";

/** Everything needed to call one OpenAI-compatible endpoint. */
export interface ProviderConfig {
  name: string;
  baseUrl: string;
  model: string;
  apiKey: string;
  apiKeyEnv: string | null;
  /** The credential resolved per call: the OAuth sign-in when stored (it wins), else `apiKey`. */
  credentials: CredentialSource;
  /** Whether image parts may be sent (else multimodal tool results fall back to text). */
  supportsImages: boolean;
  loopback: boolean;
  /** Stream read timeout in ms: idle time allowed between chunks (and before the headers). */
  readTimeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
}

export interface ResolveOptions {
  /** `--provider`: a name under `providers`. */
  provider?: string;
  /** Use `model.fast` instead of the provider's model. */
  fast?: boolean;
  /** A model name replacing the provider's (a cron job's override). */
  model?: string;
}

type Env = Record<string, string | undefined>;
type ProviderEntry = {
  base_url?: string;
  model?: string;
  api_key_env?: string;
  supports_images?: boolean;
  oauth_issuer?: string;
  oauth_client_id?: string;
  oauth_scopes?: string;
};

const DEFAULT_KEY_ENV = "OPENAI_API_KEY";

/** The exact lines a user adds to get a working provider; part of the "not configured" error. */
export function howToConfigure(home: string): string {
  return [
    `no model provider is configured. Run \`agent setup\` for a guided set-up (in the TUI: press s), or add one to ${home}/config.yaml, for example:`,
    "",
    "  model:",
    "    provider: openai",
    "  providers:",
    "    openai:",
    "      base_url: https://api.openai.com/v1",
    "      model: gpt-4o-mini",
    "      api_key_env: OPENAI_API_KEY",
    "",
    `and put the key in ${home}/.env (never in config.yaml):`,
    "",
    "  OPENAI_API_KEY=sk-...",
    "",
    "Any OpenAI-compatible endpoint works (a local server needs no key). Then run /reload in the chat or `agent daemon reload`.",
  ].join("\n");
}

export function isLoopback(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, "");
    return host === "localhost" || host === "::1" || host === "0.0.0.0" || /^127\./.test(host) || host.endsWith(".localhost");
  } catch {
    return false;
  }
}

/**
 * Pick the provider for a turn: `--provider`, else `model.provider`, else `model.base_url`,
 * else the only entry of `providers`. `model.name` overrides the provider's model; `fast`
 * selects `model.fast`. Keys come from the environment merged with `.env`, never from config.
 */
export function resolveProvider(config: AgentConfig, env: Env, home: string, options: ResolveOptions = {}): ProviderConfig {
  const providers = (config.providers ?? {}) as Record<string, ProviderEntry>;
  const names = Object.keys(providers);
  let name: string | null = null;
  let entry: ProviderEntry | null = null;

  if (options.provider) {
    if (!providers[options.provider]) {
      throw new AgentError(
        "model.unknown_provider",
        `no provider named "${options.provider}" in ${home}/config.yaml; ${names.length ? `configured providers: ${names.join(", ")}` : "no providers are configured"}`,
      );
    }
    name = options.provider;
    entry = providers[name]!;
  } else if (config.model.provider) {
    name = config.model.provider;
    entry = providers[name] ?? null;
    if (!entry && !config.model.base_url) {
      throw new AgentError(
        "model.unknown_provider",
        `model.provider is "${name}" but ${home}/config.yaml has no providers.${name} entry (with base_url, model and api_key_env)${names.length ? `; configured providers: ${names.join(", ")}` : ""}`,
      );
    }
  } else if (config.model.base_url) {
    name = "default";
  } else if (names.length === 1) {
    name = names[0]!;
    entry = providers[name]!;
  }
  if (!name) throw new AgentError("model.not_configured", howToConfigure(home));

  const baseUrl = (entry?.base_url || config.model.base_url || "").replace(/\/+$/, "");
  if (!baseUrl) throw new AgentError("model.not_configured", `provider "${name}" has no base_url.\n\n${howToConfigure(home)}`);
  let model = (options.provider ? entry?.model : config.model.name || entry?.model) || "";
  if (options.fast) {
    if (!config.model.fast) throw new AgentError("model.no_fast_model", `model.fast is not set in ${home}/config.yaml (e.g. \`model: { fast: gpt-4o-mini }\`)`);
    model = config.model.fast;
  }
  if (options.model) model = options.model;
  if (!model)
    throw new AgentError("model.not_configured", `provider "${name}" names no model: set providers.${name}.model (or model.name) in ${home}/config.yaml`);

  const loopback = isLoopback(baseUrl);
  const keyEnv = entry?.api_key_env || (entry ? null : DEFAULT_KEY_ENV);
  const apiKey = (keyEnv ? env[keyEnv] : undefined) || env.AGENT_API_KEY || "";
  if (!apiKey && !loopback && !credentialsFor(home).hasOAuth(name)) {
    const k = keyEnv ?? DEFAULT_KEY_ENV;
    throw new AgentError(
      "model.missing_api_key",
      `provider "${name}" (${baseUrl}) needs an API key: put ${k}=... in ${home}/.env${entry && !entry.api_key_env ? ` and set providers.${name}.api_key_env: ${k}` : ""}, then run /reload${entry?.oauth_issuer ? ` (or sign in: agent auth login ${name})` : ""}`,
    );
  }
  const m = config.model as AgentConfig["model"] & { stream_read_timeout?: number; api_timeout?: number; max_retries?: number; retry_base_ms?: number };
  const readS = num(m.stream_read_timeout, 120);
  const apiS = num(m.api_timeout, 1800);
  return {
    name,
    baseUrl,
    model,
    // Local servers take no key, but the client insists on a non-empty one.
    apiKey: apiKey || "not-needed",
    apiKeyEnv: keyEnv,
    credentials: credentialSource(home, name, apiKey || "not-needed"),
    supportsImages: entry?.supports_images ?? true,
    loopback,
    // A local model may think for minutes before its first token; a remote one should not.
    readTimeoutMs: Math.max(readS, loopback ? apiS : 0) * 1000,
    maxRetries: num(m.max_retries, 3),
    retryBaseMs: num(m.retry_base_ms, 1000),
  };
}

function num(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : fallback;
}

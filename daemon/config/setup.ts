/**
 * Guided set-up of a model provider (`agent setup`, the TUI's set-up form): the presets, the
 * endpoint's model list, a tiny test call, and the plan that `FileConfigSource.applyProvider`
 * writes. Every input is checked here before anything touches the network or the files; the
 * key is never logged nor returned.
 */
import { apiKeyCredential } from "../models/credentials.js";
import type { AgentConfig } from "../../shared/config/defaults.js";
import { AgentError } from "../../shared/errors.js";
import type { SetupCurrent, SetupPreset } from "../../shared/protocol/setup.js";
import { OpenAIChatModel, openAI, providerError } from "../models/openai-chat.js";
import { isLoopback, resolveProvider, type ProviderConfig } from "../models/resolve.js";

export const SETUP_PRESETS: readonly SetupPreset[] = Object.freeze([
  { id: "openai", label: "OpenAI", name: "openai", baseUrl: "https://api.openai.com/v1", keyEnv: "OPENAI_API_KEY", needsKey: true },
  { id: "openrouter", label: "OpenRouter", name: "openrouter", baseUrl: "https://openrouter.ai/api/v1", keyEnv: "OPENROUTER_API_KEY", needsKey: true },
  { id: "ollama", label: "Ollama (local)", name: "ollama", baseUrl: "http://127.0.0.1:11434/v1", keyEnv: null, needsKey: false },
  { id: "llamacpp", label: "llama.cpp server (local)", name: "llamacpp", baseUrl: "http://127.0.0.1:8080/v1", keyEnv: null, needsKey: false },
  { id: "vllm", label: "vLLM server (local)", name: "vllm", baseUrl: "http://127.0.0.1:8000/v1", keyEnv: null, needsKey: false },
  { id: "custom", label: "any OpenAI-compatible URL", name: "custom", baseUrl: "", keyEnv: null, needsKey: false },
]);

/** Seconds the model listing and the test call may take (env AGENT_SETUP_TIMEOUT, for tests and slow local servers). */
function timeoutMs(env: NodeJS.ProcessEnv): number {
  const s = Number(env.AGENT_SETUP_TIMEOUT ?? 30);
  return (Number.isFinite(s) && s > 0 ? s : 30) * 1000;
}

export interface EndpointInput {
  baseUrl: string;
  apiKey?: string;
  apiKeyEnv?: string;
}

/** A checked endpoint: the URL normalized, the key (given now, or found in the env) and where it goes. */
export interface Endpoint {
  baseUrl: string;
  loopback: boolean;
  /** The key to call with ("" when none). */
  key: string;
  /** Whether `key` was given now (so it is to be stored). */
  keyGiven: boolean;
  keyEnv: string | null;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function invalid(message: string): AgentError {
  return new AgentError("setup.invalid", message);
}

export function checkName(name: string): string {
  if (!NAME.test(name)) throw invalid(`"${name}" is not a valid provider name: letters, digits, - and _ (at most 64, starting with a letter or digit)`);
  return name;
}

export function checkModel(model: string): string {
  if (!model.trim() || /[\s\x00-\x1f\x7f]/.test(model))
    throw invalid(`"${model.replace(/[\x00-\x1f\x7f]/g, "?")}" is not a valid model name (no spaces or control characters)`);
  return model;
}

/** The base URL as written to config.yaml: http(s), no credentials, no query, no trailing slash. */
export function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid(`"${raw}" is not a URL; give the endpoint's base URL, e.g. http://127.0.0.1:8080/v1`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(`the base URL must be http:// or https:// (got ${url.protocol})`);
  if (url.username || url.password) throw invalid("the base URL must not carry a user or password; the key goes in .env");
  if (url.search || url.hash) throw invalid("the base URL must not have a query or fragment");
  return url.toString().replace(/\/+$/, "");
}

/** The default `.env` variable of a provider name: `my-server` → `MY_SERVER_API_KEY`. */
export function keyEnvFor(name: string): string {
  const preset = SETUP_PRESETS.find((p) => p.name === name && p.keyEnv);
  if (preset?.keyEnv) return preset.keyEnv;
  const base = name.toUpperCase().replace(/[^A-Z0-9]/g, "_");
  return `${/^[0-9]/.test(base) ? `P_${base}` : base}_API_KEY`;
}

/** Check an endpoint: the key given now wins; else the one `apiKeyEnv` names in the daemon's env. */
export function checkEndpoint(input: EndpointInput, env: NodeJS.ProcessEnv, name?: string): Endpoint {
  const baseUrl = checkBaseUrl(input.baseUrl);
  const loopback = isLoopback(baseUrl);
  if (input.apiKeyEnv !== undefined && !ENV_NAME.test(input.apiKeyEnv))
    throw invalid(`"${input.apiKeyEnv}" is not a valid environment variable name (letters, digits and _)`);
  const given = input.apiKey;
  if (given !== undefined) {
    if (!given || /[\s\x00-\x1f\x7f"'\\]/.test(given)) throw invalid("the API key is empty or holds spaces, quotes, backslashes or control characters");
  }
  const keyEnv = input.apiKeyEnv ?? (given !== undefined && name ? keyEnvFor(name) : null);
  const key = given ?? (keyEnv ? (env[keyEnv] ?? "") : "");
  if (!key && !loopback) {
    throw new AgentError(
      "setup.missing_key",
      `${baseUrl} is not a local server, so it needs an API key: give one (it is stored in .env${keyEnv ? ` as ${keyEnv}` : ""}, never in config.yaml)`,
    );
  }
  return { baseUrl, loopback, key, keyGiven: given !== undefined, keyEnv: key ? keyEnv : null };
}

function providerFor(endpoint: Endpoint, model: string, env: NodeJS.ProcessEnv, name = "setup"): ProviderConfig {
  return {
    name,
    baseUrl: endpoint.baseUrl,
    model,
    apiKey: endpoint.key || "not-needed",
    apiKeyEnv: endpoint.keyEnv,
    credentials: apiKeyCredential(endpoint.key || "not-needed"),
    supportsImages: true,
    loopback: endpoint.loopback,
    readTimeoutMs: timeoutMs(env),
    maxRetries: 0,
    retryBaseMs: 0,
  };
}

/** `GET <base_url>/models`: the ids, sorted. */
export async function listModels(endpoint: Endpoint, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string[]> {
  const p = providerFor(endpoint, "-", env);
  const OpenAI = await openAI();
  const client = new OpenAI({ baseURL: p.baseUrl, apiKey: p.apiKey, maxRetries: 0, timeout: p.readTimeoutMs });
  try {
    const page = await client.models.list({ signal });
    const ids = page.data.map((m) => (m as { id?: unknown }).id).filter((id): id is string => typeof id === "string" && id.length > 0);
    return [...new Set(ids)].sort((a, b) => a.localeCompare(b));
  } catch (error) {
    throw plainer(providerError(error, p), p);
  }
}

/** The chat's wording names a provider and a model; set-up has neither yet, only the URL and the key typed. */
function plainer(e: AgentError, p: ProviderConfig): AgentError {
  const message = e.message
    .replace(`${p.name} (${p.baseUrl}, model ${p.model})`, `at ${p.baseUrl}`)
    .replace(`from ${p.name} (${p.baseUrl})`, `from ${p.baseUrl}`)
    .replace(/\. Check .+ in \.env$/, ". Check the API key");
  return new AgentError(e.code, message, e.metadata);
}

/** A tiny chat completion: the model's reply (trimmed, short) and how long it took. */
export async function testCall(endpoint: Endpoint, model: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<{ reply: string; ms: number }> {
  const p = providerFor(endpoint, model, env);
  const started = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new AgentError("model.stream_timeout", `${p.baseUrl} did not answer within ${p.readTimeoutMs / 1000} s`)),
    p.readTimeoutMs,
  );
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const reply = await new OpenAIChatModel(p, null).complete({
      messages: [{ role: "user", content: "This is a connection test. Reply with the single word: OK" }],
      signal: controller.signal,
    });
    return { reply: reply.content.trim().slice(0, 200), ms: Date.now() - started };
  } catch (error) {
    throw plainer(providerError(error, p), p);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** The model must be one the endpoint lists (when it lists any); else a clear error with the near names. */
export function checkListed(model: string, models: string[], baseUrl: string): void {
  if (!models.length) throw noModels(baseUrl);
  if (models.includes(model)) return;
  const near = models.filter((m) => m.toLowerCase().includes(model.toLowerCase()) || model.toLowerCase().includes(m.toLowerCase())).slice(0, 5);
  throw new AgentError(
    "setup.unknown_model",
    `${baseUrl} does not list a model "${model}"${near.length ? `; did you mean ${near.join(", ")}?` : `; it lists ${models.slice(0, 10).join(", ")}${models.length > 10 ? ", …" : ""}`}`,
  );
}

export function noModels(baseUrl: string): AgentError {
  return new AgentError("setup.no_models", `${baseUrl} lists no models (GET /models is empty): load or pull a model on the server first`);
}

/** What is configured now, as `resolveProvider` sees it (never the key). */
export function currentSetting(config: AgentConfig, env: NodeJS.ProcessEnv, home: string): SetupCurrent {
  try {
    const p = resolveProvider(config, env, home);
    return {
      configured: true,
      provider: p.name,
      model: p.model,
      baseUrl: p.baseUrl,
      keyEnv: p.apiKeyEnv,
      keySet: Boolean(p.apiKeyEnv && env[p.apiKeyEnv]),
      problem: null,
    };
  } catch (error) {
    const m = config.model;
    const named = m.provider || Object.keys(config.providers ?? {})[0] || null;
    const entry = named ? config.providers?.[named] : undefined;
    return {
      configured: false,
      provider: named ?? (m.base_url ? "default" : null),
      model: m.name || entry?.model || null,
      baseUrl: entry?.base_url || m.base_url || null,
      keyEnv: entry?.api_key_env ?? null,
      keySet: Boolean(entry?.api_key_env && env[entry.api_key_env]),
      problem: (error as Error).message,
    };
  }
}

/** Whether anything provider-like is set (so a set-up would replace it). */
export function hasSetting(current: SetupCurrent): boolean {
  return current.configured || current.provider !== null || current.baseUrl !== null;
}

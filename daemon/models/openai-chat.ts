import type OpenAI from "openai";
import { AgentError } from "../../shared/errors.js";
import type { TokenUsage } from "../../shared/protocol/chat.js";
import type { RateLimitBook } from "./rate-limits.js";
import type { ProviderConfig } from "./resolve.js";

/** A message in the OpenAI chat shape, as sent to the model. */
export type WireMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type WireTool = OpenAI.Chat.Completions.ChatCompletionTool;

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ModelReply {
  content: string;
  toolCalls: ModelToolCall[];
  usage: TokenUsage | null;
  finishReason: string | null;
}

export interface ModelRequest {
  messages: WireMessage[];
  tools?: WireTool[];
  signal: AbortSignal;
  onText?: (delta: string) => void;
  /** Called before a retry: the partial text streamed so far is void. */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

/** The seam between the loop and a model endpoint (the tests and the benchmark use the real one). */
export interface ChatModel {
  readonly provider: ProviderConfig;
  complete(request: ModelRequest): Promise<ModelReply>;
}

/** Longest single wait honoured from a retry-after header. */
const MAX_RETRY_AFTER_MS = 120_000;

/** Clients are cached per endpoint+key so connections are kept alive between calls. */
const clients = new Map<string, OpenAI>();

/**
 * The SDK class, loaded on the first model call rather than at daemon start: it is some 150
 * modules, and most daemon starts (every CLI-started daemon, every test) never call a model.
 */
let sdk: typeof OpenAI | null = null;
export async function openAI(): Promise<typeof OpenAI> {
  sdk ??= (await import("openai")).default;
  return sdk;
}

async function clientFor(p: ProviderConfig, key: string): Promise<OpenAI> {
  const id = `${p.baseUrl}\0${key}\0${p.readTimeoutMs}`;
  let client = clients.get(id);
  if (!client) {
    const OpenAI = await openAI();
    // Retries are ours (they must also cover streams that drop after the headers).
    client = new OpenAI({ baseURL: p.baseUrl, apiKey: key, maxRetries: 0, timeout: p.readTimeoutMs + 1000 });
    // An OAuth access token changes on every refresh: keep only the newest client per endpoint.
    if (p.credentials.method === "oauth") for (const k of clients.keys()) if (k.startsWith(`${p.baseUrl}\0`)) clients.delete(k);
    clients.set(id, client);
  }
  return client;
}

export class OpenAIChatModel implements ChatModel {
  constructor(
    readonly provider: ProviderConfig,
    private readonly rateLimits: RateLimitBook | null,
  ) {}

  async complete(request: ModelRequest): Promise<ModelReply> {
    const p = this.provider;
    // The credential is resolved per call (an OAuth token is refreshed shortly before it expires).
    let key = await p.credentials.token();
    let refreshedAfter401 = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(request, key);
      } catch (error) {
        if (request.signal.aborted) throw abortReason(request.signal);
        // A 401 on an OAuth token: refresh once and try again (the token may have been revoked early).
        if (!refreshedAfter401 && sdk && error instanceof sdk.APIError && error.status === 401) {
          refreshedAfter401 = true;
          const next = await p.credentials.afterUnauthorized(key);
          if (next !== null) {
            key = next;
            attempt--;
            continue;
          }
        }
        const failure = classify(error, p);
        if (!failure.retryable || attempt >= p.maxRetries) throw failure.error;
        const backoff = p.retryBaseMs * 2 ** attempt * (0.75 + Math.random() * 0.5);
        const delayMs = Math.round(failure.retryAfterMs ?? backoff);
        request.onRetry?.({ attempt: attempt + 1, delayMs, reason: failure.error.message });
        await sleep(delayMs, request.signal);
      }
    }
  }

  private async once(request: ModelRequest, key: string): Promise<ModelReply> {
    const p = this.provider;
    // One controller for the whole call: the caller's interrupt and our idle timer both end it.
    const controller = new AbortController();
    const onAbort = () => controller.abort(request.signal.reason);
    request.signal.addEventListener("abort", onAbort, { once: true });
    let stalled = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = true;
        controller.abort(new Error("stalled"));
      }, p.readTimeoutMs);
    };
    try {
      arm();
      const { data: stream, response } = await (await clientFor(p, key)).chat.completions
        .create(
          {
            model: p.model,
            messages: request.messages,
            ...(request.tools?.length ? { tools: request.tools } : {}),
            stream: true,
            stream_options: { include_usage: true },
          },
          { signal: controller.signal },
        )
        .withResponse();
      this.rateLimits?.record(p.name, p.model, response.headers);
      let content = "";
      let finishReason: string | null = null;
      let usage: TokenUsage | null = null;
      const calls: Array<{ id: string; name: string; arguments: string }> = [];
      arm();
      for await (const chunk of stream) {
        arm();
        if (chunk.usage) {
          usage = { prompt: chunk.usage.prompt_tokens ?? 0, completion: chunk.usage.completion_tokens ?? 0, total: chunk.usage.total_tokens ?? 0 };
        }
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        if (choice.finish_reason) finishReason = choice.finish_reason;
        const delta = choice.delta;
        if (delta?.content) {
          content += delta.content;
          request.onText?.(delta.content);
        }
        for (const tc of delta?.tool_calls ?? []) {
          const at = tc.index ?? calls.length;
          const call = (calls[at] ??= { id: "", name: "", arguments: "" });
          if (tc.id) call.id = tc.id;
          if (tc.function?.name) call.name += tc.function.name;
          if (tc.function?.arguments) call.arguments += tc.function.arguments;
        }
      }
      // The client ends the iteration quietly when its signal aborts: tell why.
      if (stalled) throw new StreamStalled(p);
      if (request.signal.aborted) throw abortReason(request.signal);
      const toolCalls = calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${Date.now().toString(36)}_${i}` }));
      return { content, toolCalls, usage, finishReason };
    } catch (error) {
      if (stalled && !request.signal.aborted) {
        throw new StreamStalled(p);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener("abort", onAbort);
    }
  }
}

/** The stream went quiet for longer than the read timeout: `model.stream_timeout`, retried. */
class StreamStalled extends AgentError {
  constructor(provider: ProviderConfig) {
    super(
      "model.stream_timeout",
      `the model stream from ${provider.name} (${provider.baseUrl}) sent nothing for ${formatSeconds(provider.readTimeoutMs)} (read timeout; raise AGENT_STREAM_READ_TIMEOUT${provider.loopback ? " / AGENT_API_TIMEOUT for local endpoints" : ""})`,
      { provider: provider.name },
    );
    this.name = "StreamStalled";
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

interface Failure {
  error: AgentError;
  retryable: boolean;
  retryAfterMs?: number;
}

/** Map anything a model call throws to an AgentError, and decide whether to retry it. */
function classify(error: unknown, p: ProviderConfig): Failure {
  const where = `${p.name} (${p.baseUrl}, model ${p.model})`;
  if (error instanceof StreamStalled) return { error, retryable: true };
  // Only a loaded SDK throws its own error classes.
  if (sdk && error instanceof sdk.APIConnectionTimeoutError) return { error: new StreamStalled(p), retryable: true };
  if (sdk && error instanceof sdk.APIError && typeof error.status === "number") {
    const status = error.status;
    const detail = upstreamMessage(error);
    if (status === 429) {
      return {
        error: new AgentError("model.rate_limited", `the model provider ${where} is rate limiting requests (HTTP 429): ${detail}`, {
          provider: p.name,
          status,
        }),
        retryable: true,
        retryAfterMs: retryAfter(error.headers),
      };
    }
    if (status >= 500) {
      return {
        error: new AgentError("model.server_error", `the model provider ${where} failed with HTTP ${status}: ${detail}`, { provider: p.name, status }),
        retryable: true,
        retryAfterMs: retryAfter(error.headers),
      };
    }
    if (status === 401 || status === 403) {
      return {
        error: new AgentError(
          "model.unauthorized",
          `the model provider ${where} refused the API key (HTTP ${status}): ${detail}. Check ${p.apiKeyEnv ?? "the key"} in .env`,
          { provider: p.name, status },
        ),
        retryable: false,
      };
    }
    if (status === 404) {
      return {
        error: new AgentError("model.not_found", `the model provider ${where} answered 404: ${detail}. Check base_url and the model name`, {
          provider: p.name,
          status,
        }),
        retryable: false,
      };
    }
    return {
      error: new AgentError("model.bad_request", `the model provider ${where} rejected the request (HTTP ${status}): ${detail}`, { provider: p.name, status }),
      retryable: false,
    };
  }
  // Connection refused/reset, a stream cut off mid-way, a chunk that is not JSON: transient.
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SyntaxError || /JSON/i.test(message)) {
    return {
      error: new AgentError("model.bad_stream", `the model provider ${where} sent a malformed stream chunk: ${message}`, { provider: p.name }),
      retryable: true,
    };
  }
  return {
    error: new AgentError("model.connection_failed", `the model provider ${where} could not be reached or dropped the stream: ${message}`, {
      provider: p.name,
    }),
    retryable: true,
  };
}

function upstreamMessage(error: InstanceType<typeof OpenAI.APIError>): string {
  const body = error.error as { message?: string } | undefined;
  return (body && typeof body.message === "string" ? body.message : error.message).slice(0, 500);
}

function retryAfter(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.get("retry-after-ms") && Number.isFinite(ms)) return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
  const raw = headers.get("retry-after");
  if (!raw) return undefined;
  const s = Number(raw);
  if (Number.isFinite(s)) return Math.min(Math.max(s * 1000, 0), MAX_RETRY_AFTER_MS);
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.min(Math.max(date - Date.now(), 0), MAX_RETRY_AFTER_MS) : undefined;
}

function abortReason(signal: AbortSignal): Error {
  const r = signal.reason;
  return r instanceof Error ? r : new AgentError("chat.interrupted", "the turn was interrupted");
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** What a failed call to the endpoint `p` means, as the chat reports it (set-up's model listing and test call). */
export function providerError(error: unknown, p: ProviderConfig): AgentError {
  return error instanceof AgentError ? error : classify(error, p).error;
}

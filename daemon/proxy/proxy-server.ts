/**
 * The local OpenAI-compatible proxy (docs/proxy.md): one HTTP listener that forwards the four
 * allowed paths to the provider's base URL with the provider's current credential attached.
 *
 * - The caller's Authorization (and any other credential header) is dropped; the provider's
 *   credential (OAuth, refreshed, or the API key) is resolved per request and attached.
 * - Responses are relayed as they arrive (SSE chunk by chunk; nothing waits past the tick it
 *   arrived in: what one upstream read brings goes on as one chunk), and a caller that goes
 *   away aborts the upstream request.
 * - An upstream that cannot be reached is a 502, one that sends no headers within
 *   `proxy.upstream_timeout` a 504; both in OpenAI's error JSON.
 * - Request bodies are read whole within `proxy.max_body_bytes` (413 beyond): a body is small,
 *   and holding it lets a 401 be retried once with a refreshed token.
 * - Origin, Host and the bind/key rules are daemon/http/access.ts's.
 */
import {
  Agent as HttpAgent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { PROXY_PATHS } from "../../shared/protocol/proxy.js";
import { type AccessGuard, type ListenerKey, accessStatus, answerPreflight, isPreflight, listenerAccess, type HeaderMap } from "../http/access.js";
import { readBody } from "../http/request-body.js";
import { closeServer } from "../http/server-close.js";

export interface ProxySettings {
  host: string;
  port: number;
  token: string;
  maxBodyBytes: number;
  upstreamTimeoutMs: number;
  corsOrigins: readonly string[];
  allowedHosts: readonly string[];
}

/** Where one request goes: its base URL and the credential to attach. */
export interface UpstreamCall {
  baseUrl: string;
  token: string;
  /** An OAuth token: a 401 is retried once with the token `afterUnauthorized` gives. */
  oauth: boolean;
}

/**
 * Where requests go: resolved per request, so a reload or a new sign-in applies at once. In the
 * daemon the proxy runs in its own thread (proxy-thread.ts) and this asks the main thread, which
 * holds the config and the credential store (proxy-thread-host.ts).
 */
export interface UpstreamSource {
  /** Throws an AgentError: `auth.*` answers 401, anything else 503. */
  resolve(): Promise<UpstreamCall>;
  /** The token to retry with after `used` got 401, or null when a retry cannot help. */
  afterUnauthorized(used: string): Promise<string | null>;
}

export const PROXY_KEY_NAMES = { config: "proxy.token", env: "AGENT_PROXY_TOKEN", listener: "proxy" as const, hostKey: "proxy.host" };

const ALLOWED = new Set<string>(PROXY_PATHS);

/** Bytes a caller's socket may hold before the upstream is paused (the listener's high-water mark). */
const STREAM_HIGH_WATER_MARK = 256 * 1024;

/** Pieces of a socket read smaller than this on average are copied into one chunk for the caller (see forward). */
const GATHER_BELOW = 4096;

/** Headers never forwarded upstream: hop-by-hop ones, the caller's credentials, and what we set. */
const DROP_REQUEST = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "content-length",
  "authorization",
  "api-key",
  "x-api-key",
  "cookie",
  "origin",
  "referer",
]);
const DROP_RESPONSE = new Set(["connection", "keep-alive", "transfer-encoding", "proxy-authenticate", "trailer", "upgrade", "set-cookie"]);

/** The proxy's key and access guard for `host` (daemon/http/access.ts: the rules of every listener). */
export function accessFor(host: string, access: Pick<ProxySettings, "token" | "corsOrigins" | "allowedHosts">): { key: ListenerKey; guard: AccessGuard } {
  return listenerAccess({ bindHost: host, key: access.token, corsOrigins: access.corsOrigins, allowedHosts: access.allowedHosts, names: PROXY_KEY_NAMES });
}

/** OpenAI's error body. */
function errorBody(message: string, type: string, code: string | null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

export class ProxyServer {
  private server: Server | null = null;
  private guard!: AccessGuard;
  private key!: ListenerKey;
  private readonly httpAgent = new HttpAgent({ keepAlive: true, noDelay: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true, noDelay: true });
  readonly startedAt = Date.now();
  /**
   * A path whose request ends the thread with an uncaught error (AGENT_PROXY_TEST_CRASH, set by
   * proxy-thread.ts for the crashed-thread test); null in use.
   */
  testCrashPath: string | null = null;

  /** `counter[0]` counts the requests (an Int32Array over a SharedArrayBuffer: the daemon's main thread reads it). */
  constructor(
    readonly settings: ProxySettings,
    private readonly upstream: UpstreamSource,
    private readonly log: { warn(message: string, fields?: Record<string, unknown>): void },
    private readonly counter: Int32Array = new Int32Array(1),
  ) {
    // Refuses a non-loopback bind, or cors_origins "*", without a key before anything listens.
    ({ key: this.key, guard: this.guard } = accessFor(settings.host, settings));
  }

  /**
   * New key, origins and hosts for the running listener (a reload): the old key is refused from
   * the next request. Throws, changing nothing, when the bind is not loopback and the key is
   * gone, or the origins list "*" with no key.
   */
  setAccess(access: Pick<ProxySettings, "token" | "corsOrigins" | "allowedHosts">): void {
    ({ key: this.key, guard: this.guard } = accessFor(this.settings.host, access));
  }

  get requests(): number {
    return Atomics.load(this.counter, 0);
  }

  get keyRequired(): boolean {
    return this.key.required;
  }

  async listen(): Promise<AddressInfo> {
    // A response socket buffers up to STREAM_HIGH_WATER_MARK before the upstream is paused: a
    // 16 KiB default would pause and resume it at nearly every chunk of a large stream.
    const server = createServer({ noDelay: true, highWaterMark: STREAM_HIGH_WATER_MARK }, (req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          new AgentError(
            "proxy.listen_failed",
            `the proxy could not listen on ${this.settings.host}:${this.settings.port}: ${error.code === "EADDRINUSE" ? "the port is in use (choose another with --port)" : error.message}`,
          ),
        ),
      );
      server.listen(this.settings.port, this.settings.host, () => resolve());
    });
    this.server = server;
    return server.address() as AddressInfo;
  }

  address(): AddressInfo | null {
    return (this.server?.address() as AddressInfo | null) ?? null;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
    if (!server) return;
    await closeServer(server);
  }

  private fail(res: ServerResponse, status: number, message: string, type: string, code: string | null, cors: HeaderMap | null = null): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = errorBody(message, type, code);
    res.writeHead(status, { ...(cors ?? {}), "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    Atomics.add(this.counter, 0, 1);
    let cors: HeaderMap | null = null;
    try {
      cors = this.guard.check(req);
    } catch (error) {
      const e = toAgentError(error);
      req.resume();
      return this.fail(res, accessStatus(e.code) ?? 403, e.message, "permission_error", e.code);
    }
    if (isPreflight(req)) return answerPreflight(req, res, cors);
    if (!this.key.allows(req)) {
      req.resume();
      return this.fail(res, 401, this.key.unauthorized().message, "authentication_error", "invalid_api_key", cors);
    }
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    if (path === this.testCrashPath)
      setImmediate(() => {
        throw new Error("the proxy's thread crashed on purpose (AGENT_PROXY_TEST_CRASH)");
      });
    if (!ALLOWED.has(path)) {
      req.resume();
      return this.fail(
        res,
        404,
        `the proxy forwards only ${PROXY_PATHS.join(", ")}; ${path.slice(0, 200)} is not one of them`,
        "invalid_request_error",
        "not_found",
        cors,
      );
    }
    // Asked for while the body arrives: in the daemon the answer comes from the main thread.
    const resolving = this.upstream.resolve();
    resolving.catch(() => undefined);
    let body: Buffer;
    try {
      body = await readBody(req, this.settings.maxBodyBytes);
    } catch (error) {
      const e = toAgentError(error);
      if (e.code === "request.body_too_large")
        return this.fail(
          res,
          413,
          `request body exceeds the limit of ${this.settings.maxBodyBytes} bytes (proxy.max_body_bytes)`,
          "invalid_request_error",
          "request_too_large",
          cors,
        );
      return this.fail(res, 400, e.message, "invalid_request_error", null, cors);
    }
    let upstream: UpstreamCall;
    let token: string;
    try {
      upstream = await resolving;
      token = upstream.token;
    } catch (error) {
      const e = toAgentError(error);
      const status = e.code.startsWith("auth.") ? 401 : 503;
      return this.fail(res, status, e.message, status === 401 ? "authentication_error" : "api_error", e.code, cors);
    }
    // The base URL ends in /v1 (as the OpenAI client expects): /v1/x maps to <base>/x.
    const target = upstream.baseUrl.replace(/\/+$/, "") + url.slice(3);
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!DROP_REQUEST.has(name) && value !== undefined) headers[name] = value;
    if (body.length > 0 || req.method === "POST") headers["content-length"] = body.length;
    const closed = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) closed.abort();
    });
    let retried = false;
    for (;;) {
      headers.authorization = `Bearer ${token}`;
      const outcome = await this.forward(req.method ?? "GET", target, headers, body, res, cors, closed.signal, upstream.oauth && !retried);
      if (outcome !== "unauthorized") return;
      retried = true;
      try {
        const next = await this.upstream.afterUnauthorized(token);
        if (next === null) throw new AgentError("auth.sign_in_again", "the upstream refused the credential");
        token = next;
      } catch (error) {
        const e = toAgentError(error);
        return this.fail(res, 401, e.message, "authentication_error", e.code, cors);
      }
    }
  }

  /**
   * One upstream request, its response piped to `res`. Resolves "unauthorized" (nothing written)
   * when the upstream answered 401 and `retry401` is set, so the caller can retry with a new token.
   */
  private forward(
    method: string,
    target: string,
    headers: OutgoingHttpHeaders,
    body: Buffer,
    res: ServerResponse,
    cors: HeaderMap | null,
    signal: AbortSignal,
    retry401: boolean,
  ): Promise<"done" | "unauthorized"> {
    return new Promise((resolve) => {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        this.fail(res, 502, `the provider's base_url does not make a valid URL: ${target}`, "api_error", "bad_gateway", cors);
        return resolve("done");
      }
      const secure = url.protocol === "https:";
      const request = (secure ? httpsRequest : httpRequest)(url, { method, headers, agent: secure ? this.httpsAgent : this.httpAgent });
      let answered = false;
      const timer = setTimeout(() => {
        if (answered) return;
        answered = true;
        request.destroy();
        this.fail(
          res,
          504,
          `the upstream ${url.origin} sent no response within ${this.settings.upstreamTimeoutMs / 1000} s (proxy.upstream_timeout)`,
          "api_error",
          "gateway_timeout",
          cors,
        );
        resolve("done");
      }, this.settings.upstreamTimeoutMs);
      const onAbort = () => {
        answered = true;
        clearTimeout(timer);
        request.destroy();
        resolve("done");
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      request.once("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        if (answered) {
          // Mid-stream: the caller sees the connection end early.
          res.destroy();
          return resolve("done");
        }
        answered = true;
        this.log.warn("proxy: upstream unreachable", { upstream: url.origin, error: error.code ?? error.message });
        this.fail(res, 502, `the upstream ${url.origin} could not be reached: ${error.code ?? error.message}`, "api_error", "bad_gateway", cors);
        resolve("done");
      });
      request.once("response", (up) => {
        clearTimeout(timer);
        if (answered) {
          up.destroy();
          return;
        }
        answered = true;
        if (up.statusCode === 401 && retry401) {
          signal.removeEventListener("abort", onAbort);
          up.resume();
          return resolve("unauthorized");
        }
        const out: HeaderMap = { ...(cors ?? {}) };
        for (const [name, value] of Object.entries(up.headers)) if (!DROP_RESPONSE.has(name) && value !== undefined) out[name] = value;
        res.writeHead(up.statusCode ?? 502, out);
        // Bytes straight through, untouched (no parsing, decoding or counting per chunk), but what
        // one socket read of the upstream yields goes to the caller as one write. The HTTP parser
        // emits every chunk of a read in one go (a burst of small SSE events: one chunk each);
        // written one by one, each would cost a chunk header of its own and four buffers in the
        // socket's writev here, and a chunk to parse and a `data` event in the caller. Gathered
        // until the tick ends (when node:http's own cork would have sent them anyway), they make
        // one chunk: no byte waits longer than it did, and an event that arrives alone (a model's
        // paced stream) still goes out alone, in the tick it arrived in. Backpressure: the
        // upstream pauses while the caller's socket holds more than its high-water mark.
        let pending: Buffer[] = [];
        let pendingBytes = 0;
        let scheduled = false;
        const flush = () => {
          if (!scheduled) return;
          scheduled = false;
          const out = pending;
          const bytes = pendingBytes;
          pending = [];
          pendingBytes = 0;
          if (res.destroyed) return;
          let more = true;
          // Large pieces (a bulk stream's) are not worth a copy: node:http corks them into one writev.
          if (out.length === 1 || bytes >= out.length * GATHER_BELOW) for (const piece of out) more = res.write(piece) && more;
          else more = res.write(Buffer.concat(out, bytes));
          if (!more) up.pause();
        };
        up.on("data", (chunk: Buffer) => {
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (scheduled) return;
          scheduled = true;
          process.nextTick(flush);
        });
        res.on("drain", () => up.resume());
        up.once("end", () => {
          signal.removeEventListener("abort", onAbort);
          flush();
          res.end();
          resolve("done");
        });
        up.once("error", () => {
          signal.removeEventListener("abort", onAbort);
          scheduled = false;
          pending = [];
          res.destroy();
          resolve("done");
        });
      });
      request.end(body);
    });
  }
}

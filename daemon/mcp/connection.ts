import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { ElicitRequestSchema, ToolListChangedNotificationSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AgentError } from "../../shared/errors.js";
import { APP_VERSION } from "../../shared/version.js";
import type { McpServerSpec } from "./config.js";
import type { SpawnProcess } from "./spawn-server.js";
import { ProcessStdioTransport } from "./stdio-transport.js";

export type McpState = "idle" | "connecting" | "ready" | "failed" | "disabled";

/** A tool of a server, as listed (its inputSchema checked). */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

import type { Elicit } from "./api.js";
export type { Elicit };

export interface ConnectionHooks {
  spawnProcess: SpawnProcess;
  log: { info(msg: string, data?: Record<string, unknown>): void; warn(msg: string, data?: Record<string, unknown>): void };
  /** The tools changed (a list_changed refresh, a reconnect). */
  changed?(): void;
  /** First retry delay after a failure or an exit, doubled each time up to 30 s. */
  backoffMs: number;
}

const ToolsPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
const validator = new AjvJsonSchemaValidator();

/**
 * One server of one profile: connected on first need, its tools listed and checked, restarted
 * with backoff when it exits, and its state, last error and stderr tail kept for `agent mcp list`.
 */
export class McpConnection {
  state: McpState;
  lastError: string | null = null;
  stderr = "";
  tools: McpTool[] = [];
  /** Tools skipped because their inputSchema is not valid JSON Schema (each with why). */
  warnings: string[] = [];
  connectedAt: number | null = null;
  timings: { connectMs: number; listMs: number } | null = null;
  #client: Client | null = null;
  #transport: Transport | null = null;
  #connecting: Promise<void> | null = null;
  #failures = 0;
  #retryAt = 0;
  #retryTimer: NodeJS.Timeout | null = null;
  #closing = false;
  #calls: Array<{ elicit?: Elicit; signal: AbortSignal }> = [];

  constructor(
    readonly spec: McpServerSpec,
    private readonly hooks: ConnectionHooks,
  ) {
    this.state = spec.enabled ? "idle" : "disabled";
  }

  get pid(): number | null {
    return this.#transport instanceof ProcessStdioTransport ? this.#transport.pid : null;
  }

  /** Connected and listed, or failed (state and lastError say why). Never throws. */
  async ensure(options: { force?: boolean } = {}): Promise<void> {
    if (this.state === "disabled" || this.#closing) return;
    if (this.state === "ready") return;
    if (this.#connecting) return this.#connecting;
    if (this.state === "failed" && !options.force && Date.now() < this.#retryAt) return;
    this.#connecting = this.#connect().finally(() => (this.#connecting = null));
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    this.state = "connecting";
    const started = performance.now();
    const transport = this.#makeTransport();
    const client = new Client({ name: "agent", version: APP_VERSION }, { capabilities: { elicitation: {} } });
    client.onerror = (error) => this.hooks.log.warn(`mcp server ${this.spec.name}: ${error.message}`);
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.#elicit(request.params as Record<string, unknown>, extra.signal));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.#refresh().catch((error) => this.hooks.log.warn(`mcp server ${this.spec.name}: refreshing its tools failed: ${(error as Error).message}`));
    });
    this.#client = client;
    this.#transport = transport;
    try {
      await client.connect(transport, { timeout: this.spec.connectTimeoutMs });
      const connectMs = performance.now() - started;
      const t1 = performance.now();
      await this.#list(client);
      this.timings = { connectMs: Math.round(connectMs * 10) / 10, listMs: Math.round((performance.now() - t1) * 10) / 10 };
      if (this.#client !== client) return; // closed meanwhile
      this.state = "ready";
      this.lastError = null;
      this.connectedAt = Date.now();
      this.#failures = 0;
      // Installed after a successful start: an exit from now on is a restart. (The client's own
      // handler, not the transport's, which the SDK uses to fail the calls in flight.)
      client.onclose = () => this.#exited(client, transport);
      this.hooks.changed?.();
    } catch (error) {
      this.#failed(this.#describe(error, transport));
      await this.#drop(client, transport);
    }
  }

  #makeTransport(): Transport {
    const s = this.spec;
    if (s.transport === "stdio") {
      return new ProcessStdioTransport(
        { command: s.command!, args: s.args, env: { ...process.env, ...s.env }, cwd: s.cwd, name: s.name },
        this.hooks.spawnProcess,
      );
    }
    return new FallbackHttpTransport(new URL(s.url!), s.headers);
  }

  /** The clear reason a start or call failed: the SDK's message, the exit, the stderr tail. */
  #describe(error: unknown, transport: Transport): string {
    let message = error instanceof Error ? error.message : String(error);
    if (/Request timed out|RequestTimeout|-32001/.test(message) && this.state === "connecting")
      message = `did not answer initialize within ${this.spec.connectTimeoutMs / 1000} s (connect_timeout)`;
    if (transport instanceof ProcessStdioTransport) {
      if (transport.exitReason && /Connection closed|not connected/i.test(message)) message = transport.exitReason;
      this.stderr = transport.stderrTail();
    }
    return message;
  }

  #failed(message: string): void {
    this.state = "failed";
    this.#failures++;
    const delay = Math.min(30_000, this.hooks.backoffMs * 2 ** (this.#failures - 1));
    this.#retryAt = Date.now() + delay;
    const tail = this.stderr ? `; stderr: ${this.stderr.split("\n").slice(-5).join(" | ")}` : "";
    this.lastError = `${message}${tail}`;
    this.hooks.log.warn(`mcp server ${this.spec.name} failed: ${message}`);
  }

  /** The server went away after it was ready: marked, and started again after the backoff. */
  #exited(client: Client, transport: Transport): void {
    if (this.#client !== client || this.#closing) return;
    const reason = transport instanceof ProcessStdioTransport ? (transport.exitReason ?? "the connection closed") : "the connection closed";
    if (transport instanceof ProcessStdioTransport) this.stderr = transport.stderrTail();
    this.#client = null;
    this.#transport = null;
    this.tools = [];
    this.#failed(reason);
    this.hooks.changed?.();
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(
      () => {
        this.#retryTimer = null;
        void this.ensure();
      },
      Math.max(0, this.#retryAt - Date.now()),
    );
    this.#retryTimer.unref();
  }

  async #drop(client: Client, transport: Transport): Promise<void> {
    if (this.#client === client) {
      this.#client = null;
      this.#transport = null;
    }
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }

  async #list(client: Client): Promise<void> {
    const tools: McpTool[] = [];
    const warnings: string[] = [];
    let cursor: string | undefined;
    const include = this.spec.include ? new Set(this.spec.include) : null;
    const exclude = new Set(this.spec.exclude);
    for (let page = 0; page < 100; page++) {
      const r = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, ToolsPage, { timeout: this.spec.connectTimeoutMs });
      for (const raw of r.tools) {
        const t = raw as Record<string, unknown>;
        const name = typeof t.name === "string" ? t.name : null;
        if (!name) {
          warnings.push("a tool without a name was skipped");
          continue;
        }
        if ((include && !include.has(name)) || exclude.has(name)) continue;
        const problem = schemaProblem(t.inputSchema);
        if (problem) {
          warnings.push(`tool ${name} skipped: its inputSchema is not valid JSON Schema (${problem})`);
          continue;
        }
        tools.push({ name, description: typeof t.description === "string" ? t.description : "", inputSchema: t.inputSchema as Record<string, unknown> });
      }
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    for (const w of warnings) this.hooks.log.warn(`mcp server ${this.spec.name}: ${w}`);
    this.tools = tools;
    this.warnings = warnings;
  }

  async #refresh(): Promise<void> {
    const client = this.#client;
    if (!client || this.state !== "ready") return;
    await this.#list(client);
    this.hooks.changed?.();
  }

  async #elicit(params: Record<string, unknown>, signal: AbortSignal): Promise<ElicitResult> {
    // The call that is waiting on this server (the latest when several run at once) answers.
    const caller = [...this.#calls].reverse().find((c) => c.elicit && !c.signal.aborted);
    if (!caller?.elicit) return { action: "decline" };
    return caller.elicit(
      { server: this.spec.name, message: String(params.message ?? ""), schema: params.requestedSchema },
      AbortSignal.any([signal, caller.signal]),
    );
  }

  /** Call a tool; the SDK cancels it (`notifications/cancelled`) on timeout or interrupt. */
  async call(tool: string, args: unknown, options: { signal: AbortSignal; elicit?: Elicit }): Promise<Record<string, unknown>> {
    await this.ensure();
    const client = this.#client;
    if (!client || this.state !== "ready")
      throw new AgentError("mcp.unavailable", `MCP server ${this.spec.name} is not available: ${this.lastError ?? this.state}`);
    const transport = this.#transport;
    const entry = { elicit: options.elicit, signal: options.signal };
    this.#calls.push(entry);
    try {
      return (await client.callTool({ name: tool, arguments: (args ?? {}) as Record<string, unknown> }, undefined, {
        timeout: this.spec.timeoutMs,
        signal: options.signal,
      })) as Record<string, unknown>;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/Request timed out|-32001/.test(message))
        throw new AgentError(
          "mcp.timeout",
          `MCP tool ${this.spec.name}/${tool} did not answer within ${this.spec.timeoutMs / 1000} s (timeout); it was cancelled`,
        );
      if (/Connection closed/i.test(message)) {
        const why = transport instanceof ProcessStdioTransport && transport.exitReason ? transport.exitReason : "the connection closed";
        throw new AgentError("mcp.server_exited", `MCP server ${this.spec.name} went away during ${tool}: ${why}; it is restarted`);
      }
      throw new AgentError("mcp.call_failed", `MCP tool ${this.spec.name}/${tool} failed: ${message}`);
    } finally {
      this.#calls.splice(this.#calls.indexOf(entry), 1);
    }
  }

  /** Stop the server (a restart, a config change, the daemon stopping). */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    const client = this.#client;
    const transport = this.#transport;
    this.#client = null;
    this.#transport = null;
    if (client && transport) await this.#drop(client, transport);
    if (this.state !== "disabled") this.state = "idle";
    this.tools = [];
  }
}

/** Why a tool's inputSchema cannot be used (null: it can). */
function schemaProblem(schema: unknown): string | null {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return "not an object";
  if ((schema as { type?: unknown }).type !== "object") return 'its type is not "object"';
  try {
    validator.getValidator(schema as never);
  } catch (error) {
    return (error as Error).message.slice(0, 200);
  }
  return null;
}

/**
 * Streamable HTTP, falling back to the older SSE transport when the server only speaks that
 * (its POST to the endpoint answers 4xx other than 401/403).
 */
class FallbackHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #inner: Transport;
  #started = false;
  #fellBack = false;

  constructor(
    private readonly url: URL,
    private readonly headers: Record<string, string>,
  ) {
    this.#inner = this.#wire(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  }

  #wire(t: Transport): Transport {
    t.onclose = () => this.onclose?.();
    t.onerror = (e) => this.onerror?.(e);
    t.onmessage = (m, extra) => this.onmessage?.(m, extra);
    return t;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  setProtocolVersion = (version: string) => this.#inner.setProtocolVersion?.(version);

  async start(): Promise<void> {
    this.#started = true;
    await this.#inner.start();
  }

  async send(message: Parameters<Transport["send"]>[0], options?: Parameters<Transport["send"]>[1]): Promise<void> {
    try {
      await this.#inner.send(message, options);
    } catch (error) {
      const code = (error as { code?: number }).code;
      const first = "method" in message && message.method === "initialize";
      if (!first || this.#fellBack || code === undefined || code === 401 || code === 403 || code < 400 || code >= 500) throw httpError(error, this.url);
      this.#fellBack = true;
      const sse = this.#wire(
        new SSEClientTransport(this.url, { requestInit: { headers: this.headers }, eventSourceInit: { fetch: withHeaders(this.headers) } }),
      );
      this.#inner.onclose = undefined;
      await this.#inner.close().catch(() => undefined);
      this.#inner = sse;
      if (this.#started) await sse.start();
      await sse.send(message, options);
    }
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

function withHeaders(headers: Record<string, string>) {
  return (url: string | URL, init?: RequestInit) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
}

function httpError(error: unknown, url: URL): Error {
  const code = (error as { code?: number }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 401 || code === 403) return new Error(`${url.origin} answered ${code} (not authorized: check the server's headers)`);
  if (code !== undefined && code >= 500) return new Error(`${url.origin} answered ${code}: ${message}`);
  return error instanceof Error ? error : new Error(message);
}

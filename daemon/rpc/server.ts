import { chmodSync, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { ResponseError, type MessageConnection } from "vscode-jsonrpc";
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from "vscode-jsonrpc/node";
import { AgentError, RpcErrorCodes, toAgentError } from "../../shared/errors.js";
import { MAX_SOCKET_PATH_BYTES } from "../../shared/paths.js";
import { EVENT_NOTIFICATION, methods, topicMatches, type CallContext, type Handlers, type MethodName } from "../../shared/protocol/index.js";
import type { InitializeResult } from "../../shared/protocol/daemon.js";
import { PROTOCOL_VERSION } from "../../shared/version.js";
import type { Logger } from "../log/logger.js";

interface Connection {
  id: number;
  rpc: MessageConnection;
  socket: Socket;
  initialized: boolean;
  subscriptions: Set<string>;
  inFlight: Map<number, AbortController>;
  clientVersion?: string;
}

export interface RpcServerOptions {
  socketPath: string;
  log: Logger;
  initializeResult: () => InitializeResult;
}

/**
 * The daemon's socket: JSON-RPC (vscode-jsonrpc, Content-Length framing) over a Unix socket
 * with mode 0600. Every connection must `initialize` first; params are validated against the
 * shared method table before a handler sees them.
 */
export class RpcServer {
  private readonly server: Server;
  private readonly connections = new Map<number, Connection>();
  private readonly handlers: Partial<Handlers> = {};
  private nextConnectionId = 1;
  private nextCallId = 1;
  private closing = false;
  private readonly idleWaiters = new Set<() => void>();

  constructor(private readonly options: RpcServerOptions) {
    this.server = createServer((socket) => this.accept(socket));
    this.register({
      initialize: () => {
        throw new Error("handled by the server");
      },
      "events.subscribe": ({ topics }, call) => {
        const conn = this.connections.get(call.connectionId);
        for (const t of topics) conn?.subscriptions.add(t);
        return { ok: true, topics: [...(conn?.subscriptions ?? [])] };
      },
      "events.unsubscribe": ({ topics }, call) => {
        const conn = this.connections.get(call.connectionId);
        for (const t of topics) conn?.subscriptions.delete(t);
        return { ok: true, topics: [...(conn?.subscriptions ?? [])] };
      },
      ping: async ({ delayMs }, call) => {
        if (delayMs) {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, delayMs);
            call.signal.addEventListener("abort", () => (clearTimeout(timer), reject(call.signal.reason)), { once: true });
          });
        }
        return { pong: true, at: Date.now() };
      },
    });
  }

  /** Add or replace handlers. Each feature registers its own group. */
  register(handlers: Partial<Handlers>): void {
    Object.assign(this.handlers, handlers);
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  get inFlightCount(): number {
    let n = 0;
    for (const c of this.connections.values()) n += c.inFlight.size;
    return n;
  }

  async listen(): Promise<void> {
    const path = this.options.socketPath;
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
      throw new AgentError(
        "daemon.socket_path_too_long",
        `the socket path ${path} is ${Buffer.byteLength(path)} bytes; Unix sockets allow at most ${MAX_SOCKET_PATH_BYTES}. Use a shorter AGENT_HOME`,
        { path },
      );
    }
    // Only the lock holder gets here, so an existing socket file is a dead daemon's.
    try {
      unlinkSync(path);
    } catch {}
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      // Created with a restrictive umask so no other user can connect, even for an instant.
      const oldMask = process.umask(0o177);
      this.server.listen(path, () => {
        process.umask(oldMask);
        this.server.off("error", reject);
        resolve();
      });
    });
    chmodSync(path, 0o600);
  }

  /** Push an event to every connection subscribed to its topic. */
  broadcast(topic: string, data: unknown): void {
    for (const conn of this.connections.values()) {
      if (!conn.initialized) continue;
      for (const sub of conn.subscriptions) {
        if (topicMatches(sub, topic)) {
          void conn.rpc.sendNotification(EVENT_NOTIFICATION, { topic, data }).catch(() => undefined);
          break;
        }
      }
    }
  }

  /** Stop accepting, wait for in-flight calls (up to `graceMs`), then drop every connection. */
  async close(graceMs = 10_000): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.inFlightCount > 0) {
      await Promise.race([
        new Promise<void>((resolve) => this.idleWaiters.add(resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref()),
      ]);
    }
    // Let answers queued in the writers reach their sockets (the reply to daemon.stop among
    // them), then end() so they flush before the connections go.
    await new Promise((resolve) => setTimeout(resolve, 30));
    for (const conn of this.connections.values()) conn.socket.end();
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const conn of this.connections.values()) {
      conn.rpc.dispose();
      conn.socket.destroy();
    }
    this.connections.clear();
    await closed;
    try {
      unlinkSync(this.options.socketPath);
    } catch {}
  }

  private accept(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    const reader = new SocketMessageReader(socket);
    const writer = new SocketMessageWriter(socket);
    const rpc = createMessageConnection(reader, writer, {
      error: (m) => this.options.log.debug("rpc library error", { msg: m }),
      warn: (m) => this.options.log.debug("rpc library warning", { msg: m }),
      info: () => undefined,
      log: () => undefined,
    });
    const conn: Connection = { id: this.nextConnectionId++, rpc, socket, initialized: false, subscriptions: new Set(), inFlight: new Map() };
    this.connections.set(conn.id, conn);

    // Malformed JSON: answer with a JSON-RPC parse error and keep the connection.
    reader.onError((error) => {
      this.options.log.warn("malformed message on the socket", { connection: conn.id, error: error.message });
      void writer
        .write({ jsonrpc: "2.0", id: null, error: { code: RpcErrorCodes.ParseError, message: `parse error: ${error.message}` } } as never)
        .catch(() => undefined);
    });
    rpc.onRequest((method, params, token) => this.dispatch(conn, method, params, token));
    rpc.onNotification(() => undefined);
    rpc.onClose(() => this.drop(conn));
    socket.on("error", () => this.drop(conn));
    socket.on("close", () => this.drop(conn));
    rpc.listen();
  }

  private drop(conn: Connection): void {
    if (!this.connections.delete(conn.id)) return;
    for (const ctl of conn.inFlight.values()) ctl.abort(new AgentError("rpc.disconnected", "the client disconnected"));
    conn.rpc.dispose();
  }

  private async dispatch(conn: Connection, method: string, rawParams: unknown, token: { onCancellationRequested: (cb: () => void) => unknown }): Promise<unknown> {
    const params = Array.isArray(rawParams) ? (rawParams.length === 0 ? {} : rawParams[0]) : (rawParams ?? {});
    if (method === "initialize") return this.initialize(conn, params);
    if (!conn.initialized) {
      return new ResponseError(RpcErrorCodes.NotInitialized, "the connection must call initialize first", { code: "rpc.not_initialized", message: "the connection must call initialize first" });
    }
    if (!Object.hasOwn(methods, method)) {
      return new ResponseError(RpcErrorCodes.MethodNotFound, `unknown method ${method}`, { code: "rpc.method_not_found", message: `unknown method ${method}` });
    }
    const name = method as MethodName;
    const handler = this.handlers[name] as ((p: unknown, c: CallContext) => unknown) | undefined;
    if (!handler) {
      return new ResponseError(RpcErrorCodes.MethodNotFound, `method ${method} is not available in this daemon`, { code: "rpc.method_not_found", message: `method ${method} is not available` });
    }
    const parsed = methods[name].params.safeParse(params);
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "params"}: ${i.message}`).join("; ");
      return new ResponseError(RpcErrorCodes.InvalidParams, `invalid params for ${method}: ${detail}`, {
        code: "rpc.invalid_params",
        message: `invalid params for ${method}: ${detail}`,
        metadata: { issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
      });
    }
    const callId = this.nextCallId++;
    const started = Date.now();
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort(new AgentError("rpc.cancelled", "the request was cancelled")));
    conn.inFlight.set(callId, controller);
    const call: CallContext = {
      connectionId: conn.id,
      signal: controller.signal,
      notify: (topic, data) => void conn.rpc.sendNotification(EVENT_NOTIFICATION, { topic, data }).catch(() => undefined),
    };
    try {
      return await handler(parsed.data, call);
    } catch (error) {
      const agentError = toAgentError(error);
      if (agentError.code === "internal.error") {
        this.options.log.error("rpc handler failed", { method, error });
        return new ResponseError(RpcErrorCodes.InternalError, "internal error (details in the daemon log)", { code: "internal.error", message: "internal error (details in the daemon log)" });
      }
      return new ResponseError(RpcErrorCodes.ApplicationError, agentError.message, agentError.toJSON());
    } finally {
      this.options.log.debug("rpc call", { connection: conn.id, method, ms: Date.now() - started });
      conn.inFlight.delete(callId);
      if (this.closing && this.inFlightCount === 0) for (const w of this.idleWaiters) w();
    }
  }

  private initialize(conn: Connection, params: unknown): InitializeResult | ResponseError<unknown> {
    const parsed = methods.initialize.params.safeParse(params);
    if (!parsed.success) {
      return new ResponseError(RpcErrorCodes.InvalidParams, "initialize needs {protocolVersion: integer, clientVersion: string}", {
        code: "rpc.invalid_params",
        message: "initialize needs {protocolVersion: integer, clientVersion: string}",
      });
    }
    const info = this.options.initializeResult();
    if (parsed.data.protocolVersion !== PROTOCOL_VERSION) {
      const message = `protocol mismatch: this client (agent ${parsed.data.clientVersion}) speaks protocol ${parsed.data.protocolVersion}, the running daemon (agent ${info.daemonVersion}, pid ${info.pid}) speaks protocol ${PROTOCOL_VERSION}; restart it with \`agent daemon restart\``;
      return new ResponseError(RpcErrorCodes.ProtocolMismatch, message, {
        code: "rpc.protocol_mismatch",
        message,
        metadata: { clientProtocol: parsed.data.protocolVersion, daemonProtocol: PROTOCOL_VERSION, daemonVersion: info.daemonVersion, pid: info.pid },
      });
    }
    conn.initialized = true;
    conn.clientVersion = parsed.data.clientVersion;
    return info;
  }
}

import { chmodSync, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { ResponseError, type MessageConnection, type MessageReader } from "vscode-jsonrpc";
import { createMessageConnection, SocketMessageWriter, StreamMessageReader } from "vscode-jsonrpc/node";
import { AgentError, RpcErrorCodes, toAgentError, type SerializedError } from "../../shared/errors.js";
import { MAX_SOCKET_PATH_BYTES } from "../../shared/paths.js";
import {
  EVENT_NOTIFICATION,
  methods,
  topicMatches,
  type CallContext,
  type Handlers,
  type MethodName,
  type Params,
  type Result,
} from "../../shared/protocol/index.js";
import type { InitializeResult } from "../../shared/protocol/daemon.js";
import { PROTOCOL_VERSION } from "../../shared/version.js";
import { FramedInput, type FramingViolation } from "../jsonrpc/framed-input.js";
import { ConnectionCap } from "../limits/connection-cap.js";
import type { Logger } from "../log/logger.js";
import { boundedError, errorResponse, invalidMessage, jsonEncoder, truncate } from "./wire.js";

interface Connection {
  id: number;
  rpc: MessageConnection;
  socket: Socket;
  initialized: boolean;
  subscriptions: Set<string>;
  inFlight: Map<number, AbortController>;
  clientVersion?: string;
  /** The profile the connection runs as, set at initialize. */
  profile: string;
}

export interface RpcServerOptions {
  socketPath: string;
  log: Logger;
  initializeResult: () => Omit<InitializeResult, "profile">;
  /** Open connections at most (docs/limits.md); at the cap the oldest idle one goes first. Default 1024. */
  maxConnections?: number;
}

/** Who goes first when the cap is reached: a connection that never initialized, then a client's, then one with subscriptions (a TUI). */
const RANK = { fresh: 0, initialized: 1, subscribed: 2 } as const;

/**
 * The daemon's socket: JSON-RPC (vscode-jsonrpc, Content-Length framing) over a Unix socket
 * with mode 0600. Every connection must `initialize` first; params are validated against the
 * shared method table before a handler sees them. Input is bounded: a message over
 * MAX_MESSAGE_BYTES or broken framing closes the connection (jsonrpc/framed-input.ts), and error replies
 * cut what they repeat of the input (wire.ts).
 */
export class RpcServer {
  private readonly server: Server;
  private readonly connections = new Map<number, Connection>();
  private readonly handlers: Partial<Handlers> = {};
  private nextConnectionId = 1;
  private nextCallId = 1;
  private closing = false;
  private readonly closingController = new AbortController();
  private readonly idleWaiters = new Set<() => void>();
  private readonly taps = new Set<(topic: string, data: unknown) => void>();
  /** Checks the profile a client asks for at initialize (the profiles feature sets it). */
  private profileResolver: (requested: string | undefined) => string = (requested) => requested ?? "default";
  /** Every connection in the order of its last call: the cap drops the oldest idle one (limits/connection-cap.ts). */
  private readonly cap: ConnectionCap<Connection>;

  constructor(private readonly options: RpcServerOptions) {
    this.cap = new ConnectionCap<Connection>(options.maxConnections ?? 1024, (conn) => {
      this.cap.warnReached(this.options.log, "socket");
      conn.socket.destroy();
    });
    this.server = createServer((socket) => this.accept(socket));
    this.register({
      initialize: () => {
        throw new Error("handled by the server");
      },
      "events.subscribe": ({ topics }, call) => {
        const conn = this.connections.get(call.connectionId);
        for (const t of topics) conn?.subscriptions.add(t);
        if (conn && conn.subscriptions.size > 0) this.cap.setRank(conn, RANK.subscribed);
        return { ok: true, topics: [...(conn?.subscriptions ?? [])] };
      },
      "events.unsubscribe": ({ topics }, call) => {
        const conn = this.connections.get(call.connectionId);
        for (const t of topics) conn?.subscriptions.delete(t);
        if (conn && conn.subscriptions.size === 0) this.cap.setRank(conn, RANK.initialized);
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

  /**
   * Add handlers: each feature registers its own group. A method handled twice is a bug that
   * would silently replace one feature's handler with another's: `rpc.duplicate_handler`.
   */
  register(handlers: Partial<Handlers>): void {
    const twice = Object.keys(handlers).filter((m) => Object.hasOwn(this.handlers, m));
    if (twice.length) throw new AgentError("rpc.duplicate_handler", `more than one handler for ${twice.join(", ")}`, { methods: twice });
    Object.assign(this.handlers, handlers);
  }

  /**
   * Every method of the RPC table (shared/protocol/) has a handler: checked once the features
   * started, before the socket listens. Throws `rpc.missing_handler` naming those without one.
   */
  assertComplete(): void {
    const missing = Object.keys(methods).filter((m) => !Object.hasOwn(this.handlers, m));
    if (missing.length)
      throw new AgentError("rpc.missing_handler", `the RPC table has methods no feature handles: ${missing.join(", ")}`, { methods: missing });
  }

  /**
   * Run a method's handler in process, as a connection running as `profile` would call it: its
   * params checked by the same schema, its errors the same. For a feature that reports what
   * other features say of themselves (`agent debug share`) without reaching into them.
   */
  async invoke<M extends MethodName>(method: M, params: Params<M>, options: { profile?: string; signal?: AbortSignal } = {}): Promise<Result<M>> {
    const handler = this.handlers[method] as ((p: unknown, c: CallContext) => unknown) | undefined;
    if (!handler) throw new AgentError("rpc.method_not_found", `method ${method} is not available in this daemon`);
    const parsed = methods[method].params.safeParse(params);
    if (!parsed.success) throw new AgentError("rpc.invalid_params", `invalid params for ${method}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    const call: CallContext = {
      connectionId: 0,
      profile: options.profile ?? "default",
      signal: options.signal ?? new AbortController().signal,
      notify: () => undefined,
    };
    return (await handler(parsed.data, call)) as Result<M>;
  }

  /** How a connection's profile is chosen and checked at initialize; throws an AgentError to refuse it. */
  setProfileResolver(resolve: (requested: string | undefined) => string): void {
    this.profileResolver = resolve;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** The cap on open connections (`socket.max_connections`, applied at start and reload). */
  setMaxConnections(max: number): void {
    this.cap.max = max;
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
    // After listening, an accept can still fail (EMFILE when the process is out of descriptors):
    // logged, never an unhandled 'error' that would end the daemon.
    let lastAcceptError = 0;
    this.server.on("error", (error) => {
      const now = Date.now();
      if (now - lastAcceptError < 10_000) return;
      lastAcceptError = now;
      this.options.log.error("the socket could not accept a connection", { error });
    });
  }

  /**
   * Every broadcast, in process, whatever the topic (the dashboard's event stream relays them to
   * the browser). Returns the unsubscribe.
   */
  tap(listener: (topic: string, data: unknown) => void): () => void {
    this.taps.add(listener);
    return () => this.taps.delete(listener);
  }

  /** Push an event to every connection subscribed to its topic. */
  broadcast(topic: string, data: unknown): void {
    for (const tap of this.taps) {
      try {
        tap(topic, data);
      } catch (error) {
        this.options.log.error("an event listener failed", { topic, error });
      }
    }
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

  /** Aborted when the server starts closing: calls that stay open (a watch) end then, rather than holding the shutdown. */
  get closingSignal(): AbortSignal {
    return this.closingController.signal;
  }

  /** Stop accepting, wait for in-flight calls (up to `graceMs`), then drop every connection. */
  async close(graceMs = 10_000): Promise<void> {
    this.closing = true;
    this.closingController.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.inFlightCount > 0) {
      await Promise.race([new Promise<void>((resolve) => this.idleWaiters.add(resolve)), new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref())]);
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
    const log = this.options.log;
    const id = this.nextConnectionId++;
    const writer = new SocketMessageWriter(socket, {
      charset: "utf-8",
      contentTypeEncoder: jsonEncoder((msg, error) =>
        log.error("an answer on the socket is not serializable as JSON", { connection: id, id: (msg as { id?: unknown }).id, error }),
      ),
    });
    const reply = (rpcCode: number, error: SerializedError, requestId: string | number | null = null) =>
      writer.write(errorResponse(requestId, rpcCode, error)).catch(() => undefined);
    // The library's reader buffers whatever a header announces: the framing is checked first.
    const input = new FramedInput(socket, (v) => {
      const violation = socketViolation(v);
      log.warn("bad framing on the socket; closing the connection", { connection: id, code: violation.code, error: violation.message });
      // Half-close after the answer, and keep reading (into nothing) a moment: a client still
      // writing would otherwise get a reset before it reads why.
      void reply(RpcErrorCodes.InvalidRequest, violation).finally(() => {
        socket.end();
        setTimeout(() => socket.destroy(), 2000).unref();
      });
    });
    const reader = new StreamMessageReader(input as unknown as NodeJS.ReadableStream);
    const checked: MessageReader = {
      onError: reader.onError,
      onClose: reader.onClose,
      onPartialMessage: reader.onPartialMessage,
      listen: (callback) =>
        reader.listen((msg) => {
          const problem = invalidMessage(msg);
          if (!problem) return callback(msg);
          log.warn("invalid message on the socket", { connection: id, error: problem.message });
          void reply(RpcErrorCodes.InvalidRequest, { code: "rpc.invalid_request", message: problem.message }, problem.id);
        }),
      dispose: () => reader.dispose(),
    };
    const rpc = createMessageConnection(checked, writer, {
      error: (m) => this.options.log.debug("rpc library error", { msg: m }),
      warn: (m) => this.options.log.debug("rpc library warning", { msg: m }),
      info: () => undefined,
      log: () => undefined,
    });
    const conn: Connection = { id, rpc, socket, initialized: false, subscriptions: new Set(), inFlight: new Map(), profile: "default" };
    // At the cap, the oldest idle connection goes so this one (a CLI, say) is answered; with
    // every connection busy, this one is refused with why.
    if (!this.cap.admit(conn, RANK.fresh)) {
      this.cap.warnReached(this.options.log, "socket");
      void reply(RpcErrorCodes.ApplicationError, {
        code: "rpc.too_many_connections",
        message: "the daemon has too many open connections, all busy; try again",
      }).finally(() => socket.end());
      setTimeout(() => socket.destroy(), 1000).unref();
      return;
    }
    this.connections.set(conn.id, conn);

    // Malformed JSON: answer with a JSON-RPC parse error and keep the connection.
    reader.onError((error) => {
      log.warn("malformed message on the socket", { connection: conn.id, error: truncate(error.message) });
      void reply(RpcErrorCodes.ParseError, { code: "rpc.parse_error", message: `parse error: ${error.message}` });
    });
    rpc.onRequest((method, params, token) => this.dispatch(conn, method, params, token));
    rpc.onNotification(() => undefined);
    rpc.onClose(() => this.drop(conn));
    socket.on("error", () => this.drop(conn));
    socket.on("close", () => this.drop(conn));
    rpc.listen();
  }

  private drop(conn: Connection): void {
    this.cap.remove(conn);
    if (!this.connections.delete(conn.id)) return;
    for (const ctl of conn.inFlight.values()) ctl.abort(new AgentError("rpc.disconnected", "the client disconnected"));
    conn.rpc.dispose();
  }

  private async dispatch(
    conn: Connection,
    method: string,
    rawParams: unknown,
    token: { onCancellationRequested: (cb: () => void) => unknown },
  ): Promise<unknown> {
    this.cap.begin(conn);
    try {
      return await this.dispatchCall(conn, method, rawParams, token);
    } finally {
      this.cap.end(conn);
    }
  }

  private async dispatchCall(
    conn: Connection,
    method: string,
    rawParams: unknown,
    token: { onCancellationRequested: (cb: () => void) => unknown },
  ): Promise<unknown> {
    const params = Array.isArray(rawParams) ? (rawParams.length === 0 ? {} : rawParams[0]) : (rawParams ?? {});
    if (method === "initialize") return this.initialize(conn, params);
    if (!conn.initialized) return failure(RpcErrorCodes.NotInitialized, "rpc.not_initialized", "the connection must call initialize first");
    if (!Object.hasOwn(methods, method)) return failure(RpcErrorCodes.MethodNotFound, "rpc.method_not_found", `unknown method ${truncate(method, 200)}`);
    const name = method as MethodName;
    const handler = this.handlers[name] as ((p: unknown, c: CallContext) => unknown) | undefined;
    if (!handler) return failure(RpcErrorCodes.MethodNotFound, "rpc.method_not_found", `method ${method} is not available in this daemon`);
    const parsed = methods[name].params.safeParse(params);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 20);
      const detail = issues.map((i) => `${truncate(i.path.join("."), 200) || "params"}: ${truncate(i.message, 200)}`).join("; ");
      return failure(RpcErrorCodes.InvalidParams, "rpc.invalid_params", `invalid params for ${method}: ${detail}`, {
        issues: issues.map((i) => ({ path: i.path.map(String), message: i.message })),
      });
    }
    const callId = this.nextCallId++;
    const started = Date.now();
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort(new AgentError("rpc.cancelled", "the request was cancelled")));
    conn.inFlight.set(callId, controller);
    const call: CallContext = {
      connectionId: conn.id,
      profile: conn.profile,
      signal: controller.signal,
      notify: (topic, data) => void conn.rpc.sendNotification(EVENT_NOTIFICATION, { topic, data }).catch(() => undefined),
    };
    try {
      return await handler(parsed.data, call);
    } catch (error) {
      const agentError = toAgentError(error);
      if (agentError.code === "internal.error") {
        this.options.log.error("rpc handler failed", { method, error });
        return failure(RpcErrorCodes.InternalError, "internal.error", "internal error (details in the daemon log)");
      }
      return failure(RpcErrorCodes.ApplicationError, agentError.code, agentError.message, agentError.metadata);
    } finally {
      this.options.log.debug("rpc call", { connection: conn.id, method, ms: Date.now() - started });
      conn.inFlight.delete(callId);
      if (this.closing && this.inFlightCount === 0) for (const w of this.idleWaiters) w();
    }
  }

  private initialize(conn: Connection, params: unknown): InitializeResult | ResponseError<unknown> {
    const parsed = methods.initialize.params.safeParse(params);
    if (!parsed.success)
      return failure(RpcErrorCodes.InvalidParams, "rpc.invalid_params", "initialize needs {protocolVersion: integer, clientVersion: string}");
    const info = this.options.initializeResult();
    if (parsed.data.protocolVersion !== PROTOCOL_VERSION) {
      const message = `protocol mismatch: this client (agent ${parsed.data.clientVersion}) speaks protocol ${parsed.data.protocolVersion}, the running daemon (agent ${info.daemonVersion}, pid ${info.pid}) speaks protocol ${PROTOCOL_VERSION}; restart it with \`agent daemon restart\``;
      return failure(RpcErrorCodes.ProtocolMismatch, "rpc.protocol_mismatch", message, {
        clientProtocol: parsed.data.protocolVersion,
        daemonProtocol: PROTOCOL_VERSION,
        daemonVersion: info.daemonVersion,
        pid: info.pid,
      });
    }
    let profile: string;
    try {
      profile = this.profileResolver(parsed.data.profile);
    } catch (error) {
      const e = toAgentError(error);
      return failure(RpcErrorCodes.ApplicationError, e.code, e.message, e.metadata);
    }
    conn.initialized = true;
    if (conn.subscriptions.size === 0) this.cap.setRank(conn, RANK.initialized);
    conn.clientVersion = parsed.data.clientVersion;
    conn.profile = profile;
    return { ...info, profile };
  }
}

/** An error answer; its message and metadata are bounded, since both may repeat the input. */
function failure(rpcCode: number, code: string, message: string, metadata?: Record<string, unknown>): ResponseError<SerializedError> {
  const e = boundedError({ code, message, ...(metadata ? { metadata } : {}) });
  return new ResponseError(rpcCode, e.message, e);
}

/** A framing violation on the socket, as the error the client is answered with. */
function socketViolation(v: FramingViolation): SerializedError {
  if (v.kind === "too_large") {
    return { code: "rpc.message_too_large", message: `a message of ${v.length} bytes is over the daemon's limit of ${v.limit} bytes` };
  }
  return { code: "rpc.bad_framing", message: v.message };
}

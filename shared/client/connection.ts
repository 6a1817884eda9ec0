import { connect as netConnect, type Socket } from "node:net";
import type { MessageConnection } from "vscode-jsonrpc";
import { AgentError, type SerializedError } from "../errors.js";
import { homePaths, logFile, MAX_SOCKET_PATH_BYTES } from "../paths.js";
// Types only from the method table (it loads zod); the one runtime constant comes from events.js.
import type { MethodName, Params, Result } from "../protocol/index.js";
import { EVENT_NOTIFICATION, type EventMessage } from "../protocol/events.js";
import type { InitializeResult } from "../protocol/daemon.js";
import { APP_VERSION, PROTOCOL_VERSION } from "../version.js";
import { envNumber, envValue } from "../config/env.js";

/** One initialized connection to the daemon. */
interface Link {
  rpc: MessageConnection;
  socket: Socket;
  info: InitializeResult;
}

/**
 * A connected, initialized client of the daemon: the API the CLI and the TUI share.
 *
 * With `redial` (a kanban worker's client: see `connectDaemon`), a dropped connection is not
 * the end: the next call connects again (the daemon restarting meanwhile), retrying until
 * `reconnectMs` have passed since the drop. Calls that were on their way when it dropped still
 * fail (`daemon.disconnected`): whether the daemon acted on them is unknown, so they are not
 * sent twice. Event subscriptions are the connection's and are not renewed.
 */
export class DaemonClient {
  private readonly listeners = new Set<(event: EventMessage) => void>();
  private link!: Link;
  private droppedAt: number | null = null;
  private redialing: Promise<void> | null = null;
  private closedByUs = false;

  constructor(
    link: Link,
    private readonly redial?: { connect: () => Promise<Link | null>; reconnectMs: number },
  ) {
    this.attach(link);
  }

  /** What the daemon said at `initialize` (the one currently connected). */
  get daemon(): InitializeResult {
    return this.link.info;
  }

  private attach(link: Link): void {
    this.link = link;
    this.droppedAt = null;
    link.rpc.onNotification(EVENT_NOTIFICATION, (event: EventMessage) => {
      for (const listener of this.listeners) listener(event);
    });
    // Pending calls fail (instead of hanging) when the daemon goes away.
    link.socket.once("close", () => {
      link.rpc.dispose();
      if (this.link === link) this.droppedAt = Date.now();
    });
  }

  async call<M extends MethodName>(method: M, params: Params<M>, signal?: AbortSignal): Promise<Result<M>> {
    if (this.droppedAt !== null) {
      if (this.closedByUs) throw new AgentError("daemon.disconnected", "this client's connection was closed");
      if (!this.redial) throw new AgentError("daemon.disconnected", "the daemon closed the connection");
      await this.reconnect();
    }
    return callRaw(this.link.rpc, method, params, signal) as Promise<Result<M>>;
  }

  /** Connect again after a drop, one attempt at a time for all callers, until `reconnectMs` after the drop. */
  private reconnect(): Promise<void> {
    this.redialing ??= (async () => {
      const { connect, reconnectMs } = this.redial!;
      const deadline = (this.droppedAt ?? Date.now()) + reconnectMs;
      let wait = 50;
      let last: unknown = null;
      for (;;) {
        try {
          const link = await connect();
          if (link) {
            if (this.closedByUs) {
              link.rpc.dispose();
              link.socket.destroy();
            } else this.attach(link);
            return;
          }
        } catch (error) {
          last = error;
        }
        if (Date.now() + wait > deadline)
          throw new AgentError(
            "daemon.disconnected",
            `the daemon closed the connection and did not answer again within ${Math.round(reconnectMs / 1000)} s${last ? ` (${(last as Error).message})` : ""}`,
          );
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(1000, wait * 2);
      }
    })().finally(() => {
      this.redialing = null;
    });
    return this.redialing;
  }

  onEvent(listener: (event: EventMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when the daemon closes the (current) connection. */
  closed(): Promise<void> {
    const socket = this.link.socket;
    return new Promise((resolve) => {
      if (socket.destroyed) resolve();
      else socket.once("close", () => resolve());
    });
  }

  close(): void {
    this.closedByUs = true;
    this.link.rpc.dispose();
    this.link.socket.destroy();
  }
}

async function callRaw(rpc: MessageConnection, method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
  const { CancellationTokenSource } = await loadJsonRpc();
  const source = new CancellationTokenSource();
  const onAbort = () => source.cancel();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await rpc.sendRequest(method, params, source.token);
  } catch (error) {
    throw fromRpcError(error);
  } finally {
    signal?.removeEventListener("abort", onAbort);
    source.dispose();
  }
}

/**
 * The RPC library's own codes for a connection that went away (its reserved range): a write or
 * read on a closed socket, a pending request rejected because the connection was disposed, a
 * request on an inactive connection.
 */
const LINK_LOST_CODES = new Set([-32099, -32098, -32097, -32096]);

/**
 * An error from the RPC layer as the product's own error. The daemon's errors keep their code;
 * every way the library reports a lost connection (its ResponseError codes above, its
 * ConnectionError "Connection is closed/disposed") becomes `daemon.disconnected`, so no library
 * text reaches a user.
 */
export function fromRpcError(error: unknown): AgentError {
  if (error instanceof AgentError) return error;
  const e = error as { code?: number; message?: string; data?: Partial<SerializedError>; name?: string };
  if (e && typeof e === "object" && e.data && typeof e.data.code === "string") {
    return AgentError.received(e.data.code, e.data.message ?? e.message ?? "error", e.data.metadata);
  }
  if (e && typeof e === "object" && (LINK_LOST_CODES.has(e.code as number) || isConnectionError(e)))
    return new AgentError("daemon.disconnected", "the daemon closed the connection");
  if (e && typeof e.code === "number") return new AgentError("rpc.error", e.message ?? "rpc error", { rpcCode: e.code });
  if (e instanceof Error && /closed|disposed|EPIPE|ECONNRESET/i.test(e.message))
    return new AgentError("daemon.disconnected", "the daemon closed the connection");
  return new AgentError("rpc.error", e instanceof Error ? e.message : String(error));
}

/** vscode-jsonrpc's ConnectionError (codes 1 closed, 2 disposed; 3 is "already listening", a bug of ours). */
function isConnectionError(e: { code?: number; constructor?: { name?: string } }): boolean {
  return e.constructor?.name === "ConnectionError" && (e.code === 1 || e.code === 2);
}

export interface ConnectOptions {
  home: string;
  /** Start the daemon if none is running (the default for every command that needs it). */
  autostart?: boolean;
  /** How long to wait for a started daemon's ready handshake. */
  startTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** The profile this connection runs as; default `AGENT_PROFILE` (the CLI's `--profile` sets it), else the daemon's active profile. */
  profile?: string;
  /**
   * After the connection drops, how long later calls keep trying to connect again (ms); 0: they
   * fail at once. Default: 30 s in a kanban worker (`AGENT_KANBAN_TASK` set; its daemon may be
   * restarting, and the worker outlives it), else 0. `AGENT_WORKER_RECONNECT_MS` overrides it.
   */
  reconnectMs?: number;
}

/** The default of `reconnectMs`. */
const WORKER_RECONNECT_MS = 30_000;

/** Connect to the home's daemon, starting it on demand. */
export async function connectDaemon(options: ConnectOptions): Promise<DaemonClient> {
  const { socket: socketPath } = homePaths(options.home);
  // Load the RPC library while the socket connects: the two are most of a command's start-up.
  loadJsonRpc().catch(() => undefined);
  const env = options.env ?? process.env;
  const profile = options.profile ?? (envValue("AGENT_PROFILE", env)?.trim() || undefined);
  // A kanban worker serves the daemon that spawned it: it never starts a daemon of its own behind
  // everyone's back, but it waits for that daemon to come back when it restarts (the next daemon
  // adopts the worker's run); a daemon gone for good is the next start's to settle.
  const worker = Boolean(envValue("AGENT_KANBAN_TASK", env));
  const reconnectMs = options.reconnectMs ?? (worker ? envNumber("AGENT_WORKER_RECONNECT_MS", WORKER_RECONNECT_MS, (n) => n >= 0, env) : 0);
  const redial =
    reconnectMs > 0
      ? {
          reconnectMs,
          connect: async () => {
            const socket = await tryConnect(socketPath);
            return socket ? initialize(socket, profile) : null;
          },
        }
      : undefined;
  const first = await connectOnce(socketPath, profile);
  if (first) return new DaemonClient(first, redial);
  if (!options.autostart || worker)
    throw new AgentError("daemon.not_running", `no daemon is running for ${options.home}${worker ? " (a kanban worker never starts one)" : ""}`, {
      home: options.home,
    });
  // Loaded only here: a call to a running daemon does not pay for spawning one (node:child_process).
  const { startDaemon } = await import("./daemon-process.js");
  await startDaemon(options);
  const second = await tryConnect(socketPath);
  if (!second)
    throw new AgentError("daemon.start_failed", `the daemon started but its socket ${socketPath} does not answer; see ${logFile(options.home, "daemon")}`);
  return new DaemonClient(await initialize(second, profile), redial);
}

/** Connect to the socket; null when nobody listens there. */
export function tryConnect(path: string): Promise<Socket | null> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    return Promise.reject(
      new AgentError(
        "daemon.socket_path_too_long",
        `the socket path ${path} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes Unix sockets allow; use a shorter AGENT_HOME`,
      ),
    );
  }
  return connectRetrying(path, Date.now() + BACKLOG_WAIT_MS, 10);
}

/** How long a connect keeps trying while the daemon's listen backlog is full (EAGAIN). */
const BACKLOG_WAIT_MS = 3000;

function connectRetrying(path: string, until: number, delayMs: number): Promise<Socket | null> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(path);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ECONNREFUSED") resolve(null);
      // A Unix socket's connect fails with EAGAIN while the daemon's backlog of connections not
      // yet accepted is full (a burst of clients): the daemon is there and will accept again.
      else if (error.code === "EAGAIN" && Date.now() + delayMs < until)
        setTimeout(() => connectRetrying(path, until, Math.min(delayMs * 2, 200)).then(resolve, reject), delayMs);
      else reject(new AgentError("daemon.connect_failed", `cannot connect to ${path}: ${error.message}`));
    });
  });
}

type JsonRpc = typeof import("vscode-jsonrpc/node");
let jsonRpc: Promise<JsonRpc> | null = null;
/**
 * vscode-jsonrpc is CommonJS. Node (and tsx, running the sources in tests) gives its exports as
 * named exports; the build inlines it (scripts/bundle.mjs), where a lazily imported CommonJS
 * module's namespace has only `default` (its `module.exports`).
 */
function loadJsonRpc(): Promise<JsonRpc> {
  jsonRpc ??= import("vscode-jsonrpc/node").then((m) => (typeof m.createMessageConnection === "function" ? m : (m as unknown as { default: JsonRpc }).default));
  return jsonRpc;
}

async function initialize(socket: Socket, profile: string | undefined): Promise<Link> {
  socket.on("error", () => undefined);
  let rpc: Awaited<ReturnType<typeof createRpc>> | undefined;
  // A daemon that dies (or stops) just as we connect closes the socket before it answers: the
  // library leaves a pending request pending when its stream ends, so end it here.
  let lost = false;
  const onClose = () => {
    lost = true;
    rpc?.dispose();
  };
  socket.once("close", onClose);
  try {
    rpc = await createRpc(socket);
    if (lost || socket.destroyed) throw new AgentError("daemon.disconnected", "the daemon closed the connection");
    const info = (await callRaw(rpc, "initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientVersion: APP_VERSION,
      ...(profile ? { profile } : {}),
    })) as InitializeResult;
    socket.off("close", onClose);
    return { rpc, socket, info };
  } catch (error) {
    // Whatever failed (the library too), the socket must not keep the process alive.
    socket.off("close", onClose);
    rpc?.dispose();
    socket.destroy();
    throw error;
  }
}

/**
 * Connect and initialize; null when no daemon listens. A daemon that goes away as we connect
 * (killed, or stopping: it closes what it accepted) is asked once more, and is then most likely
 * gone: not running.
 */
async function connectOnce(socketPath: string, profile: string | undefined): Promise<Link | null> {
  for (let attempt = 0; ; attempt++) {
    const socket = await tryConnect(socketPath);
    if (!socket) return null;
    try {
      return await initialize(socket, profile);
    } catch (error) {
      if (attempt > 0 || !(error instanceof AgentError) || error.code !== "daemon.disconnected") throw error;
    }
  }
}

async function createRpc(socket: Socket) {
  const { createMessageConnection, SocketMessageReader, SocketMessageWriter } = await loadJsonRpc();
  const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  rpc.listen();
  return rpc;
}

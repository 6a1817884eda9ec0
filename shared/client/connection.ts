import { connect as netConnect, type Socket } from "node:net";
import type { MessageConnection } from "vscode-jsonrpc";
import { AgentError, type SerializedError } from "../errors.js";
import { homePaths, logFile, MAX_SOCKET_PATH_BYTES } from "../paths.js";
import { startDaemon } from "./daemon-process.js";
// Types only from the method table (it loads zod); the one runtime constant comes from events.js.
import type { MethodName, Params, Result } from "../protocol/index.js";
import { EVENT_NOTIFICATION, type EventMessage } from "../protocol/events.js";
import type { InitializeResult } from "../protocol/daemon.js";
import { APP_VERSION, PROTOCOL_VERSION } from "../version.js";

/** A connected, initialized client of the daemon: the API the CLI and the TUI share. */
export class DaemonClient {
  private readonly listeners = new Set<(event: EventMessage) => void>();

  constructor(
    private readonly rpc: MessageConnection,
    private readonly socket: Socket,
    readonly daemon: InitializeResult,
  ) {
    rpc.onNotification(EVENT_NOTIFICATION, (event: EventMessage) => {
      for (const listener of this.listeners) listener(event);
    });
    // Pending calls fail (instead of hanging) when the daemon goes away.
    socket.once("close", () => rpc.dispose());
  }

  async call<M extends MethodName>(method: M, params: Params<M>, signal?: AbortSignal): Promise<Result<M>> {
    return callRaw(this.rpc, method, params, signal) as Promise<Result<M>>;
  }

  onEvent(listener: (event: EventMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when the daemon closes the connection. */
  closed(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) resolve();
      else this.socket.once("close", () => resolve());
    });
  }

  close(): void {
    this.rpc.dispose();
    this.socket.destroy();
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

function fromRpcError(error: unknown): AgentError {
  const e = error as { code?: number; message?: string; data?: Partial<SerializedError> };
  if (e && typeof e === "object" && e.data && typeof e.data.code === "string") {
    return new AgentError(e.data.code, e.data.message ?? e.message ?? "error", e.data.metadata);
  }
  if (e && typeof e.code === "number") return new AgentError("rpc.error", e.message ?? "rpc error", { rpcCode: e.code });
  if (e instanceof Error && /closed|disposed/i.test(e.message)) return new AgentError("daemon.disconnected", "the daemon closed the connection");
  return new AgentError("rpc.error", e instanceof Error ? e.message : String(error));
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
}

/** Connect to the home's daemon, starting it on demand. */
export async function connectDaemon(options: ConnectOptions): Promise<DaemonClient> {
  const { socket: socketPath } = homePaths(options.home);
  // Load the RPC library while the socket connects: the two are most of a command's start-up.
  loadJsonRpc().catch(() => undefined);
  const first = await tryConnect(socketPath);
  const profile = options.profile ?? ((options.env ?? process.env).AGENT_PROFILE?.trim() || undefined);
  if (first) return initialize(first, profile);
  // A kanban worker serves the daemon that spawned it: with that daemon gone it must fail (the
  // next daemon's reconcile handles the run), never start a daemon of its own behind everyone's back.
  const worker = Boolean((options.env ?? process.env).AGENT_KANBAN_TASK);
  if (!options.autostart || worker)
    throw new AgentError("daemon.not_running", `no daemon is running for ${options.home}${worker ? " (a kanban worker never starts one)" : ""}`, {
      home: options.home,
    });
  await startDaemon(options);
  const second = await tryConnect(socketPath);
  if (!second)
    throw new AgentError("daemon.start_failed", `the daemon started but its socket ${socketPath} does not answer; see ${logFile(options.home, "daemon")}`);
  return initialize(second, profile);
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
  return new Promise((resolve, reject) => {
    const socket = netConnect(path);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ECONNREFUSED") resolve(null);
      else reject(new AgentError("daemon.connect_failed", `cannot connect to ${path}: ${error.message}`));
    });
  });
}

let jsonRpc: Promise<typeof import("vscode-jsonrpc/node")> | null = null;
function loadJsonRpc(): Promise<typeof import("vscode-jsonrpc/node")> {
  jsonRpc ??= import("vscode-jsonrpc/node");
  return jsonRpc;
}

async function initialize(socket: Socket, profile: string | undefined): Promise<DaemonClient> {
  const { createMessageConnection, SocketMessageReader, SocketMessageWriter } = await loadJsonRpc();
  const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  rpc.listen();
  socket.on("error", () => undefined);
  try {
    const info = (await callRaw(rpc, "initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientVersion: APP_VERSION,
      ...(profile ? { profile } : {}),
    })) as InitializeResult;
    return new DaemonClient(rpc, socket, info);
  } catch (error) {
    rpc.dispose();
    socket.destroy();
    throw error;
  }
}

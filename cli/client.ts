import { spawn } from "node:child_process";
import { mkdirSync, openSync, closeSync, statSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import type { MessageConnection } from "vscode-jsonrpc";
import { AgentError, type SerializedError } from "../shared/errors.js";
import { homePaths, logFile, MAX_SOCKET_PATH_BYTES } from "../shared/paths.js";
// Types only from the method table (it loads zod); the one runtime constant comes from events.js.
import type { MethodName, Params, Result } from "../shared/protocol/index.js";
import { EVENT_NOTIFICATION, type EventMessage } from "../shared/protocol/events.js";
import type { InitializeResult } from "../shared/protocol/daemon.js";
import { isAlive } from "../shared/process.js";
import { APP_VERSION, PROTOCOL_VERSION } from "../shared/version.js";

/** A connected, initialized client of the daemon. The programmatic API the CLI and TUI share. */
export class DaemonClient {
  private readonly listeners = new Set<(event: EventMessage) => void>();

  constructor(private readonly rpc: MessageConnection, private readonly socket: Socket, readonly daemon: InitializeResult) {
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
}

/** Connect to the home's daemon, starting it on demand. */
export async function connectDaemon(options: ConnectOptions): Promise<DaemonClient> {
  const { socket: socketPath } = homePaths(options.home);
  // Load the RPC library while the socket connects: the two are most of a command's start-up.
  loadJsonRpc().catch(() => undefined);
  const first = await tryConnect(socketPath);
  if (first) return initialize(first);
  if (!options.autostart) throw new AgentError("daemon.not_running", `no daemon is running for ${options.home}`, { home: options.home });
  await startDaemon(options);
  const second = await tryConnect(socketPath);
  if (!second) throw new AgentError("daemon.start_failed", `the daemon started but its socket ${socketPath} does not answer; see ${logFile(options.home, "daemon")}`);
  return initialize(second);
}

/** Connect to the socket; null when nobody listens there. */
export function tryConnect(path: string): Promise<Socket | null> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    return Promise.reject(
      new AgentError("daemon.socket_path_too_long", `the socket path ${path} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes Unix sockets allow; use a shorter AGENT_HOME`),
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

async function initialize(socket: Socket): Promise<DaemonClient> {
  const { createMessageConnection, SocketMessageReader, SocketMessageWriter } = await loadJsonRpc();
  const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  rpc.listen();
  socket.on("error", () => undefined);
  try {
    const info = (await callRaw(rpc, "initialize", { protocolVersion: PROTOCOL_VERSION, clientVersion: APP_VERSION })) as InitializeResult;
    return new DaemonClient(rpc, socket, info);
  } catch (error) {
    rpc.dispose();
    socket.destroy();
    throw error;
  }
}

/** Path of the daemon entry point, next to this file in dist/. */
export function daemonEntry(): string {
  return fileURLToPath(new URL("../daemon/main.js", import.meta.url));
}

/** Start a detached daemon and wait for its ready handshake over the IPC channel. */
export async function startDaemon(options: ConnectOptions): Promise<{ pid: number; alreadyRunning: boolean }> {
  const paths = homePaths(options.home);
  mkdirSync(paths.logs, { recursive: true, mode: 0o700 });
  const daemonLog = logFile(options.home, "daemon");
  // The daemon's own stdout/stderr (crashes before its logger is up) go to a file beside the logs.
  const outPath = logFile(options.home, "daemon-stderr");
  const out = openSync(outPath, "a", 0o600);
  const child = spawn(process.execPath, [daemonEntry()], {
    detached: true,
    stdio: ["ignore", out, out, "ipc"],
    env: { ...(options.env ?? process.env), AGENT_HOME: options.home },
  });
  closeSync(out);
  const timeoutMs = options.startTimeoutMs ?? Number(process.env.AGENT_DAEMON_START_TIMEOUT_MS ?? 15_000);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new AgentError("daemon.start_timeout", `the daemon did not become ready within ${timeoutMs} ms; see ${daemonLog} and ${outPath}`));
      }, timeoutMs);
      child.once("message", (message: { type: string; pid?: number; code?: string; message?: string }) => {
        clearTimeout(timer);
        if (message.type === "ready") resolve({ pid: message.pid!, alreadyRunning: false });
        else if (message.code === "daemon.already_running") resolve({ pid: Number((message.message ?? "").match(/pid (\d+)/)?.[1] ?? 0), alreadyRunning: true });
        else reject(new AgentError("daemon.start_failed", `the daemon failed to start: ${(message.message ?? "").replace(/\.$/, "")} (see ${daemonLog})`));
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        // A refusal message sent just before exiting may arrive after the exit event.
        setTimeout(() => reject(new AgentError("daemon.start_failed", `the daemon exited during start-up (${signal ?? `code ${code}`}); see ${daemonLog} and ${outPath}`)), 100);
      });
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(new AgentError("daemon.start_failed", `could not spawn the daemon: ${error.message}`));
      });
    });
  } finally {
    child.removeAllListeners();
    if (child.connected) child.disconnect();
    child.unref();
  }
}

/**
 * Ask a connected daemon to stop and wait until its process is gone (its lock released), so a
 * new daemon can start at once; `timeoutMs` counts from its last sign of progress. Closes
 * `client`. Used by `agent daemon stop|restart` and `/restart`.
 */
export async function stopDaemonAndWait(client: DaemonClient, timeoutMs = 15_000): Promise<number> {
  const { pid } = await client.call("daemon.stop", {}).catch(() => ({ pid: client.daemon.pid }));
  client.close();
  // The daemon touches its lock file as a long stop progresses: each touch restarts the wait.
  const lock = homePaths(client.daemon.home).lock;
  const touched = () => statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  let seen = touched();
  let deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    const t = touched();
    if (t !== seen) {
      seen = t;
      deadline = Date.now() + timeoutMs;
    }
    if (Date.now() > deadline) {
      throw new AgentError("daemon.stop_timeout", `agentd (pid ${pid}) did not exit within ${Math.round(timeoutMs / 1000)} s; kill it with \`kill ${pid}\``);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return pid;
}

import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, statSync } from "node:fs";
import type { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { AgentError } from "../errors.js";
import { homePaths, logFile } from "../paths.js";
import { isAlive } from "../process.js";
import type { ConnectOptions, DaemonClient } from "./connection.js";
import { envNumber } from "../config/env.js";
import { CONFIG_DEFAULTS } from "../config/defaults.js";
import { startRelay } from "../log-relay.js";

/** Path of the daemon entry point, next to this file in dist/. */
export function daemonEntry(): string {
  return fileURLToPath(new URL("../../daemon/main.js", import.meta.url));
}

function withoutKanbanWorkerVars(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith("AGENT_KANBAN_")));
}

/**
 * Where the daemon's stdout and stderr go: the relay's pipe, or, when the relay cannot start,
 * the file itself opened for appending (unrotated, as a last resort: output is never dropped).
 */
async function daemonOutput(path: string, env: NodeJS.ProcessEnv): Promise<{ target: number | Writable; release: () => void }> {
  const { max_bytes, keep } = CONFIG_DEFAULTS.logs;
  // There from the start, as it always was (`agent logs -c daemon-stderr` finds it empty, not missing).
  closeSync(openSync(path, "a", 0o600));
  try {
    const relay = await startRelay({
      path,
      maxBytes: envNumber("AGENT_DAEMON_STDERR_MAX_BYTES", max_bytes, (n) => Number.isInteger(n) && n > 0, env),
      keep,
      secrets: [],
    });
    return { target: relay.input, release: relay.release };
  } catch {
    const fd = openSync(path, "a", 0o600);
    return { target: fd, release: () => closeSync(fd) };
  }
}

/** Start a detached daemon and wait for its ready handshake over the IPC channel. */
export async function startDaemon(options: ConnectOptions): Promise<{ pid: number; alreadyRunning: boolean }> {
  const paths = homePaths(options.home);
  mkdirSync(paths.logs, { recursive: true, mode: 0o700 });
  const daemonLog = logFile(options.home, "daemon");
  // The daemon's own stdout/stderr (an actor's console output, Node's warnings, a crash before
  // its logger is up) go to a file beside the logs, through the worker-output relay so the one
  // log writer rotates it by size like every other log; the relay ends when the daemon does.
  const outPath = logFile(options.home, "daemon-stderr");
  const out = await daemonOutput(outPath, options.env ?? process.env);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(process.execPath, [daemonEntry()], {
      detached: true,
      stdio: ["ignore", out.target, out.target, "ipc"],
      // A kanban worker may start the daemon: its task variables are the worker's, not the daemon's.
      env: { ...withoutKanbanWorkerVars(options.env ?? process.env), AGENT_HOME: options.home },
    });
  } finally {
    // The daemon holds its own copy now (or never started: the relay sees the end and exits).
    out.release();
  }
  const timeoutMs = options.startTimeoutMs ?? envNumber("AGENT_DAEMON_START_TIMEOUT_MS", 15_000);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new AgentError("daemon.start_timeout", `the daemon did not become ready within ${timeoutMs} ms; see ${daemonLog} and ${outPath}`));
      }, timeoutMs);
      child.once("message", (message: { type: string; pid?: number; code?: string; message?: string }) => {
        clearTimeout(timer);
        if (message.type === "ready") resolve({ pid: message.pid!, alreadyRunning: false });
        else if (message.code === "daemon.already_running")
          resolve({ pid: Number((message.message ?? "").match(/pid (\d+)/)?.[1] ?? 0), alreadyRunning: true });
        else reject(new AgentError("daemon.start_failed", `the daemon failed to start: ${(message.message ?? "").replace(/\.$/, "")} (see ${daemonLog})`));
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        // A refusal message sent just before exiting may arrive after the exit event.
        setTimeout(
          () =>
            reject(new AgentError("daemon.start_failed", `the daemon exited during start-up (${signal ?? `code ${code}`}); see ${daemonLog} and ${outPath}`)),
          100,
        );
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
 * new daemon can start at once. Closes `client`. Used by `agent daemon stop|restart` and `/restart`.
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

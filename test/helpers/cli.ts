import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MessageConnection } from "vscode-jsonrpc";
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from "vscode-jsonrpc/node";
import { procStat } from "../../shared/process.js";
import { PROTOCOL_VERSION } from "../../shared/version.js";
import { hostCall } from "./cli-host.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = join(ROOT, "dist", "cli", "main.js");
export const DAEMON = join(ROOT, "dist", "daemon", "main.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * SIGKILL every process (its whole group) whose environment names `home` as its AGENT_HOME, or
 * whose arguments name a path in it, other than this test process: the daemon, its relays,
 * workers and scripts of a temp home about to be removed. Reads /proc; elsewhere it does nothing.
 */
export function killHomeProcesses(home: string): void {
  const mark = `AGENT_HOME=${home}\0`;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return;
  }
  for (const name of pids) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: string;
    let cmdline: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "latin1");
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "latin1");
    } catch {
      continue;
    }
    // Its environment names the home, or its arguments a path in it (a log relay, which has
    // only PATH in its environment, is given its log file).
    if (!`${environ}\0`.includes(mark) && !cmdline.includes(`${home}/`)) continue;
    // The product's one /proc/<pid>/stat reader: field 2 is the process group.
    const pgid = Number(procStat(pid)?.[2] ?? 0);
    try {
      if (pgid > 1 && pgid !== process.pid && pgid !== Number(procStat(process.pid)?.[2] ?? 0)) process.kill(-pgid, "SIGKILL");
      else process.kill(pid, "SIGKILL");
    } catch {}
  }
}

/** A fresh AGENT_HOME in a short temp path (Unix socket paths are limited to 107 bytes). */
export function tempHome(prefix = "ah"): { home: string; cleanup: () => void } {
  const home = mkdtempSync(join(tmpdir(), `${prefix}-`));
  // Retries: a worker or daemon killed just before, or a log relay draining its pipe, may still
  // be writing its last file, which makes a recursive remove meet a directory that is not empty
  // yet (ENOTEMPTY). Node waits 50 ms longer before each retry: 20 of them wait up to 10.5 s
  // (10 waited 2.75 s, which a loaded fresh-clone run once outlasted).
  const cleanup = () => {
    // What still runs for this home goes first: a kanban worker outlives its daemon by design,
    // and one started just before the daemon stopped would go on writing its log here.
    killHomeProcesses(home);
    try {
      rmSync(home, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
    } catch (error) {
      // Say what is still being written there (and so by whom), not just ENOTEMPTY.
      const left = readdirSync(home, { recursive: true }).slice(0, 20).join(", ");
      throw new Error(`cannot remove the temp home ${home} (${(error as Error).message}); still in it: ${left}`);
    }
  };
  return { home, cleanup };
}

/**
 * A test's tasks run in their creating directory, not in a git worktree of the repository the
 * suite runs in (the default inside a repository): a test that wants worktrees sets this to "".
 */
export const TEST_WORKSPACE = { AGENT_DEFAULT_WORKSPACE: "dir" };

/**
 * Run the built CLI as a user would: its command line, with this environment, stdin and
 * arguments, in the CLI host (test/helpers/cli-host.ts: a worker thread that has loaded it
 * already), or as a process of its own with `process: true` (the terminal UI always) or
 * TEST_CLI=process.
 */
export function runCli(
  args: string[],
  options: { home: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; process?: boolean },
): Promise<CliResult> {
  const env = { ...process.env, AGENT_HOME: options.home, NO_COLOR: "1", AGENT_GATEWAY_PORT: "0", ...TEST_WORKSPACE, ...options.env };
  if (!options.process && process.env.TEST_CLI !== "process" && !args.includes("--tui"))
    return hostCall(ROOT, args, env, options.input, options.timeoutMs ?? 30_000);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`agent ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/** Stop the home's daemon if one runs (test cleanup; never throws). */
export async function stopDaemon(home: string): Promise<void> {
  await runCli(["daemon", "stop"], { home }).catch(() => undefined);
}

/** Start the home's daemon through the CLI (as a user would) and read its pid and gateway URL. */
export async function launchDaemon(home: string, env?: NodeJS.ProcessEnv): Promise<{ pid: number; url: string }> {
  const started = await runCli(["daemon", "start", "--json"], { home, env });
  if (started.code !== 0) throw new Error(`daemon start failed: ${started.stderr}${started.stdout}`);
  const status = await runCli(["daemon", "status", "--json"], { home, env });
  const info = JSON.parse(status.stdout) as { pid: number; gateway_url?: string };
  if (!info.gateway_url) throw new Error(`no gateway_url in ${status.stdout}`);
  return { pid: info.pid, url: info.gateway_url };
}

/** SIGKILL a process if it is still there (test cleanup; never throws). */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {}
}

/** A started daemon on a fresh home, with cleanup that stops it and removes the home. */
export async function startedHome(env?: NodeJS.ProcessEnv): Promise<{ home: string; pid: number; dispose: () => Promise<void> }> {
  const { home, cleanup } = tempHome();
  const r = await runCli(["daemon", "start", "--json"], { home, env });
  if (r.code !== 0) throw new Error(`daemon start failed: ${r.stderr}`);
  const { pid } = JSON.parse(r.stdout) as { pid: number };
  return {
    home,
    pid,
    dispose: async () => {
      await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
      killQuietly(pid);
      cleanup();
    },
  };
}

/** A daemon run as a child of the test (so its exit code and stderr are observable), started on `home`. */
export interface ChildDaemon {
  pid: number;
  child: ChildProcess;
  stderr: () => string;
  /** Resolves with the exit code/signal once the daemon has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still alive (test cleanup). */
  kill: () => void;
}

export async function spawnDaemon(home: string, env?: NodeJS.ProcessEnv, args: string[] = []): Promise<ChildDaemon> {
  const child = spawn(process.execPath, [DAEMON, ...args], {
    env: { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", ...TEST_WORKSPACE, ...env },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const message = await new Promise<{ type: string; pid?: number; message?: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start; stderr: ${stderr}`)), 15_000);
    child.once("message", (m: { type: string; pid?: number; message?: string }) => (clearTimeout(timer), resolve(m)));
    // A message sent before the exit arrives before the channel closes, so "disconnect" (not
    // "exit", which can overtake it) is the point where no ready or error message can come.
    child.once("disconnect", () => void exited.then(({ code }) => (clearTimeout(timer), resolve({ type: "exit", message: `exited ${code}: ${stderr}` }))));
  });
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch {}
  };
  if (message.type !== "ready") {
    kill();
    throw new Error(`daemon failed to start: ${message.message ?? stderr}`);
  }
  return { pid: child.pid!, child, stderr: () => stderr, exited, kill };
}

/** A raw JSON-RPC connection to the home's socket (vscode-jsonrpc), optionally initialized. */
export async function rpcConnect(home: string, options: { initialize?: boolean } = {}): Promise<{ rpc: MessageConnection; socket: Socket; close: () => void }> {
  const socket = netConnect(join(home, "daemon.sock"));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  rpc.listen();
  // A daemon that is shutting down may accept and drop a connection: fail its pending calls
  // instead of leaving them (and the test) waiting forever.
  socket.once("close", () => rpc.dispose());
  if (options.initialize !== false) await rpc.sendRequest("initialize", { protocolVersion: PROTOCOL_VERSION, clientVersion: "test" });
  return {
    rpc,
    socket,
    close: () => {
      rpc.dispose();
      socket.destroy();
    },
  };
}

export { waitFor } from "./wait.js";

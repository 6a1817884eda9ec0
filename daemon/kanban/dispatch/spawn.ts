/**
 * Starting a kanban worker: `agent chat --profile <assignee> -q "work kanban task <id>"` in a
 * process group of its own (detached: it outlives the daemon, and a timeout kills the whole
 * group), with its output going to the task's log file through the worker-output relay
 * (shared/log-relay.ts and daemon/log/relay-main.ts: redacted and rotated by the one log writer; a process of its own, not a
 * pipe through the daemon, so a daemon that dies does not take the worker's output or the worker
 * with it).
 *
 * The command runs under a tiny `/bin/sh` wrapper that writes the worker's exit status to the
 * run's exit file: after a daemon restart the worker is no longer the daemon's child, and that
 * file is how its exit code (0, 75, a crash) is still known.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { hasProc, isAlive, processEnviron } from "../../../shared/process.js";
import { startRelay } from "../../../shared/log-relay.js";
import { type ProcessGroup, spawnGroup } from "../../process/process-group.js";

/** The CLI entry of this build (dist/cli/main.js). */
export const CLI_ENTRY = fileURLToPath(new URL("../../../cli/main.js", import.meta.url));

const WRAPPER =
  'printf "%s\\n" "$$" > "$AGENT_KANBAN_PID_FILE"; "$@"; code=$?; printf "%s\\n" "$code" > "$AGENT_KANBAN_EXIT_FILE.tmp" && mv "$AGENT_KANBAN_EXIT_FILE.tmp" "$AGENT_KANBAN_EXIT_FILE"; exit $code';

/** Directories a worker's tools expect on PATH even when the daemon was started with a bare one (systemd, cron). */
const STANDARD_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/** The daemon's PATH, then node's own directory, ~/.local/bin and the standard directories; no duplicates. */
export function fullPath(current = process.env.PATH ?? ""): string {
  const dirs = [...current.split(delimiter), dirname(process.execPath), join(homedir(), ".local", "bin"), ...STANDARD_PATH];
  return [...new Set(dirs.filter(Boolean))].join(delimiter);
}

export interface WorkerSpec {
  home: string;
  board: string;
  taskId: string;
  runId: string;
  profile: string;
  cwd: string;
  logPath: string;
  /** The task log's rotation limits (`logs.max_bytes`, `logs.keep`) and the secrets redacted from it. */
  log: { maxBytes: number; keep: number; secrets: string[] };
  exitFile: string;
  /** Where the wrapper writes its pid first thing (a daemon that dies before recording the run finds the worker by it). */
  pidFile: string;
  /** The daemon's environment (with .env filling its gaps). */
  env: NodeJS.ProcessEnv;
}

export interface SpawnedWorker {
  pid: number;
  /** Its process group, not in the command journal: a worker outlives the daemon (the next start adopts it). */
  group: ProcessGroup;
  /** Resolves with the exit code (128 + n for a signal) once the group leader exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function workerArgs(spec: Pick<WorkerSpec, "taskId" | "profile">): string[] {
  return [CLI_ENTRY, "chat", "--profile", spec.profile, "-q", `work kanban task ${spec.taskId}`];
}

/** Spawn the worker; throws (spawn failure) when the process cannot be started. */
export async function spawnWorker(spec: WorkerSpec): Promise<SpawnedWorker> {
  mkdirSync(spec.cwd, { recursive: true });
  mkdirSync(dirname(spec.exitFile), { recursive: true });
  rmSync(spec.exitFile, { force: true });
  rmSync(spec.pidFile, { force: true });
  const relay = await startRelay({ path: spec.logPath, ...spec.log });
  try {
    const env: NodeJS.ProcessEnv = {
      ...spec.env,
      AGENT_HOME: spec.home,
      AGENT_PROFILE: spec.profile,
      AGENT_KANBAN_TASK: spec.taskId,
      AGENT_KANBAN_BOARD: spec.board,
      AGENT_KANBAN_RUN_ID: spec.runId,
      AGENT_KANBAN_EXIT_FILE: spec.exitFile,
      AGENT_KANBAN_PID_FILE: spec.pidFile,
      PATH: fullPath(spec.env.PATH),
      NO_COLOR: "1",
    };
    const { child, group } = spawnGroup("/bin/sh", ["-c", WRAPPER, "sh", process.execPath, ...workerArgs(spec)], {
      cwd: spec.cwd,
      env,
      stdio: ["ignore", relay.input, relay.input],
      label: `kanban worker ${spec.taskId} (${spec.runId})`,
      record: false,
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on("exit", (code, signal) => resolve({ code, signal }));
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    child.unref();
    return { pid: child.pid!, group: group!, exited };
  } finally {
    // The worker holds its own copy of the pipe now (or failed to start: the relay sees the end and exits).
    relay.release();
  }
}

/** The exit status the wrapper recorded, or null when it wrote none (the wrapper itself was killed). */
export function readExitFile(file: string): number | null {
  try {
    const n = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(n) ? n : null;
  } catch {
    return null;
  }
}

/** The pid a wrapper recorded, or null. */
export function readPidFile(file: string): number | null {
  const n = readExitFile(file);
  return n !== null && n > 0 ? n : null;
}

/**
 * Whether `pid` is still the worker of run `runId`: alive, not a zombie, and (where /proc can
 * tell) started with that run's AGENT_KANBAN_RUN_ID, so a pid reused by another process is not
 * taken for the worker.
 */
export function isRunWorker(pid: number, runId: string): boolean {
  if (!isAlive(pid)) return false;
  if (!hasProc()) return true;
  const environ = processEnviron(pid);
  return environ === null ? isAlive(pid) : environ.includes(`AGENT_KANBAN_RUN_ID=${runId}`);
}

/**
 * Starts the worker-output relay (daemon/log/relay-main.ts, run by its path): a kanban worker's
 * stdout and stderr go through it to the task's log, and the daemon's own stdout and stderr to
 * `logs/daemon-stderr.log` (shared/client/daemon-process.ts), so they are written by the one log
 * writer (daemon/log/log-file.ts): redacted (a secret a worker prints never reaches its task log)
 * and rotated by size. It is here, not in daemon/, because the CLI starts one for the daemon it
 * starts, and the CLI holds no daemon code: it runs the relay's entry by its path.
 *
 * It is a small process of its own, not a pipe into the daemon: a worker outlives a daemon that
 * dies (kill -9, upgrade), and so must the path of its output. It runs in a process group of its
 * own (a timeout that kills the worker's group does not cut the relay off before it has written
 * what the worker wrote last), ignores SIGTERM/SIGINT/SIGHUP, and exits when the worker and
 * everything it started have closed the pipe.
 *
 * The secrets reach it on an inherited pipe (fd 3), not in its environment or arguments (both
 * readable in /proc by anyone who can list the process): those the daemon's redactor knew when
 * the run started.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Writable } from "node:stream";

/**
 * The relay's entry, beside this file in dist/. A function, not a module-level constant: a module
 * without top-level work is left out of the build's chunks wherever it is not used (the client's
 * barrel re-exports the daemon starter, which imports this; a call to a running daemon needs neither).
 */
function relayEntry(): string {
  return fileURLToPath(new URL("../daemon/log/relay-main.js", import.meta.url));
}

export interface RelaySpec {
  /** The log file. */
  path: string;
  maxBytes: number;
  keep: number;
  /** The secret values to redact (Redactor.values()). */
  secrets: string[];
}

export interface StartedRelay {
  pid: number;
  /** The pipe's write end: give it to the worker as its stdout and stderr, then `release()`. */
  input: Writable;
  /** Close the daemon's copy of the write end (after the worker has its own). */
  release(): void;
}

export async function startRelay(spec: RelaySpec): Promise<StartedRelay> {
  const child = spawn(process.execPath, [relayEntry(), spec.path, String(spec.maxBytes), String(spec.keep)], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH ?? "" },
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  child.unref();
  const secrets = child.stdio[3] as Writable;
  secrets.end(JSON.stringify(spec.secrets));
  const input = child.stdin!;
  // A relay that dies makes the worker's writes fail (EPIPE); the daemon's copy must not throw.
  input.on("error", () => undefined);
  secrets.on("error", () => undefined);
  return {
    pid: child.pid!,
    input,
    release: () => {
      input.destroy();
      (child.stdio[3] as Writable).destroy();
    },
  };
}

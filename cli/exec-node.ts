import { spawn } from "node:child_process";
import { constants as osConstants } from "node:os";

/**
 * Run `node <entry> <args>` in the foreground, as an exec would: same stdio, SIGINT/SIGTERM/SIGHUP
 * passed on, its exit status (128 + the signal number when a signal ended it). `agent chat -q` for
 * a kanban task runs the worker entry this way.
 */
export function execNode(entry: string, args: string[]): Promise<number> {
  const child = spawn(process.execPath, [entry, ...args], { stdio: "inherit" });
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const s of signals) process.on(s, forward);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      for (const s of signals) process.off(s, forward);
      resolve(code ?? 128 + (signal ? osConstants.signals[signal] : 0));
    });
  });
}

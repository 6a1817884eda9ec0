import { type ChildProcess, spawn } from "node:child_process";

/** A started server process, and how to stop it (its whole process group). */
export interface SpawnedServer {
  child: ChildProcess;
  /** SIGTERM to the group, SIGKILL after the grace period; resolves once it exited. */
  kill(): Promise<void>;
}

export type SpawnProcess = (command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }) => SpawnedServer;

const GRACE_MS = 2_000;

// seam: replaced by the one process module
/** Start an MCP server in its own process group (stdin/stdout for the protocol, stderr piped). */
export const spawnServer: SpawnProcess = (command, args, options) => {
  const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"], detached: true, shell: false });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  const signal = (sig: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      try {
        child.kill(sig);
      } catch {
        // already gone
      }
    }
  };
  return {
    child,
    async kill() {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
        signal("SIGKILL"); // whatever it left in its group
        return;
      }
      signal("SIGTERM");
      const timer = setTimeout(() => signal("SIGKILL"), GRACE_MS);
      await exited;
      clearTimeout(timer);
      signal("SIGKILL");
    },
  };
};

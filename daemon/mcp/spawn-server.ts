import type { ChildProcess } from "node:child_process";
import { spawnGroup } from "../process/process-group.js";

/** A started server process, and how to stop it (its whole process group). */
export interface SpawnedServer {
  child: ChildProcess;
  /** SIGTERM to the group, SIGKILL after the one grace period; resolves once the leader exited. */
  kill(): Promise<void>;
}

export type SpawnProcess = (command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string; name?: string }) => SpawnedServer;

/**
 * Start an MCP server through the one process module (daemon/process/process-group.ts): the
 * leader of its own process group, recorded in the command journal, so a daemon killed with -9
 * leaves a record and its next start stops the server (and what it started). stdin/stdout carry
 * the protocol; stderr is piped for the "failed to start" tail.
 */
export const spawnServer: SpawnProcess = (command, args, options) => {
  const { child, group } = spawnGroup(command, args, {
    env: options.env,
    cwd: options.cwd,
    stdio: ["pipe", "pipe", "pipe"],
    label: `mcp ${options.name ?? command}: ${[command, ...args].join(" ")}`,
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  // The leader is over: what it left in its group goes with it, and so does its record.
  void exited.then(() => group?.forget({ killLeftovers: true }));
  return {
    child,
    async kill() {
      if (!group) return;
      if (child.exitCode === null && child.signalCode === null) {
        group.stop();
        await exited;
      }
      group.forget({ killLeftovers: true });
    },
  };
};

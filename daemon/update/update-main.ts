/**
 * The update process: `agent update` runs this file by its path with an IPC channel. Updating
 * must work while no daemon runs (and it restarts the daemon), and the CLI holds no logic, so
 * the work is here (daemon/update/updater.ts), reporting its steps to the CLI as it goes.
 */
import { toAgentError } from "../../shared/errors.js";
import type { UpdateReport, UpdateRequest } from "../../shared/update.js";
import { defaultDeps, startDaemonAfterInterrupt, stopCurrentStep, update } from "./updater.js";

function report(message: UpdateReport): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send(message, undefined, undefined, () => resolve());
  });
}

async function main(): Promise<number> {
  const request = JSON.parse(process.argv[2] ?? "{}") as UpdateRequest;
  const stop = () => {
    // The running step's group (npm ci, a build) is detached: stop it, start again the daemon
    // the update stopped (if it did), then leave.
    stopCurrentStep();
    void startDaemonAfterInterrupt().finally(() => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // The terminal closed: the same (a default SIGHUP would leave the daemon stopped and the step running).
  process.once("SIGHUP", stop);
  try {
    const result = await update(
      request,
      defaultDeps({
        step: (step, detail) => void report({ type: "step", step, detail }),
        stepDone: (step, ms) => void report({ type: "step_done", step, ms: Math.round(ms) }),
      }),
    );
    await report({ type: "done", result });
    return 0;
  } catch (error) {
    const e = toAgentError(error);
    await report({ type: "error", error: { ...e.toJSON(), ...(e.expected ? {} : { stack: e.stack }) } });
    return 1;
  }
}

process.exitCode = await main();
if (process.connected) process.disconnect();

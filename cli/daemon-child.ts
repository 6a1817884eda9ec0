import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { AgentError } from "../shared/errors.js";

/** The messages every daemon-side work process ends with (`agent import`, `agent update`). */
type Ending<R> = { type: "done"; result: R } | { type: "error"; error: { code: string; message: string; metadata?: Record<string, unknown>; stack?: string } };

export interface DaemonChildOptions<M> {
  /** Every other message of the process (progress, a question), with the process to answer it. */
  onMessage?(message: M, child: ChildProcess, end: (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }) => void): void;
  /** The error when the process is gone before it said how it ended. */
  lost(how: string): AgentError;
  /** Runs once the process is gone (stop a progress ticker). */
  onClose?(): void;
}

/**
 * Runs daemon code that must work with no daemon running (an import, an update) in a process of
 * its own, started by its path under dist/ (the CLI holds no daemon code), with `request` as its
 * argument; resolves with what its `done` message carries, or rejects with its `error`.
 */
export function runDaemonChild<R, M extends { type: string }>(entryFromDist: string, request: unknown, options: DaemonChildOptions<M>): Promise<R> {
  const entry = fileURLToPath(new URL(`../${entryFromDist}`, import.meta.url));
  const child = fork(entry, [JSON.stringify(request)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    // What the process ends with, known once it is gone (or from its last message).
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown } | null = null;
    const end = (o: typeof outcome) => {
      outcome = o;
    };
    child.on("message", (m: M | Ending<R>) => {
      if (m.type === "done") outcome = { ok: true, value: (m as Ending<R> & { type: "done" }).result };
      else if (m.type === "error") {
        const { error } = m as Ending<R> & { type: "error" };
        const e = AgentError.received(error.code, error.message, error.metadata, { expected: !error.stack });
        if (error.stack) e.stack = error.stack;
        outcome = { ok: false, error: e };
      } else options.onMessage?.(m as M, child, end);
    });
    child.on("error", (error) => {
      outcome ??= { ok: false, error };
    });
    // "close": after the IPC channel is drained, so a last message is never lost to an early exit.
    child.on("close", (code, signal) => {
      options.onClose?.();
      const o = outcome ?? { ok: false, error: options.lost(signal ?? `exit ${code}`) };
      if (o.ok) resolve(o.value as R);
      else reject(o.error);
    });
  });
}

/** A call's time limit and cancellation: the promise, or the first of a timeout and an abort. */
import { AgentError } from "../../../shared/errors.js";

export function withTimeout<T>(p: Promise<T>, ms: number, name: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout;
  let onAbort: (() => void) | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AgentError("action.timed_out", `${name} did not finish within ${ms} ms`, { timeoutMs: ms })), ms);
    if (signal) {
      onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new AgentError("action.cancelled", "the call was cancelled"));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  return Promise.race([p, guard]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal!.removeEventListener("abort", onAbort);
  });
}

/** A call's time limit and cancellation: the promise, or the first of a timeout and an abort. */
import { AgentError } from "../../../shared/errors.js";

/** RivetKit 2.2.1's own message for `action.timed_out`, so a client matching on it keeps working. */
const TIMED_OUT = "Action timed out. This can be increased with: `actor({ options: { actionTimeout: ... } })`";

export function withTimeout<T>(p: Promise<T>, ms: number, name: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout;
  let onAbort: (() => void) | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AgentError("action.timed_out", TIMED_OUT, { action: name, timeoutMs: ms })), ms);
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

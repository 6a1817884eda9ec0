import { AgentError } from "../../shared/errors.js";

/** Rejects when `p` has not settled after `ms` (a start never hangs the daemon's stop). */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AgentError("messaging.platform_error", `${what} within ${Math.round(ms / 1000)} s`)), ms);
    timer.unref();
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/**
 * Supervision of crashed actors: the crash policy, the crash-loop breaker (at most `maxCrashes`
 * crashes in `windowMs`, then the actor stays asleep with its error) and the exponential backoff
 * of restarts. `afterCrash` is the decision as a pure function; `CrashSupervisor` keeps the
 * crash times and the restart timers.
 */
import type { CrashPolicy } from "../types.js";

export interface CrashLimits {
  maxCrashes: number;
  windowMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export const CRASH_DEFAULTS: Readonly<CrashLimits> = Object.freeze({ maxCrashes: 5, windowMs: 60_000, backoffBaseMs: 100, backoffMaxMs: 5_000 });

/** What becomes of an actor after its `crashes`-th crash in the window. */
export type AfterCrash = { then: "destroy" } | { then: "sleep" } | { then: "restart"; delayMs: number };

export function afterCrash(policy: CrashPolicy, crashes: number, limits: CrashLimits): AfterCrash {
  if (policy === "destroy") return { then: "destroy" };
  if (policy === "sleep" || crashes >= limits.maxCrashes) return { then: "sleep" };
  return { then: "restart", delayMs: Math.min(limits.backoffMaxMs, limits.backoffBaseMs * 2 ** (crashes - 1)) };
}

export class CrashSupervisor {
  private readonly crashTimes = new Map<string, number[]>();
  private readonly restartTimers = new Map<string, NodeJS.Timeout>();

  constructor(readonly limits: CrashLimits) {}

  /** Count a crash at `now`: how many crashes of this actor fall in the window, this one included. */
  recordCrash(actorId: string, now: number): number {
    const times = (this.crashTimes.get(actorId) ?? []).filter((t) => now - t < this.limits.windowMs);
    times.push(now);
    this.crashTimes.set(actorId, times);
    return times.length;
  }

  /** Call `restart` after `delayMs` (the timer does not keep the process alive). */
  scheduleRestart(actorId: string, delayMs: number, restart: () => void): void {
    const timer = setTimeout(() => {
      this.restartTimers.delete(actorId);
      restart();
    }, delayMs);
    timer.unref();
    this.restartTimers.set(actorId, timer);
  }

  cancelRestart(actorId: string): void {
    const timer = this.restartTimers.get(actorId);
    if (timer) clearTimeout(timer);
    this.restartTimers.delete(actorId);
  }

  /** The actor is gone: forget its crashes. */
  forget(actorId: string): void {
    this.crashTimes.delete(actorId);
  }

  /** The runtime stops: no restart will happen. */
  cancelAllRestarts(): void {
    for (const t of this.restartTimers.values()) clearTimeout(t);
    this.restartTimers.clear();
  }
}

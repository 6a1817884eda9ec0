/**
 * One timer per actor for its next alarm (the earliest scheduled call or workflow wake-up).
 * A timer fires `onDue` once its time has come; times beyond the longest setTimeout re-arm.
 */
import { type Clock, type ClockTimer, systemClock } from "../../../shared/clock.js";

export class AlarmTimers {
  private readonly timers = new Map<string, { at: number; timer: ClockTimer }>();

  constructor(
    private readonly onDue: (actorId: string) => void,
    private readonly isStopped: () => boolean,
    private readonly clock: Clock = systemClock,
  ) {}

  has(actorId: string): boolean {
    return this.timers.has(actorId);
  }

  arm(actorId: string, at: number): void {
    const cur = this.timers.get(actorId);
    if (cur) {
      if (cur.at === at) return;
      this.clock.clearTimeout(cur.timer);
    }
    const wait = Math.min(Math.max(0, at - this.clock.now()), 2 ** 31 - 1);
    const timer = this.clock.setTimeout(() => this.fire(actorId, at), wait);
    timer.unref();
    this.timers.set(actorId, { at, timer });
  }

  disarm(actorId: string): void {
    const cur = this.timers.get(actorId);
    if (cur) this.clock.clearTimeout(cur.timer);
    this.timers.delete(actorId);
  }

  /** Stop every timer (they stay listed until `clear`). */
  stopAll(): void {
    for (const { timer } of this.timers.values()) this.clock.clearTimeout(timer);
  }

  clear(): void {
    this.stopAll();
    this.timers.clear();
  }

  private fire(actorId: string, at: number): void {
    const cur = this.timers.get(actorId);
    if (cur && cur.at === at) this.timers.delete(actorId);
    if (this.isStopped()) return;
    if (at > this.clock.now()) {
      this.arm(actorId, at);
      return;
    }
    this.onDue(actorId);
  }
}

/**
 * One timer per actor for its next alarm (the earliest scheduled call or workflow wake-up).
 * A timer fires `onDue` once its time has come; times beyond the longest setTimeout re-arm.
 */
export class AlarmTimers {
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();

  constructor(
    private readonly onDue: (actorId: string) => void,
    private readonly isStopped: () => boolean,
  ) {}

  has(actorId: string): boolean {
    return this.timers.has(actorId);
  }

  arm(actorId: string, at: number): void {
    const cur = this.timers.get(actorId);
    if (cur) {
      if (cur.at === at) return;
      clearTimeout(cur.timer);
    }
    const wait = Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1);
    const timer = setTimeout(() => this.fire(actorId, at), wait);
    timer.unref();
    this.timers.set(actorId, { at, timer });
  }

  disarm(actorId: string): void {
    const cur = this.timers.get(actorId);
    if (cur) clearTimeout(cur.timer);
    this.timers.delete(actorId);
  }

  /** Stop every timer (they stay listed until `clear`). */
  stopAll(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
  }

  clear(): void {
    this.stopAll();
    this.timers.clear();
  }

  private fire(actorId: string, at: number): void {
    const cur = this.timers.get(actorId);
    if (cur && cur.at === at) this.timers.delete(actorId);
    if (this.isStopped()) return;
    if (at > Date.now()) {
      this.arm(actorId, at);
      return;
    }
    this.onDue(actorId);
  }
}

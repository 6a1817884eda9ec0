/**
 * The one clock interface: what reads the time or waits for it takes a Clock, so a test can move
 * time instead of sleeping. `systemClock` is the real one; `ManualClock` is the fake a test moves
 * by hand; `scaledClock` runs faster than the wall clock (and/or ahead of it), for a test that
 * drives a real daemon's schedules (test-only env knobs, docs/cron.md).
 */

/** A pending timer of a clock; give it back to the same clock's clearTimeout. */
export interface ClockTimer {
  /** Do not keep the process alive for it (a no-op on a fake clock). */
  unref(): unknown;
}

export interface Clock {
  /** Milliseconds since the epoch, as this clock sees it. */
  now(): number;
  /** Call `fn` once `ms` of this clock's time has passed. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer | null | undefined): void;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (fn: () => void, ms: number): ClockTimer => setTimeout(fn, ms),
  clearTimeout: (timer: ClockTimer | null | undefined) => {
    if (timer) clearTimeout(timer as NodeJS.Timeout);
  },
});

/** setTimeout's largest delay; a longer wait is made of several. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A clock `offsetMs` ahead of `base` that runs `rate` times as fast from the moment it is made:
 * its timers fire after `ms / rate` of the base clock's time. `rate` 1 and offset 0 is `base`.
 */
export function scaledClock(options: { offsetMs?: number; rate?: number }, base: Clock = systemClock): Clock {
  const offset = options.offsetMs ?? 0;
  const rate = options.rate ?? 1;
  if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`a clock rate must be a positive number, not ${rate}`);
  if (!Number.isFinite(offset)) throw new RangeError(`a clock offset must be a number of milliseconds, not ${offset}`);
  if (rate === 1 && offset === 0) return base;
  const origin = base.now();
  return {
    now: () => origin + offset + (base.now() - origin) * rate,
    setTimeout: (fn, ms) => base.setTimeout(fn, Math.min(MAX_TIMER_MS, Math.max(0, ms) / rate)),
    clearTimeout: (timer) => base.clearTimeout(timer),
  };
}

interface ManualTimer extends ClockTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A clock that moves only when told (tests): advance() runs the timers that came due, in order. */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers = new Set<ManualTimer>();

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer: ManualTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, unref: () => timer };
    this.#timers.add(timer);
    return timer;
  }

  clearTimeout(timer: ClockTimer | null | undefined): void {
    if (timer) this.#timers.delete(timer as ManualTimer);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Move the time on by `ms`, firing each timer due by then at its own time, earliest first. */
  advance(ms: number): void {
    const until = this.#now + Math.max(0, ms);
    for (;;) {
      let next: ManualTimer | null = null;
      for (const t of this.#timers) if (t.at <= until && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = until;
  }
}

/**
 * The cap on idle awake actors (issue 31, the daemon's peak memory). An awake actor costs about
 * 28 KB of RSS across the daemon and its runner thread; a burst of creations at 2,400/s with a
 * 1.5 s sleep timeout keeps 3,600 of them awake, doing nothing, for a peak 80 MB above what the
 * same home needs. Past the cap, the actors awake longest that are idle (no call, no workflow
 * step, no connection, not `noSleep`) for at least MIN_IDLE_MS sleep without waiting out their
 * timeout, as a cache evicts its coldest entries; a later call wakes them as it would anyway.
 * Below the cap nothing changes: each actor sleeps after its own timeout.
 */
import type { ActorInstance } from "../instance/instance.js";

/** Idle at least this long before an actor over the cap sleeps early (a hot actor is never evicted between two calls). */
export const MIN_IDLE_MS = 250;
/** How often the cap is checked while it is exceeded. */
const CHECK_MS = 50;

export class IdleAwakeCap {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    /** Awake instances, oldest wake first (the runtime's `live`). */
    private readonly live: ReadonlyMap<string, ActorInstance>,
    /** Idle actors allowed awake; 0 turns the cap off. */
    readonly max: number,
    /** Sleeps asked for and not yet started (the runtime's queue): counted as gone already. */
    private readonly queued: ReadonlySet<string>,
    private readonly requestSleep: (actorId: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** After a wake: check soon if the cap is exceeded (one timer, however many wakes). */
  woke(): void {
    if (this.max > 0 && this.live.size > this.max && !this.timer) this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms = CHECK_MS): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      const { asked, idleSoon } = this.check();
      // More idle actors than the cap once the young ones are idle long enough: look again then.
      // Busy and connected ones do not keep the timer going (thousands of connected actors cost
      // no scans while they stay connected).
      if (asked > 0) this.schedule(CHECK_MS);
      else if (idleSoon > this.max) this.schedule(MIN_IDLE_MS);
    }, ms);
    this.timer.unref();
  }

  /** Ask the oldest idle actors over the cap to sleep; how many were asked. */
  trim(): number {
    return this.check().asked;
  }

  /** `asked`: the sleeps asked for; `idleSoon`: the actors idle now or soon (no call, step or connection). */
  private check(): { asked: number; idleSoon: number } {
    if (this.max <= 0 || this.live.size - this.queued.size <= this.max) return { asked: 0, idleSoon: 0 };
    const now = this.now();
    // Only idle actors count against the cap: connected or busy ones are awake for a reason.
    const idle: ActorInstance[] = [];
    let young = 0;
    for (const inst of this.live.values()) {
      if (this.queued.has(inst.id) || !quiet(inst)) continue;
      if (inst.lastActivity <= now - MIN_IDLE_MS) idle.push(inst);
      else young++;
    }
    const excess = idle.length - this.max;
    for (let i = 0; i < excess; i++) this.requestSleep(idle[i]!.id);
    return { asked: Math.max(0, excess), idleSoon: Math.min(idle.length, this.max) + young };
  }
}

/** No call, no workflow step, no connection, awake, and allowed to sleep. */
function quiet(inst: ActorInstance): boolean {
  return inst.status === "awake" && !inst.def.options?.noSleep && inst.inFlight === 0 && inst.activeSteps === 0 && inst.openConnections === 0;
}

/**
 * Whether an awake actor may sleep early: idle (no call, no workflow step, no connection) for at
 * least MIN_IDLE_MS, and not `noSleep`. Checked again when its sleep starts: a call may have
 * come in between.
 */
export function idleEnough(inst: ActorInstance, now: number): boolean {
  return quiet(inst) && inst.lastActivity <= now - MIN_IDLE_MS;
}

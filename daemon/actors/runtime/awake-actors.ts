/**
 * The awake instances and the transitions in progress, one at a time per actor:
 * asleep → starting → awake → stopping → asleep. A wake joins a start in progress and waits out
 * a stop in progress; what starting and stopping do is the runtime's (runtime.ts).
 */
import type { ActorInstance } from "../instance/instance.js";

export class AwakeActors {
  /** Started instances (the hot path reads it directly; an instance may be stopping: check `status`). */
  readonly live = new Map<string, ActorInstance>();
  private readonly starting = new Map<string, Promise<ActorInstance>>();
  private readonly stopping = new Map<string, Promise<void>>();

  /**
   * The awake instance: the one there is, the one a start in progress brings (after a stop in
   * progress), else the one `start` brings. `start` is called synchronously after the checks, so
   * concurrent wakes share one start.
   */
  async wake(actorId: string, start: () => Promise<ActorInstance>): Promise<ActorInstance> {
    for (;;) {
      const inst = this.live.get(actorId);
      if (inst && inst.status === "awake") return inst;
      const starting = this.starting.get(actorId);
      if (starting) return starting;
      const stopping = this.stopping.get(actorId);
      if (stopping) {
        await stopping;
        continue;
      }
      break;
    }
    const p = start();
    this.starting.set(actorId, p);
    try {
      return await p;
    } finally {
      this.starting.delete(actorId);
    }
  }

  /** The stop in progress of an actor, if any. */
  stopInProgress(actorId: string): Promise<void> | undefined {
    return this.stopping.get(actorId);
  }

  /** Record `stop` as the actor's stop in progress (wakes wait for it) until it settles; settles as it does. */
  trackStop(actorId: string, stop: Promise<void>): Promise<void> {
    this.stopping.set(actorId, stop);
    return stop.finally(() => this.stopping.delete(actorId));
  }

  startsInProgress(): Promise<ActorInstance>[] {
    return [...this.starting.values()];
  }

  stopsInProgress(): Promise<void>[] {
    return [...this.stopping.values()];
  }
}

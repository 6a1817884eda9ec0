/**
 * An actor's scheduled calls (`c.schedule.after/at`): kept in the actor file (`schedule` of
 * actor-file.ts) until they ran, run when due (at least once: a call is removed after it ran),
 * one pass at a time.
 */
import { AgentError } from "../../../shared/errors.js";
import { decodeValue, encodeValue } from "../codec.js";
import { errorSummary } from "../errors.js";
import type { ScheduledCall } from "../storage/actor-file.js";

type ScheduleData = { nextId: number; calls: ScheduledCall[] };

/** What the schedule needs from its actor. */
export interface ScheduleOwner {
  readonly id: string;
  readonly data: ScheduleData;
  hasAction(name: string): boolean;
  isAwake(): boolean;
  /** The runtime's clock: a call is due when its time has come on it. */
  now(): number;
  /** Write the actor file; resolves once on disk. */
  write(): Promise<void>;
  /** Run a due call as an action of the actor. */
  invoke(action: string, args: unknown[]): Promise<unknown>;
  /** A due call failed (logged to the actor's log; the call is still removed). */
  failed(action: string, error: { message: string; code?: string }): void;
  /** The earliest scheduled call changed: the actor's alarm follows it. */
  changed(): void;
}

export class ScheduledCalls {
  private dueRun: Promise<void> | null = null;
  private dueAgain = false;

  constructor(private readonly owner: ScheduleOwner) {}

  /** Schedule `action(...args)` at `at` (epoch ms); resolves once on disk. */
  async at(at: number, action: string, args: unknown[]): Promise<void> {
    if (!Number.isFinite(at)) throw new AgentError("api.bad_request", "schedule time must be a finite number of ms");
    if (typeof action !== "string" || !this.owner.hasAction(action)) {
      throw new AgentError("action.not_found", `cannot schedule unknown action ${String(action)}`);
    }
    const s = this.owner.data;
    const call = { id: s.nextId++, at, action, args: encodeValue(args) };
    s.calls.push(call);
    try {
      await this.owner.write();
    } catch (error) {
      // Not on disk, so not scheduled: no later write may carry it.
      const i = this.owner.data.calls.indexOf(call);
      if (i >= 0) this.owner.data.calls.splice(i, 1);
      throw error;
    }
    this.owner.changed();
  }

  /** The time of the earliest call, or null. */
  earliest(): number | null {
    let at: number | null = null;
    for (const call of this.owner.data.calls) if (at === null || call.at < at) at = call.at;
    return at;
  }

  /** Run the calls that are due. A pass asked for while one runs runs again after it. */
  runDue(): Promise<void> {
    if (this.dueRun) {
      this.dueAgain = true;
      return this.dueRun;
    }
    this.dueRun = (async () => {
      do {
        this.dueAgain = false;
        await this.runDueOnce();
      } while (this.dueAgain && this.owner.isAwake());
    })().finally(() => (this.dueRun = null));
    return this.dueRun;
  }

  private async runDueOnce(): Promise<void> {
    const now = this.owner.now();
    const due = this.owner.data.calls.filter((call) => call.at <= now).sort((a, b) => a.at - b.at || a.id - b.id);
    for (const call of due) {
      if (!this.owner.isAwake()) return;
      try {
        await this.owner.invoke(call.action, (decodeValue(call.args) as unknown[]) ?? []);
      } catch (error) {
        this.owner.failed(call.action, errorSummary(error));
      }
      const calls = this.owner.data.calls;
      const i = calls.indexOf(call);
      if (i >= 0) calls.splice(i, 1);
      await this.owner.write();
    }
    this.owner.changed();
  }
}

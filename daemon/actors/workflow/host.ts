import type { ActorContext, QueueMessage, WorkflowContext } from "../types.js";
import type { EntryMetadata, WorkflowEntry, WorkflowHistory } from "./history.js";

/**
 * What the workflow engine needs from the actor it runs in (kept small so the engine never
 * reaches into an instance, the way InstanceHost keeps an instance from reaching into the
 * runtime). An awake actor implements it (instance/instance.ts).
 */
export interface WorkflowHost {
  /** The actor's context: a workflow context is derived from it. */
  readonly context: ActorContext;
  /** The workflow function, if the definition has one. */
  readonly workflow: ((w: WorkflowContext) => Promise<unknown>) | undefined;
  /** The actor's history (created empty on first use). */
  history(): WorkflowHistory;
  /** A step began / ended: running steps count as activity for idle sleep. */
  stepStarted(): void;
  stepEnded(): void;
  /** Run `fn` as a span of the actor's traces. */
  span<T>(kind: string, name: string, fn: () => T | Promise<T>, attrs?: Record<string, string | number | boolean>): Promise<T>;
  /** Record a span that already happened. */
  trace(kind: string, name: string, start: number, end: number, attrs?: Record<string, string | number | boolean>): void;
  /** Make a finished (or failed) step durable; resolves once it survives a kill -9. */
  recordStep(entry: WorkflowEntry, meta: EntryMetadata): Promise<void>;
  /** Write the whole actor (state, queue, history); resolves once on disk. */
  persist(): Promise<void>;
  /** The workflow's durable sleep ends at `at` (null: not sleeping), for the actor's alarm. */
  setWakeAt(at: number | null): void;
  /** The next queue message (undefined when the signal aborts or the timeout passes). */
  nextMessage(options: { name?: string | string[]; names?: readonly string[]; signal?: AbortSignal; timeout?: number }): Promise<QueueMessage | undefined>;
  /** Remove a message the history now records (written with the next persist). */
  takeMessage(id: number): void;
  /** Answer the sender of a recorded message. */
  completeMessage(id: number, reply: unknown): Promise<void>;
}

import type { BoardEvent } from "../../shared/protocol/kanban.js";
import type { MethodName, Params, Result } from "../../shared/protocol/index.js";

/** The `kanban.*` methods of the RPC table. */
export type KanbanMethod = Extract<MethodName, `kanban.${string}`>;

/**
 * What the kanban feature offers other features through the service registry
 * (`services.get("kanban")`). The agent's kanban tools call the board through it, in process:
 * `call` runs the same handler as the socket method of that name, with its params checked by
 * the same schema, so a chat session and a worker (which reaches the daemon over the socket)
 * get the same answers and the same refusals.
 */
export interface KanbanApi {
  call<M extends KanbanMethod>(method: M, params: Params<M>): Promise<Result<M>>;
  /** Every board event (a task completed, blocked, gave up, ...) as it happens; returns the unsubscribe. */
  onEvent(listener: (event: BoardEvent) => void): () => void;
}

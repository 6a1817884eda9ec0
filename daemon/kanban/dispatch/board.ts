/**
 * What the dispatcher needs of the board (KanbanService, daemon/kanban/service.ts): the ready
 * and running tasks, the atomic claim, and the run's bookkeeping. Kept narrow so the dispatcher
 * depends on the semantics, not the service's internals.
 */
import type { KanbanService } from "../service.js";

export type DispatchBoard = Pick<KanbanService, "readyTasks" | "runningTasks" | "claim" | "attachRun" | "endRun" | "onEvent">;

export type RunOutcome = "spawn_failed" | "crashed" | "timed_out" | "exited_clean" | "requeue";

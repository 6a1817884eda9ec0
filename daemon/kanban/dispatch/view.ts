/**
 * The board as the dispatcher and the decomposer use it: a thin view over KanbanService that
 * carries each task's board along (every board's tasks are dispatched) and fills in what a
 * worker needs (its workspace).
 */
import { join } from "node:path";
import type { BoardEvent, RunOutcome, Task } from "../../../shared/protocol/kanban.js";
import type { DaemonContext } from "../../context.js";
import type { DecompositionPlan as BoardPlan, DecompositionResult, KanbanService } from "../kanban-service.js";
import type { DecompositionPlan } from "../decompose/parse.js";
import type { RosterEntry } from "../decompose/prompt.js";

export interface DispatchTask {
  id: string;
  board: string;
  assignee: string;
  /** Seconds, or null for no limit. */
  max_runtime: number | null;
  workspace: string;
}

export interface RunningRun {
  taskId: string;
  title: string;
  board: string;
  runId: string;
  assignee: string;
  pid: number | null;
  startedAt: number;
  lastHeartbeat: number;
  maxRuntime: number | null;
  logPath: string | null;
}

export interface BoardView {
  ready(): DispatchTask[];
  running(): RunningRun[];
  claim(task: DispatchTask, runId: string): Promise<{ ok: true; task: DispatchTask } | { ok: false; reason: string }>;
  attachRun(task: { id: string; board: string }, runId: string, process: { pid: number; logPath: string }): Promise<void>;
  endRun(task: { id: string; board: string }, runId: string, outcome: RunOutcome, detail: string, failureLimit?: number): Promise<void>;
  /** Called when a task became ready (or a run ended, freeing a slot). */
  onWake(listener: () => void): () => void;
  /** Called with the run id when someone took a running task back from its worker (`reclaim`). */
  onReclaimed(listener: (runId: string) => void): () => void;
  task(id: string, board?: string): Promise<Task>;
  /** The task's worktree, made now when it is still to be made; null for a task without one. */
  ensureWorktree(task: { id: string; board: string }): Promise<string | null>;
  triage(board?: string): Task[];
  applyDecomposition(id: string, plan: DecompositionPlan, board?: string): Promise<DecompositionResult>;
  rejectDecomposition(id: string, reason: string, board?: string): Promise<DecompositionResult>;
}

/** Events after which a tick may start something: a task became ready, or a worker's task left running. */
function wakes(event: BoardEvent): boolean {
  return event.status === "ready" || event.type === "run_ended" || event.type === "completed" || event.type === "blocked";
}

export function boardView(ctx: DaemonContext, kanban: KanbanService): BoardView {
  const toDispatch = (t: Task): DispatchTask => ({
    id: t.id,
    board: t.board,
    // A ready task always has an assignee (the board falls back to the default assignee).
    assignee: t.assignee ?? "default",
    max_runtime: t.max_runtime,
    workspace: t.workspace ?? join(ctx.paths.data, "kanban", "workspaces", t.id),
  });
  return {
    ready: () => kanban.readyTasks().map(toDispatch),
    running: () =>
      kanban.runningTasks().map(({ task, run }) => ({
        taskId: task.id,
        title: task.title,
        board: task.board,
        runId: run?.run_id ?? task.current_run ?? "",
        assignee: run?.profile ?? task.assignee ?? "default",
        pid: run?.pid ?? null,
        startedAt: run?.started_at ?? task.updated_at,
        lastHeartbeat: run?.last_heartbeat ?? task.updated_at,
        maxRuntime: task.max_runtime,
        logPath: run?.log_path ?? null,
      })),
    async claim(task, runId) {
      const r = await kanban.claim(task.id, { runId, profile: task.assignee }, task.board);
      return r.ok ? { ok: true, task: toDispatch(r.task) } : { ok: false, reason: r.reason };
    },
    async attachRun(task, runId, p) {
      await kanban.attachRun(task.id, runId, { pid: p.pid, pgid: p.pid, logPath: p.logPath }, task.board);
    },
    async endRun(task, runId, outcome, detail, failureLimit) {
      await kanban.endRun(task.id, runId, outcome, detail, { failureLimit, board: task.board });
    },
    onWake: (listener) => kanban.onEvent((e) => wakes(e) && listener()),
    onReclaimed: (listener) =>
      kanban.onEvent((e) => {
        if (e.type === "reclaimed" && typeof e.data?.run_id === "string") listener(e.data.run_id);
      }),
    task: (id, board) => kanban.show(id, { board }),
    ensureWorktree: (task) => kanban.ensureWorktree(task.id, task.board),
    triage: (board) => kanban.triageTasks(board),
    applyDecomposition: (id, plan, board) => kanban.applyDecomposition(id, plan as BoardPlan, board),
    rejectDecomposition: (id, reason, board) => kanban.rejectDecomposition(id, reason, board),
  };
}

export type { RosterEntry };

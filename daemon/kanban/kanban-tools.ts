/**
 * The model's kanban tools. They reach the board only through the `kanban.*` methods: a worker
 * (a separate process) over the daemon's socket, a chat session of the daemon in process through
 * the kanban feature's registry interface (daemon/kanban/api.ts), which runs the same handlers
 * with the same checks (the daemon checks that a worker completes, blocks and heartbeats only
 * its own task). Which tools are offered depends on `AGENT_KANBAN_TASK` in the
 * turn's environment:
 *   - worker handoff (require it set): kanban_complete, kanban_block, kanban_comment, kanban_heartbeat;
 *   - read-only (always): kanban_show, kanban_list;
 *   - orchestrator (require it unset, i.e. a chat session, not a worker): kanban_create,
 *     kanban_unblock, kanban_link.
 */
import { z } from "zod";
import { ToolFailure } from "../../shared/errors.js";
import type { Params, Result } from "../../shared/protocol/index.js";
import type { KanbanMethod } from "./api.js";
import { defineTool, type ToolDefinition } from "../tools/definition.js";
import type { ToolContext } from "../tools/types.js";

/** Calls one `kanban.*` method: the worker's socket client, or the kanban service in process. */
export type KanbanCaller = <M extends KanbanMethod>(method: M, params: Params<M>) => Promise<Result<M>>;

const taskId = z
  .string()
  .regex(/^t_[0-9a-f]{8}$/, "a task id is t_ and 8 hex digits")
  .describe("A task id (t_ and 8 hex digits)");

/** The worker's own task and run, from the environment the dispatcher started it with. */
function workerOf(ctx: Partial<ToolContext>): { taskId: string; runId: string; board?: string } | null {
  const task = ctx.env?.AGENT_KANBAN_TASK?.trim();
  if (!task) return null;
  const board = ctx.env?.AGENT_KANBAN_BOARD?.trim();
  return { taskId: task, runId: ctx.env?.AGENT_KANBAN_RUN_ID?.trim() || "", ...(board ? { board } : {}) };
}

const isWorker = (ctx: Partial<ToolContext>) => workerOf(ctx) !== null;

function ownTask(ctx: ToolContext): { taskId: string; runId: string; board?: string } {
  const w = workerOf(ctx);
  if (!w) throw new ToolFailure("not_a_worker", "this tool is for kanban workers (AGENT_KANBAN_TASK is not set)");
  if (!w.runId) throw new ToolFailure("not_a_worker", "AGENT_KANBAN_RUN_ID is not set: only a worker started by the dispatcher can report on its task");
  return w;
}

const boardOf = (ctx: ToolContext) => workerOf(ctx)?.board;

/** The board's answer for the model: errors become tool failures it can read. */
async function ask<M extends KanbanMethod>(call: KanbanCaller, method: M, params: Params<M>): Promise<Result<M>> {
  try {
    return await call(method, params);
  } catch (error) {
    const e = error as { code?: string; message?: string };
    throw new ToolFailure(e.code?.replace(/^kanban\./, "") || "kanban_error", e.message ?? String(error));
  }
}

/** A task as the model reads it: no event log, the last comments and runs. */
function forModel(task: Result<"kanban.show">["task"]) {
  const { events: _events, runs, comments, ...rest } = task;
  return {
    ...rest,
    comments: comments.slice(-20).map((c) => ({ author: c.author, body: c.body, at: new Date(c.at).toISOString() })),
    runs: runs.slice(-5).map((r) => ({ run_id: r.run_id, profile: r.profile, outcome: r.outcome, detail: r.detail })),
  };
}

export function kanbanTools(call: KanbanCaller): ToolDefinition[] {
  const complete = defineTool({
    name: "kanban_complete",
    description:
      "Finish your kanban task: it moves to done and the tasks waiting on it can start. Give a summary of what you did (and the result, when the task asks for one). Call it once, at the end.",
    toolset: "kanban",
    args: z
      .object({
        summary: z.string().min(1).max(100_000).describe("What was done, in a few sentences"),
        result: z.string().max(1_000_000).optional().describe("The task's result, when it asks for one (an answer, a file list, a URL)"),
      })
      .strict(),
    available: isWorker,
    async run(args, ctx) {
      const w = ownTask(ctx);
      const r = await ask(call, "kanban.complete", {
        board: w.board,
        ids: [w.taskId],
        summary: args.summary,
        result: args.result,
        worker: { taskId: w.taskId, runId: w.runId },
      });
      return { ok: true, output: { task_id: w.taskId, status: r.tasks[0]?.status ?? "done" } };
    },
  });
  const block = defineTool({
    name: "kanban_block",
    description:
      "Stop working on your kanban task because you cannot go on (you need a human's decision, access, or something outside your reach). Say precisely what is needed. The task waits in blocked until someone unblocks it.",
    toolset: "kanban",
    args: z.object({ reason: z.string().min(1).max(10_000).describe("What blocks the task and what would unblock it") }).strict(),
    available: isWorker,
    async run(args, ctx) {
      const w = ownTask(ctx);
      const r = await ask(call, "kanban.block", { board: w.board, ids: [w.taskId], reason: args.reason, worker: { taskId: w.taskId, runId: w.runId } });
      return { ok: true, output: { task_id: w.taskId, status: r.tasks[0]?.status ?? "blocked" } };
    },
  });
  const comment = defineTool({
    name: "kanban_comment",
    description: "Add a comment to a kanban task (your own by default, or any other by id): a note for the people and agents working on it.",
    toolset: "kanban",
    args: z
      .object({ body: z.string().min(1).max(100_000).describe("The comment"), task_id: taskId.optional().describe("Another task's id (default: your own)") })
      .strict(),
    available: isWorker,
    async run(args, ctx) {
      const w = ownTask(ctx);
      const id = args.task_id ?? w.taskId;
      await ask(call, "kanban.comment", { board: w.board, id, body: args.body, worker: { taskId: w.taskId, runId: w.runId } });
      return { ok: true, output: { task_id: id, commented: true } };
    },
  });
  const heartbeat = defineTool({
    name: "kanban_heartbeat",
    description: "Tell the board you are still working on your kanban task (call it every few minutes during long work).",
    toolset: "kanban",
    args: z.object({}).strict(),
    available: isWorker,
    async run(_args, ctx) {
      const w = ownTask(ctx);
      await ask(call, "kanban.heartbeat", { board: w.board, taskId: w.taskId, runId: w.runId });
      return { ok: true, output: { task_id: w.taskId, ok: true } };
    },
  });
  const show = defineTool({
    name: "kanban_show",
    description:
      "Read a kanban task: title, body, status, assignee, parents and children, comments, recent runs, and its result and summary once done. Without task_id: your own task (for a worker).",
    toolset: "kanban",
    args: z.object({ task_id: taskId.optional() }).strict(),
    async run(args, ctx) {
      const id = args.task_id ?? workerOf(ctx)?.taskId;
      if (!id) throw new ToolFailure("invalid_arguments", "task_id is required (you are not working on a task)");
      const { task } = await ask(call, "kanban.show", { board: boardOf(ctx), id });
      return { ok: true, output: forModel(task) };
    },
  });
  const list = defineTool({
    name: "kanban_list",
    description: "List the kanban board's tasks (id, title, status, assignee, priority, links), optionally only some statuses or one assignee.",
    toolset: "kanban",
    args: z
      .object({
        status: z
          .array(z.enum(["triage", "todo", "scheduled", "ready", "running", "blocked", "review", "done", "archived"]))
          .max(9)
          .optional(),
        assignee: z.string().min(1).max(64).optional(),
        limit: z.number().int().min(1).max(500).default(100).describe("At most this many tasks (default 100)"),
      })
      .strict(),
    async run(args, ctx) {
      const r = await ask(call, "kanban.list", { board: boardOf(ctx), status: args.status, assignee: args.assignee });
      return { ok: true, output: { board: r.board, total: r.tasks.length, tasks: r.tasks.slice(0, args.limit) } };
    },
  });
  const notWorker = (ctx: Partial<ToolContext>) => !isWorker(ctx);
  const create = defineTool({
    name: "kanban_create",
    description:
      "Create a kanban task. It is ready to run when every parent is done (else it waits in todo); `triage` leaves it for the decomposer to split or tighten. The assignee is a profile name; an unknown one runs as the default assignee.",
    toolset: "kanban",
    args: z
      .object({
        title: z.string().min(1).max(500),
        body: z.string().max(100_000).optional(),
        assignee: z.string().min(1).max(64).optional(),
        parents: z.array(taskId).max(100).optional().describe("Tasks this one waits for"),
        priority: z.number().int().min(-1000).max(1000).optional().describe("Higher runs first (default 0)"),
        triage: z.boolean().optional(),
      })
      .strict(),
    available: notWorker,
    async run(args, ctx) {
      const r = await ask(call, "kanban.create", { ...args, workspace: ctx.cwd, by: "orchestrator" });
      return { ok: true, output: { task_id: r.task.id, status: r.task.status, assignee: r.task.assignee, ...(r.notice ? { notice: r.notice } : {}) } };
    },
  });
  const unblock = defineTool({
    name: "kanban_unblock",
    description: "Unblock a blocked (or scheduled) kanban task: it becomes ready when its parents are done, else todo; its failure counter is reset.",
    toolset: "kanban",
    args: z.object({ task_id: taskId }).strict(),
    available: notWorker,
    async run(args) {
      const r = await ask(call, "kanban.unblock", { ids: [args.task_id] });
      return { ok: true, output: { task_id: args.task_id, status: r.tasks[0]?.status } };
    },
  });
  const link = defineTool({
    name: "kanban_link",
    description: "Make one kanban task wait for another: `child` runs only once `parent` is done. Self-links and cycles are refused.",
    toolset: "kanban",
    args: z.object({ parent: taskId, child: taskId }).strict(),
    available: notWorker,
    async run(args) {
      const r = await ask(call, "kanban.link", { parent: args.parent, child: args.child });
      return { ok: true, output: { parent: r.parent.id, child: r.child.id, child_status: r.child.status } };
    },
  });
  return [complete, block, comment, heartbeat, show, list, create, unblock, link];
}

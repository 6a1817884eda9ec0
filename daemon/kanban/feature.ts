import { AgentError } from "../../shared/errors.js";
import type { DecomposeResult, DispatchReport } from "../../shared/protocol/kanban.js";
import { type CallContext, type Handlers, methods, type Result } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import type { KanbanApi, KanbanMethod } from "./api.js";
import { startDispatcher } from "./dispatch/dispatcher.js";
import { kanbanRoutes } from "./http/routes.js";
import { followLog, readLog } from "./log.js";
import { KanbanService } from "./kanban-service.js";

/** What the kanban feature needs of the dispatcher (daemon/kanban/dispatch/dispatcher.ts). */
export interface DispatcherHandle {
  tick(options: { dryRun?: boolean; failureLimit?: number; board?: string }): Promise<DispatchReport | Record<string, unknown>>;
  stop(): Promise<void>;
  decomposer?: { decomposeMany(request: { taskIds?: string[]; all?: boolean; board?: string }): Promise<DecomposeResult[]> };
}

/**
 * The kanban feature: the boards (`board` actors) behind the `kanban.*` methods and the
 * dashboard plugin API (`/api/plugins/kanban/`), and the dispatcher.
 */
export function kanbanFeature(): Feature {
  let dispatcher: DispatcherHandle | null = null;
  let unmount: (() => void) | null = null;
  let unsubscribe: (() => void) | null = null;
  return {
    name: "kanban",
    provides: ["kanban"],
    needs: { start: ["actors", "httpPlugins", "profiles"] },
    async start(ctx: DaemonContext) {
      const service = new KanbanService(ctx, ctx.services.get("actors"));
      await service.start();

      // Every change is also an event on topic `kanban.event.<board>` for subscribed clients (the TUI).
      unsubscribe = service.onEvent((event) => ctx.rpc.broadcast(`kanban.event.${event.board}`, event));
      const decomposer = () => {
        if (!dispatcher?.decomposer) throw new AgentError("kanban.decomposer_unavailable", "the decomposer is not running in this daemon");
        return dispatcher.decomposer;
      };
      const served = handlers(ctx, service, () => dispatcher, decomposer);
      ctx.rpc.register(served);
      ctx.services.provide(
        "kanban",
        inProcess(ctx, served, (l) => service.onEvent(l)),
      );
      unmount = ctx.services.get("httpPlugins").mount("/api/plugins/kanban/", kanbanRoutes(ctx, service, decomposer));
      dispatcher = await startDispatcher(ctx, service);
      ctx.components.set("kanban", { status: "ok", detail: "dispatcher running" });
    },
    async stop() {
      unmount?.();
      unsubscribe?.();
      await dispatcher?.stop();
      dispatcher = null;
    },
  };
}

/**
 * The kanban service as other features reach it (the agent's kanban tools): the socket's own
 * handlers, called in process with the params checked by the same schemas.
 */
function inProcess(ctx: DaemonContext, served: Partial<Handlers>, onEvent: KanbanApi["onEvent"]): KanbanApi {
  return {
    onEvent,
    async call<M extends KanbanMethod>(method: M, params: unknown): Promise<Result<M>> {
      const handler = served[method] as ((p: unknown, c: CallContext) => Promise<Result<M>> | Result<M>) | undefined;
      if (!handler) throw new AgentError("daemon.service_unavailable", `${method} is not served by the kanban feature`, { method });
      const parsed = methods[method].params.safeParse(params);
      if (!parsed.success) {
        const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "params"}: ${i.message}`).join("; ");
        throw new AgentError("rpc.invalid_params", `invalid params for ${method}: ${detail}`);
      }
      const call: CallContext = { connectionId: 0, profile: "default", signal: ctx.rpc.closingSignal, notify: () => undefined };
      return handler(parsed.data, call);
    },
  };
}

function handlers(
  ctx: DaemonContext,
  k: KanbanService,
  dispatcher: () => DispatcherHandle | null,
  decomposer: () => NonNullable<DispatcherHandle["decomposer"]>,
): Partial<Handlers> {
  const opts = (board: string | undefined, by?: string) => ({ board, by: by ?? "cli" });
  return {
    "kanban.create": async ({ board, by, ...input }) => k.create(input, opts(board, by)),
    "kanban.list": ({ board, status, assignee, all }) => k.list({ status, assignee, all }, opts(board)),
    "kanban.show": async ({ board, id }) => ({ task: await k.show(id, opts(board)) }),
    "kanban.assign": async ({ board, ids, assignee }) => ({ tasks: await k.assign(ids, assignee, opts(board)) }),
    "kanban.link": ({ board, parent, child }) => k.link(parent, child, opts(board)),
    "kanban.unlink": ({ board, parent, child }) => k.unlink(parent, child, opts(board)),
    "kanban.comment": async ({ board, id, body, author, worker }) => ({ task: await k.comment(id, body, { author, worker }, opts(board)) }),
    "kanban.complete": async ({ board, ids, summary, result, worker }) => ({ tasks: await k.complete(ids, { summary, result, worker }, opts(board)) }),
    "kanban.block": async ({ board, ids, reason, worker }) => ({ tasks: await k.block(ids, { reason, worker }, opts(board)) }),
    "kanban.unblock": async ({ board, ids }) => ({ tasks: await k.unblock(ids, opts(board)) }),
    "kanban.schedule": async ({ board, ids, reason }) => ({ tasks: await k.schedule(ids, reason, opts(board)) }),
    "kanban.archive": async ({ board, ids }) => ({ tasks: await k.archive(ids, opts(board)) }),
    "kanban.promote": async ({ board, ids }) => ({ tasks: await k.promote(ids, opts(board)) }),
    "kanban.reclaim": async ({ board, ids }) => ({ tasks: await k.reclaim(ids, opts(board)) }),
    "kanban.heartbeat": async ({ board, taskId, runId }) => ({ ok: true as const, task: await k.heartbeat(taskId, runId, board) }),
    "kanban.runs": async ({ board, id }) => {
      const t = await k.show(id, opts(board));
      return { task_id: id, runs: t.runs, runs_dropped: t.runs_dropped ?? 0 };
    },
    "kanban.stats": ({ board }) => k.stats(opts(board)),
    "kanban.boards.list": () => k.listBoards(),
    "kanban.boards.create": ({ name }) => k.createBoard(name),
    "kanban.boards.use": ({ name }) => k.useBoard(name),
    "kanban.watch": async ({ board, all }, call) => {
      const name = board ?? k.currentBoard();
      if (!all) await k.stats({ board: name });
      // Open until the client cancels or the daemon stops.
      const signal = AbortSignal.any([call.signal, ctx.rpc.closingSignal]);
      return new Promise((resolve) => {
        const off = k.onEvent((event) => {
          if (all || event.board === name) call.notify("kanban.event", event);
        });
        const end = () => {
          off();
          resolve({ ok: true as const });
        };
        if (signal.aborted) end();
        else signal.addEventListener("abort", end, { once: true });
      });
    },
    "kanban.dispatch": async ({ board, dryRun, failureLimit }) => {
      const d = dispatcher();
      if (!d) throw new AgentError("kanban.dispatcher_unavailable", "the dispatcher is not running in this daemon");
      return (await d.tick({ dryRun, failureLimit, board })) as DispatchReport;
    },
    "kanban.decompose": async ({ board, taskIds, all }) => {
      if (all && taskIds?.length) throw new AgentError("kanban.invalid_argument", "give task ids or --all, not both");
      if (!all && !taskIds?.length) throw new AgentError("kanban.invalid_argument", "name the tasks to decompose, or --all for every triage task");
      for (const id of taskIds ?? []) await k.show(id, { board });
      return { results: await decomposer().decomposeMany({ taskIds, all, board }) };
    },
    "kanban.createPlan": ({ board, by, text, file, hold, workspace }) => k.createPlan(text, { file, hold, workspace }, opts(board, by)),
    "kanban.boards.delete": ({ name }) => k.deleteBoard(name),
    "kanban.release": async ({ board, ids, all }) => {
      if (all && ids?.length) throw new AgentError("kanban.invalid_argument", "give task ids or --all, not both");
      if (!all && !ids?.length) throw new AgentError("kanban.invalid_argument", "name the held tasks to release, or --all for every held task");
      return { tasks: await k.release(all ? "all" : ids!, opts(board)) };
    },
    "kanban.log": async ({ board, taskId, follow, lines }, call) => {
      const task = await k.show(taskId, { board });
      // A task that is not running has no more output coming: a follow is a plain read.
      if (!follow || task.status !== "running") return readLog(ctx, task, lines);
      // A follow starts at the current run's header, sent before what is appended after it.
      const first = await readLog(ctx, task, lines, true);
      if (first.text) call.notify("kanban.log", { task_id: taskId, text: first.text });
      await followLog(
        first,
        AbortSignal.any([call.signal, ctx.rpc.closingSignal]),
        (text) => call.notify("kanban.log", { task_id: taskId, text }),
        () => k.show(taskId, { board }),
      );
      return { ...first, text: "" };
    },
  };
}

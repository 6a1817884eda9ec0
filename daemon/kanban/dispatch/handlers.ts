import { existsSync } from "node:fs";
import type { Handlers } from "../../../shared/protocol/index.js";
import type { DaemonContext } from "../../context.js";
import type { KanbanService } from "../service.js";
import type { Dispatcher } from "./dispatcher.js";
import { readFrom, tailLog, taskLogPath } from "./task-log.js";

const FOLLOW_POLL_MS = 200;

/** `kanban.dispatch`, `kanban.decompose` and `kanban.log`: the dispatcher's side of the kanban group. */
export function dispatchHandlers(ctx: DaemonContext, kanban: KanbanService, dispatcher: Dispatcher): Partial<Handlers> {
  return {
    "kanban.dispatch": ({ board, dryRun, failureLimit }) => {
      if (board) kanban.readyTasks(board); // an unknown board name is not an error here: it has nothing ready
      return dispatcher.tick({ dryRun, failureLimit });
    },
    "kanban.decompose": async ({ board, taskIds, all }) => ({ results: await dispatcher.decomposer.decomposeMany({ board, taskIds, all }) }),
    "kanban.log": async ({ board, taskId, follow, lines }, call) => {
      await kanban.show(taskId, { board }); // an unknown task is an error, not an empty log
      const path = taskLogPath(ctx.home, taskId);
      const exists = existsSync(path);
      const tail = await tailLog(path, lines ?? 100);
      if (!follow) return { task_id: taskId, path: exists ? path : null, text: tail.text };
      // Following, everything (the tail first) arrives as `kanban.log` notifications, in order,
      // while the task's worker runs or until cancelled; the answer then carries no text.
      if (tail.text) call.notify("kanban.log", { task_id: taskId, text: tail.text });
      let offset = tail.size;
      while (!call.signal.aborted) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, FOLLOW_POLL_MS);
          call.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
        });
        const more = await readFrom(path, offset);
        offset = more.size;
        if (more.text) call.notify("kanban.log", { task_id: taskId, text: more.text });
        if (!more.text && !dispatcher.isRunning(taskId)) break;
      }
      return { task_id: taskId, path: existsSync(path) ? path : null, text: "" };
    },
  };
}

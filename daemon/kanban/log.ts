import { open, stat } from "node:fs/promises";
import { join } from "node:path";
import { LogFollower } from "../../shared/log-follow.js";
import type { Task } from "../../shared/protocol/kanban.js";
import type { DaemonContext } from "../context.js";

/**
 * A task's worker log for `agent kanban log`: the path its last run recorded, else the
 * dispatcher's place for it (`logs/kanban/<task id>.log`). The last `lines` lines; `--follow`
 * sends what is appended until the client stops or the task is no longer running and the file
 * has been quiet for a moment. A log that was rotated is followed into its new file.
 */
export interface LogRead {
  task_id: string;
  path: string | null;
  text: string;
  /** Where the text ended (bytes), for following. */
  size: number;
}

const TAIL_BYTES = 4 * 1024 * 1024;

/**
 * `lines` (default 200) last lines. `fromRunHeader`: the log of a running task as a follow
 * starts it: from the current run's header line (`=== … run <run id> of …`, see
 * dispatch/task-log.ts) on, or the last `lines` lines of it when `lines` is given.
 */
export async function readLog(ctx: DaemonContext, task: Task, lines?: number, fromRunHeader = false): Promise<LogRead & { task_id: string }> {
  const recorded = [...task.runs].reverse().find((r) => r.log_path)?.log_path ?? null;
  const path = recorded ?? join(ctx.paths.logs, "kanban", `${task.id}.log`);
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    return { task_id: task.id, path: recorded, text: "", size: 0 };
  }
  const from = Math.max(0, size - TAIL_BYTES);
  const text = await readRange(path, from, size);
  const all = text.split("\n");
  if (all[all.length - 1] === "") all.pop();
  let start = Math.max(0, all.length - (lines ?? 200));
  if (fromRunHeader && task.current_run) {
    const header = ` run ${task.current_run} of `;
    const at = all.findLastIndex((l) => l.startsWith("=== ") && l.includes(header));
    if (at >= 0) start = lines === undefined ? at : Math.max(at, all.length - lines);
  }
  const kept = all.slice(start);
  return { task_id: task.id, path, text: kept.join("\n") + (kept.length ? "\n" : ""), size };
}

async function readRange(path: string, from: number, to: number): Promise<string> {
  if (to <= from) return "";
  const fh = await open(path, "r");
  try {
    const buf = Buffer.alloc(to - from);
    const { bytesRead } = await fh.read(buf, 0, buf.length, from);
    return buf.subarray(0, bytesRead).toString("utf8");
  } finally {
    await fh.close();
  }
}

/** How often a followed task log is looked at. */
const FOLLOW_INTERVAL_MS = 200;

/**
 * Send what is appended to the task's log from where `first` ended, through the one follower
 * (shared/log-follow.ts: rotations by the worker-output relay are followed into the new file).
 */
export async function followLog(first: LogRead, signal: AbortSignal, send: (text: string) => void, task: () => Promise<Task>): Promise<void> {
  if (!first.path) return;
  const follower = new LogFollower(first.path, { from: first.size, onText: send });
  let quiet = 0;
  try {
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, FOLLOW_INTERVAL_MS);
        signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
      });
      if (signal.aborted) return;
      let read = 0;
      try {
        read = follower.poll();
      } catch {}
      if (read > 0) {
        quiet = 0;
        continue;
      }
      quiet++;
      // Stop once the task is no longer running and nothing came for a second.
      if (quiet >= 5) {
        quiet = 0;
        const t = await task().catch(() => null);
        if (t?.status !== "running") return;
      }
    }
  } finally {
    follower.stop();
  }
}

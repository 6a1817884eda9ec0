/**
 * Per-task worker logs: `logs/kanban/<task_id>.log` holds the current (or last) run's output, the
 * runs before it `<task_id>.log.1` … `.log.<keep>`. A log is rotated when a new run starts and,
 * while a run writes, when it outgrows `logs.max_bytes`: both by the one log writer
 * (daemon/log/log-file.ts), the second in the worker-output relay the run writes through
 * (daemon/log/relay-main.ts, started by shared/log-relay.ts), which also redacts it.
 */
import { join } from "node:path";
import { LogFile } from "../../log/log-file.js";
import type { Redactor } from "../../log/redact.js";

export function taskLogDir(home: string): string {
  return join(home, "logs", "kanban");
}

export function taskLogPath(home: string, taskId: string): string {
  return join(taskLogDir(home), `${taskId}.log`);
}

/** Start a run's log: the previous one moves to `.1` (and so on, `keep` of them), the new one opens with a header line. */
export function startRunLog(path: string, limits: { maxBytes: number; keep: number }, header: string, redactor: Redactor): void {
  const file = new LogFile(path, { ...limits, redactor });
  file.rotate();
  file.append(`${header}\n`);
}

/**
 * Per-task worker logs: `logs/kanban/<task_id>.log` holds the current (or last) run's output, the
 * runs before it `<task_id>.log.1` … `.log.<keep>`. A log is rotated when a new run starts and,
 * while a run writes, when it outgrows `logs.max_bytes` (copied aside and truncated: the worker
 * writes with O_APPEND, so it carries on at the new end).
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";

export function taskLogDir(home: string): string {
  return join(home, "logs", "kanban");
}

export function taskLogPath(home: string, taskId: string): string {
  return join(taskLogDir(home), `${taskId}.log`);
}

function shift(path: string, keep: number): void {
  rmSync(`${path}.${keep}`, { force: true });
  for (let i = keep - 1; i >= 1; i--) if (existsSync(`${path}.${i}`)) renameSync(`${path}.${i}`, `${path}.${i + 1}`);
}

/** Start a run's log: the previous one moves to `.1` (and so on, `keep` of them), the new one opens with a header line. */
export function startRunLog(path: string, keep: number, header: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  if (existsSync(path) && statSync(path).size > 0) {
    shift(path, keep);
    renameSync(path, `${path}.1`);
  }
  appendFileSync(path, `${header}\n`);
}

/** Rotate a log that a running worker is writing, once it is larger than `maxBytes`. */
export function rotateIfLarge(path: string, maxBytes: number, keep: number): boolean {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return false;
  }
  if (size <= maxBytes) return false;
  shift(path, keep);
  copyFileSync(path, `${path}.1`);
  truncateSync(path, 0);
  return true;
}

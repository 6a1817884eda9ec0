/**
 * Per-task worker logs: `logs/kanban/<task_id>.log` holds the current (or last) run's output, the
 * runs before it `<task_id>.log.1` … `.log.<keep>`. A log is rotated when a new run starts and,
 * while a run writes, when it outgrows `logs.max_bytes` (copied aside and truncated: the worker
 * writes with O_APPEND, so it carries on at the new end).
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync, truncateSync } from "node:fs";
import { open } from "node:fs/promises";
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

/** The last `lines` lines of a log (at most the last 1 MiB is read). */
export async function tailLog(path: string, lines: number): Promise<{ text: string; size: number }> {
  const handle = await open(path, "r").catch(() => null);
  if (!handle) return { text: "", size: 0 };
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - 1024 * 1024);
    const buf = Buffer.alloc(size - start);
    await handle.read(buf, 0, buf.length, start);
    const all = buf.toString("utf8").split("\n");
    if (all[all.length - 1] === "") all.pop();
    return { text: all.slice(-lines).join("\n") + (all.length ? "\n" : ""), size };
  } finally {
    await handle.close();
  }
}

/** What was appended to a log after `from` bytes (a log that shrank was rotated: read it from the start). */
export async function readFrom(path: string, from: number): Promise<{ text: string; size: number }> {
  const handle = await open(path, "r").catch(() => null);
  if (!handle) return { text: "", size: from };
  try {
    const { size } = await handle.stat();
    const start = size < from ? 0 : from;
    if (size === start) return { text: "", size };
    const buf = Buffer.alloc(Math.min(size - start, 4 * 1024 * 1024));
    const { bytesRead } = await handle.read(buf, 0, buf.length, start);
    return { text: buf.subarray(0, bytesRead).toString("utf8"), size: start + bytesRead };
  } finally {
    await handle.close();
  }
}

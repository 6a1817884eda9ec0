/**
 * One running kanban worker as a row of text cells: the one formatting of `agent kanban ps`
 * (cli/commands/kanban.ts) and the TUI's workers view (tui/views/kanban.ts, P). The title is
 * apart (each caller fits it to its width), stripped of terminal escapes (it is untrusted text).
 */
import type { WorkerProcess } from "./protocol/kanban.js";
import { terminalText } from "./terminal-text.js";

/** The headers of `workerCells`, in order (the title follows as TITLE). */
export const WORKER_COLUMNS = ["TASK", "PROFILE", "PID", "PROCS", "CPU%", "CPU", "RSS", "RUNTIME", "HEARTBEAT", "LOG"] as const;

/** Bytes as B, KiB or MiB with one decimal. */
export function sizeText(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;
}

/** Time since `ms` in its largest whole unit: 42s, 5m, 3h, 2d. */
export function elapsedText(ms: number, now: number = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : s < 86400 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86400)}d`;
}

/** The cells of WORKER_COLUMNS for one worker. */
export function workerCells(w: WorkerProcess, now: number = Date.now()): string[] {
  return [
    w.task_id,
    w.profile,
    String(w.pid),
    String(w.processes),
    w.cpu_percent.toFixed(1),
    `${w.cpu_seconds.toFixed(1)}s`,
    sizeText(w.rss_bytes),
    elapsedText(w.started_at, now),
    `${elapsedText(w.last_heartbeat, now)} ago`,
    sizeText(w.log_bytes),
  ];
}

/** The worker's task title, safe to print (no escapes, no line breaks). */
export function workerTitle(w: WorkerProcess): string {
  return terminalText(w.title).replace(/[\r\n\t]+/g, " ");
}

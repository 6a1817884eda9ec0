import { readFileSync } from "node:fs";

/** Whether `pid` is a live process; a zombie (exited, not yet reaped by its parent) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..."; the state letter follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return process.platform !== "linux";
  }
}

/** Fields of /proc/<pid>/stat after the command name: [state, ppid, pgrp, …]; null when gone (or no /proc). */
export function procStat(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/**
 * When `pid` started (clock ticks since boot, /proc/<pid>/stat field 22), or null without /proc.
 * A pid holding the same start time is the same process; a reused pid has another.
 */
export function processStartTime(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}

/** The command line of `pid` (arguments joined by spaces), or null when it cannot be read. */
export function processCommandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return null;
  }
}

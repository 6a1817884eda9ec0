/**
 * The one reader of /proc: whether a process lives, its start time (what tells a reused pid from
 * the process that had it), its group, command line and environment, the members of a process
 * group and this process's limits. Everything that asks /proc about a process asks here; on a
 * system without /proc each answer says so (null) and callers fall back to what kill(0) tells.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";

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

/** Whether this system has /proc to ask (Linux); without it, start times and groups are unknown. */
export function hasProc(): boolean {
  return existsSync("/proc/self/stat");
}

/** The process group of `pid`, or null when gone (or no /proc). */
export function processGroup(pid: number): number | null {
  const pgrp = procStat(pid)?.[2];
  return pgrp === undefined ? null : Number(pgrp);
}

/** The live (not zombie) processes whose group is `pgid`. Empty when none, or without /proc. */
export function processGroupMembers(pgid: number): number[] {
  return scanGroups(new Set([pgid]), false).get(pgid)?.pids ?? [];
}

/** The environment `pid` was started with (NAME=value strings), or null when it cannot be read. */
export function processEnviron(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  } catch {
    return null;
  }
}

/** The soft and hard RLIMIT_NOFILE of this process, or null where /proc is not there. */
export function openFileLimit(): { soft: number; hard: number } | null {
  try {
    const text = readFileSync("/proc/self/limits", "utf8");
    const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
    if (!m) return null;
    const n = (s: string) => (s === "unlimited" ? Number.POSITIVE_INFINITY : Number(s));
    return { soft: n(m[1]!), hard: n(m[2]!) };
  } catch {
    return null;
  }
}

/**
 * One pass over /proc: the live members of each of `pgids` with their CPU time (user + system,
 * in clock ticks: /proc/<pid>/stat fields 14 and 15) and resident memory (VmRSS of
 * /proc/<pid>/status, bytes). Groups with no member left are absent. Empty without /proc.
 */
export function groupUsage(pgids: Iterable<number>): Map<number, { pids: number[]; cpuTicks: number; rssBytes: number }> {
  return scanGroups(new Set(pgids), true);
}

/** One pass over /proc for the live (not zombie) members of `wanted`; with `usage`, their CPU ticks and RSS too. */
function scanGroups(wanted: Set<number>, usage: boolean): Map<number, { pids: number[]; cpuTicks: number; rssBytes: number }> {
  const out = new Map<number, { pids: number[]; cpuTicks: number; rssBytes: number }>();
  if (!wanted.size) return out;
  let names: string[] = [];
  try {
    names = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (!st || st[0] === "Z" || st[0] === "X") continue;
    const pgid = Number(st[2]);
    if (!wanted.has(pgid)) continue;
    let entry = out.get(pgid);
    if (!entry) out.set(pgid, (entry = { pids: [], cpuTicks: 0, rssBytes: 0 }));
    entry.pids.push(Number(name));
    if (!usage) continue;
    // After the command name: state is [0], utime field 14 is [11], stime field 15 is [12].
    entry.cpuTicks += Number(st[11] ?? 0) + Number(st[12] ?? 0);
    try {
      const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${name}/status`, "utf8"))?.[1];
      entry.rssBytes += Number(kb ?? 0) * 1024;
    } catch {}
  }
  return out;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux's usual builds). */
export const CLOCK_TICKS = 100;

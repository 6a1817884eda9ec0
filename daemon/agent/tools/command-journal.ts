/**
 * The process groups of running `terminal` commands, on disk, so a command a `kill -9` of the
 * daemon left running is killed at the next start instead of living on as an orphan. A record
 * (`data/running-commands/<pgid>.json`) is written right after the spawn, before the event loop
 * runs again, and removed when the command is over. At start, a record whose owner (the daemon
 * or kanban worker that ran the command) is gone is reaped: its group is killed if it is still
 * ours, told by the leader's start time in /proc (a reused pid is not ours). Linux only: without
 * /proc nothing is killed.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { homePaths, resolveHome } from "../../../shared/paths.js";
import { procStat, processStartTime } from "../../../shared/process.js";
import { writeFileAtomicSync } from "../../store/atomic-file.js";

interface CommandRecord {
  pgid: number;
  /** The leader's start time (clock ticks since boot, /proc/<pid>/stat field 22). */
  startTime: string;
  owner: number;
  ownerStartTime: string | null;
  command: string;
  startedAt: number;
}

export function commandJournalDir(home = resolveHome()): string {
  return join(homePaths(home).data, "running-commands");
}

/** Where this process records its commands; set by the daemon and the kanban worker at start (none: not recorded). */
let journalDir: string | null = null;

export function useCommandJournal(dir: string | null): void {
  journalDir = dir;
}

/** starttime is field 22 of the stat line (shared/process.ts). */
const startTimeOf = processStartTime;

/** Record a command's process group; returns what removes the record. Never throws: a command runs even when its record cannot be written. */
export function recordCommand(pgid: number, command: string, dir = journalDir): () => void {
  if (dir === null) return () => undefined;
  const file = join(dir, `${pgid}.json`);
  try {
    mkdirSync(dir, { recursive: true });
    const record: CommandRecord = {
      pgid,
      startTime: startTimeOf(pgid) ?? "",
      owner: process.pid,
      ownerStartTime: startTimeOf(process.pid),
      command: command.slice(0, 500),
      startedAt: Date.now(),
    };
    // Never fsynced: it only has to outlive the daemon process; a power cut ends the command too.
    writeFileAtomicSync(file, JSON.stringify(record), { fsync: false });
  } catch {
    return () => undefined;
  }
  return () => rmSync(file, { force: true });
}

/** The owner runs still: its pid has the recorded start time (a pid reused after a crash, even ours, does not). */
function ownerAlive(r: CommandRecord): boolean {
  const start = startTimeOf(r.owner);
  return start !== null && (r.ownerStartTime === null || start === r.ownerStartTime);
}

/** The processes now in group `pgid` (from /proc). */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  let names: string[] = [];
  try {
    names = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st && Number(st[2]) === pgid && st[0] !== "Z") out.push(Number(name));
  }
  return out;
}

/**
 * Kill what is left of the commands of a daemon or worker that is gone; returns the groups
 * killed. The group is ours when its leader still has the recorded start time, or, with the
 * leader gone, while any member is left (Linux does not reuse a pid that is still a group id).
 */
export function reapInterruptedCommands(dir: string): Array<{ pgid: number; command: string }> {
  const killed: Array<{ pgid: number; command: string }> = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return killed;
  }
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const file = join(dir, name);
    let r: CommandRecord;
    try {
      r = JSON.parse(readFileSync(file, "utf8")) as CommandRecord;
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    if (ownerAlive(r)) continue;
    const leader = startTimeOf(r.pgid);
    const ours = leader !== null ? leader === r.startTime && r.startTime !== "" : groupMembers(r.pgid).length > 0;
    if (ours) {
      try {
        process.kill(-r.pgid, "SIGKILL");
        killed.push({ pgid: r.pgid, command: r.command });
      } catch {}
    }
    rmSync(file, { force: true });
  }
  return killed;
}

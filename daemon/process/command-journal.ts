/**
 * The command journal: the process groups this daemon (or a kanban worker) has running, on
 * disk, so a group a `kill -9` of the daemon left running is killed at the next start instead
 * of living on as an orphan (process-group.ts reapOrphanGroups). A record
 * (`data/running-commands/<pgid>.json`) is written right after the spawn, before the event loop
 * runs again, and removed when the group is over. It names its owner (the process that spawned
 * the group, with its start time): only a record whose owner is gone is reaped.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { homePaths, resolveHome } from "../../shared/paths.js";
import { isAlive, processStartTime } from "../../shared/process.js";
import { writeFileAtomicSync } from "../store/atomic-file.js";

export interface GroupRecord {
  pgid: number;
  /** The leader's start time (clock ticks since boot, /proc/<pid>/stat field 22); "" when unknown. */
  startTime: string;
  owner: number;
  ownerStartTime: string | null;
  /** What ran: a command line (cut to 500 characters) or a label such as "cron script c_1234abcd". */
  command: string;
  startedAt: number;
}

export function commandJournalDir(home = resolveHome()): string {
  return join(homePaths(home).data, "running-commands");
}

/** Where this process records its groups; set by the daemon and the kanban worker at start (none: not recorded). */
let journalDir: string | null = null;

export function useCommandJournal(dir: string | null): void {
  journalDir = dir;
}

/** Record a group; returns what removes the record. Never throws: a command runs even when its record cannot be written. */
export function recordGroup(group: { pgid: number; startTime: string | null }, command: string, dir = journalDir): () => void {
  if (dir === null) return () => undefined;
  const file = join(dir, `${group.pgid}.json`);
  try {
    mkdirSync(dir, { recursive: true });
    const record: GroupRecord = {
      pgid: group.pgid,
      startTime: group.startTime ?? "",
      owner: process.pid,
      ownerStartTime: processStartTime(process.pid),
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

/** The owner runs still (not a zombie): its pid has the recorded start time (a pid reused after a crash, even ours, does not). */
export function ownerAlive(r: GroupRecord): boolean {
  // A zombie owner (killed, not yet reaped by whatever adopted it) is gone: its /proc entry stays until then.
  if (!isAlive(r.owner)) return false;
  const start = processStartTime(r.owner);
  return start !== null && (r.ownerStartTime === null || start === r.ownerStartTime);
}

/** The records in `dir`, each with what removes it (unless rewritten since); an unreadable record is removed. */
export function readGroupRecords(dir: string): Array<{ record: GroupRecord; remove: () => void }> {
  const out: Array<{ record: GroupRecord; remove: () => void }> = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const file = join(dir, name);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
      out.push({ record: JSON.parse(text) as GroupRecord, remove: () => removeIfUnchanged(file, text) });
    } catch {
      rmSync(file, { force: true });
    }
  }
  return out;
}

/** Remove a record unless it was rewritten meanwhile (a new group that got the same pid records itself under the same name). */
function removeIfUnchanged(file: string, text: string): void {
  try {
    if (readFileSync(file, "utf8") === text) rmSync(file, { force: true });
  } catch {}
}

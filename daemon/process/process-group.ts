/**
 * The one process module: every child the daemon (or a kanban worker) runs that may start
 * children of its own (a terminal command, a cron script, a kanban worker, a language server;
 * next, MCP servers and the codex app-server) is spawned here, detached, as the leader of its own process group, so
 * the whole group can be stopped at once and can outlive the daemon when it must.
 *
 * - **Identity.** A group is known by its leader's pid and start time (/proc, shared/process.ts):
 *   a pid reused by another process has another start time and is never signalled. With the
 *   leader gone, the group is still ours while any member is left (Linux does not hand out a pid
 *   that is still some group's id).
 * - **Recorded.** By default the group goes into the command journal (command-journal.ts) before
 *   the event loop runs again, and out of it when it is over: a daemon killed with -9 leaves a
 *   record, and the next start kills what is left (reapOrphanGroups).
 * - **One grace rule.** Stopping a group is SIGTERM to the whole group, then SIGKILL to whatever
 *   of it is left KILL_GRACE_MS later, unless it is over sooner. Once the leader has ended, what
 *   it left in a stopped group is killed at once.
 */
import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { CLOCK_TICKS, groupUsage, hasProc, isAlive, processGroupMembers, processStartTime } from "../../shared/process.js";
import { ownerAlive, readGroupRecords, recordGroup } from "./command-journal.js";

/** Between SIGTERM and SIGKILL of a process group: the one grace period. */
export const KILL_GRACE_MS = 2_000;

/** A process group as recorded: its id (the leader's pid) and the leader's start time ("" / null: unknown). */
export interface GroupIdentity {
  pgid: number;
  startTime: string | null;
}

/**
 * Whether the group is still the one recorded: true, false, or null where /proc cannot tell (no
 * /proc). A leader with another start time is a reused pid; a recorded group whose leader is
 * gone is ours while members are left.
 */
export function groupIsOurs(g: GroupIdentity): boolean | null {
  if (!hasProc()) return null;
  // A zombie leader (exited, not yet reaped: an orphan waits on its new parent) counts as gone.
  const leader = isAlive(g.pgid) ? processStartTime(g.pgid) : null;
  if (leader !== null) return !!g.startTime && leader === g.startTime;
  return processGroupMembers(g.pgid).length > 0;
}

/** Send `signal` to the whole group if it is still ours; false when it is gone (or not ours). */
export function signalGroup(g: GroupIdentity, signal: NodeJS.Signals): boolean {
  if (groupIsOurs(g) === false) return false;
  try {
    process.kill(-g.pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stop a group by the one rule: SIGTERM now, SIGKILL after `graceMs` to whatever is still ours.
 * `gone`, when given, is called once the group is over: seen empty (looked for every 50 ms) or
 * sent its SIGKILL. Returns what cancels the SIGKILL (the caller saw the group end).
 */
export function terminateGroup(g: GroupIdentity, graceMs = KILL_GRACE_MS, gone?: () => void): () => void {
  signalGroup(g, "SIGTERM");
  let watch: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    clearInterval(watch);
    signalGroup(g, "SIGKILL");
    gone?.();
  }, graceMs);
  timer.unref();
  if (gone) {
    watch = setInterval(() => {
      if (groupIsOurs(g) !== false) return;
      clearInterval(watch);
      clearTimeout(timer);
      gone();
    }, 50);
    watch.unref();
  }
  return () => {
    clearTimeout(timer);
    clearInterval(watch);
  };
}

/** A handle on a process group this process started (or adopted): signal it, stop it, forget it. */
export class ProcessGroup implements GroupIdentity {
  #cancelKill: (() => void) | null = null;
  #stopping = false;
  #forgotten = false;

  constructor(
    readonly pgid: number,
    readonly startTime: string | null,
    private readonly unrecord: () => void = () => undefined,
  ) {}

  /** A group started elsewhere (a kanban worker found again after a restart); its identity as of now. */
  static adopt(pgid: number): ProcessGroup {
    return new ProcessGroup(pgid, processStartTime(pgid));
  }

  /** Whether stop() was called. */
  get stopping(): boolean {
    return this.#stopping;
  }

  signal(signal: NodeJS.Signals): boolean {
    return signalGroup(this, signal);
  }

  /** The one grace rule: SIGTERM to the group, SIGKILL to what is left after the grace period. Once only. */
  stop(graceMs = KILL_GRACE_MS): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#cancelKill = terminateGroup(this, graceMs);
  }

  /** SIGKILL to the whole group now: a stopped group whose leader ended, or a start that must be undone. */
  kill(): void {
    this.#cancelKill?.();
    this.#cancelKill = null;
    signalGroup(this, "SIGKILL");
  }

  /**
   * The leader is over (or this process stops caring, e.g. a daemon leaving a kanban worker
   * running): cancel a pending SIGKILL, kill what a *stopped* group left when `leftovers` says
   * so, and drop the journal record.
   */
  forget(options: { killLeftovers?: boolean } = {}): void {
    if (options.killLeftovers) this.kill();
    this.#cancelKill?.();
    this.#cancelKill = null;
    if (this.#forgotten) return;
    this.#forgotten = true;
    this.unrecord();
  }
}

export interface SpawnGroupOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Default: no stdin, stdout and stderr piped. */
  stdio?: StdioOptions;
  /** What the journal (and the log line of a reaped group) calls it: the command line, or "cron script <job>". */
  label: string;
  /** Record the group in the command journal (default true). False for a group meant to outlive the daemon (a kanban worker). */
  record?: boolean;
}

/**
 * Spawn `file args` detached, as the leader of a new process group, and record the group. The
 * group is null when the process could not be started (the child then emits `error`).
 */
export function spawnGroup(file: string, args: readonly string[], options: SpawnGroupOptions): { child: ChildProcess; group: ProcessGroup | null } {
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: options.stdio ?? ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) return { child, group: null };
  // The leader's start time is read right away, while the pid is surely still the child's
  // (not reaped before the event loop runs again).
  const startTime = processStartTime(child.pid);
  const unrecord = options.record === false ? () => undefined : recordGroup({ pgid: child.pid, startTime }, options.label);
  return { child, group: new ProcessGroup(child.pid, startTime, unrecord) };
}

/**
 * At start: stop what is left of the groups of an owner that is gone (a daemon killed with -9,
 * a kanban worker that died), by the one grace rule; each record goes once its group has had
 * its SIGKILL (a daemon killed again meanwhile reaps it at its next start). A group that is no
 * longer ours (its leader's pid reused) is never signalled, only forgotten. Without /proc
 * nothing is killed. Returns the groups being stopped.
 */
export function reapOrphanGroups(dir: string, graceMs = KILL_GRACE_MS): Array<{ pgid: number; command: string }> {
  const reaped: Array<{ pgid: number; command: string }> = [];
  for (const { record, remove } of readGroupRecords(dir)) {
    if (ownerAlive(record)) continue;
    const group: GroupIdentity = { pgid: record.pgid, startTime: record.startTime };
    if (groupIsOurs(group) !== true) {
      remove();
      continue;
    }
    reaped.push({ pgid: record.pgid, command: record.command });
    terminateGroup(group, graceMs, remove);
  }
  return reaped;
}

/** What a process group uses now: its live processes, their CPU seconds (user + system) and resident bytes, summed. */
export interface GroupUsage {
  processes: number;
  cpuSeconds: number;
  rssBytes: number;
}

/** The usage of each group (one pass over /proc for all of them); a group with nothing left reads as zeros. */
export function usageOfGroups(pgids: readonly number[]): Map<number, GroupUsage> {
  const raw = groupUsage(pgids);
  const out = new Map<number, GroupUsage>();
  for (const pgid of pgids) {
    const u = raw.get(pgid);
    out.set(pgid, { processes: u?.pids.length ?? 0, cpuSeconds: (u?.cpuTicks ?? 0) / CLOCK_TICKS, rssBytes: u?.rssBytes ?? 0 });
  }
  return out;
}

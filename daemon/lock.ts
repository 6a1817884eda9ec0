import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { AgentError } from "../shared/errors.js";
import { isAlive, processCommandLine, processStartedAt } from "../shared/process.js";

/**
 * The single-daemon lock: `$AGENT_HOME/daemon.lock` holds the owner's pid. Created with O_EXCL
 * so two starting daemons cannot both win; a lock whose owner is gone (a daemon killed with -9)
 * is taken over, also when its pid now belongs to another process (see lockOwnerAlive).
 */
export class DaemonLock {
  private held = false;

  constructor(
    readonly file: string,
    readonly pid = process.pid,
  ) {}

  acquire(): void {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const fd = openSync(this.file, "wx", 0o600);
        writeSync(fd, `${this.pid}\n`);
        closeSync(fd);
        this.held = true;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const owner = readLockPid(this.file);
      if (owner !== null && owner !== this.pid && lockOwnerAlive(this.file)) {
        throw new AgentError("daemon.already_running", `a daemon is already running for this home (pid ${owner})`, { pid: owner });
      }
      // Stale (owner dead) or unreadable (a crash between create and write): take it over.
      try {
        unlinkSync(this.file);
      } catch {}
    }
    throw new AgentError("daemon.lock_failed", `could not take the lock ${this.file}`);
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      if (readLockPid(this.file) === this.pid) unlinkSync(this.file);
    } catch {}
  }
}

export function readLockPid(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Whether the process named by the lock is the daemon that wrote it. Its pid may have been
 * reused since that daemon died: where /proc tells, the process must be a daemon (its command
 * line runs daemon/main.js) and must have started before the lock was last written or touched
 * (a daemon writes its lock after it starts; a reused pid started after the old owner died).
 * Without /proc a live pid is believed.
 */
export function lockOwnerAlive(file: string): boolean {
  const pid = readLockPid(file);
  if (pid === null || !isAlive(pid)) return false;
  const cmd = processCommandLine(pid);
  if (cmd !== null && !/daemon[/\\]main\.[cm]?[jt]s\b/.test(cmd)) return false;
  const startedAt = processStartedAt(pid);
  const lockTime = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
  // One clock tick (10 ms) and a second of file-time granularity of slack.
  if (startedAt !== null && lockTime !== undefined && startedAt > lockTime + 1010) return false;
  return true;
}

export { isAlive };

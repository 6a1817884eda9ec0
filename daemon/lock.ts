import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { AgentError } from "../shared/errors.js";
import { isAlive, processCommandLine, processStartTime } from "../shared/process.js";

/**
 * The single-daemon lock: `$AGENT_HOME/daemon.lock` holds the owner's pid on its first line and,
 * where /proc tells it, the owner's start time on the second. Created with O_EXCL so two
 * starting daemons cannot both win; a lock whose owner is gone (a daemon killed with -9) is
 * taken over, also when its pid now belongs to another process (see lockOwnerAlive).
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
        const started = processStartTime(this.pid);
        writeSync(fd, `${this.pid}\n${started ? `${started}\n` : ""}`);
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

/** The lock's second line: its owner's start time, when recorded. */
function readLockStartTime(file: string): string | null {
  try {
    return readFileSync(file, "utf8").split("\n")[1]?.trim() || null;
  } catch {
    return null;
  }
}

/**
 * Whether the process named by the lock is the daemon that wrote it; its pid may have been
 * reused since that daemon died. Where /proc tells: a recorded start time must be the process's
 * (clock ticks since boot, as the command journal compares them: no wall-clock jump changes
 * them); a lock without one (an older daemon's) is believed only when the process's command
 * line runs daemon/main.js. Without /proc a live pid is believed.
 */
export function lockOwnerAlive(file: string): boolean {
  const pid = readLockPid(file);
  if (pid === null || !isAlive(pid)) return false;
  const recorded = readLockStartTime(file);
  const now = processStartTime(pid);
  if (recorded && now) return recorded === now;
  const cmd = processCommandLine(pid);
  return cmd === null || /daemon[/\\]main\.[cm]?[jt]s\b|^agentd\b/.test(cmd);
}

export { isAlive };

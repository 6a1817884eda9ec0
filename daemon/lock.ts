import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { AgentError } from "../shared/errors.js";
import { isAlive, processCommandLine, processStartTime } from "../shared/process.js";

/**
 * The single-daemon lock: `$AGENT_HOME/daemon.lock` holds the owner's pid and, where /proc
 * tells it, the owner's start time. Created with O_EXCL so two starting daemons cannot both
 * win; a lock whose owner is gone (a daemon killed with -9) is taken over, also when its pid
 * now belongs to another process (told by the start time, or for a lock without one, by the
 * command line not being a daemon's).
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

/** The lock's start-time line, when it has one. */
function readLockStartTime(file: string): string | null {
  try {
    return readFileSync(file, "utf8").split("\n")[1]?.trim() || null;
  } catch {
    return null;
  }
}

/**
 * Whether the process named by the lock is the daemon that wrote it: alive, with the recorded
 * start time (a pid reused by another process has another); a lock without one (older daemons,
 * or no /proc) is believed when the process's command line is a daemon's, or cannot be read.
 */
export function lockOwnerAlive(file: string): boolean {
  const pid = readLockPid(file);
  if (pid === null || !isAlive(pid)) return false;
  const recorded = readLockStartTime(file);
  const now = processStartTime(pid);
  if (recorded && now) return recorded === now;
  const cmd = processCommandLine(pid);
  return cmd === null || /daemon[/\\]main\.(js|ts)|agentd/.test(cmd);
}

export { isAlive };

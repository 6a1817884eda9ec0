import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { AgentError } from "../shared/errors.js";
import { isAlive } from "../shared/process.js";

/**
 * The single-daemon lock: `$AGENT_HOME/daemon.lock` holds the owner's pid. Created with O_EXCL
 * so two starting daemons cannot both win; a lock whose pid is gone (a daemon killed with -9)
 * is taken over.
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
      if (owner !== null && owner !== this.pid && isAlive(owner)) {
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

export { isAlive };

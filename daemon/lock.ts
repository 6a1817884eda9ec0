import { AgentError } from "../shared/errors.js";
import { isAlive } from "../shared/process.js";
import { lockOwnerAlive as ownerAlive, readLockPid, releaseLock, removeStaleLock, tryCreateLock } from "./store/file-lock.js";

/** The command line of a daemon (a lock without a start time, written by an older daemon, is believed only for one). */
const DAEMON_COMMAND = /daemon[/\\]main\.[cm]?[jt]s\b|^agentd\b/;

/**
 * The single-daemon lock: `$AGENT_HOME/daemon.lock`, a lock file of the project's one lock kit
 * (daemon/store/file-lock.ts: pid and start time, created with O_EXCL so two starting daemons
 * cannot both win). A lock whose owner is gone (a daemon killed with -9) is taken over, also
 * when its pid now belongs to another process (see lockOwnerAlive).
 */
export class DaemonLock {
  private held = false;

  constructor(
    readonly file: string,
    readonly pid = process.pid,
  ) {}

  acquire(): void {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (tryCreateLock(this.file, this.pid)) {
        this.held = true;
        return;
      }
      const owner = readLockPid(this.file);
      if (owner !== null && owner !== this.pid && lockOwnerAlive(this.file)) {
        throw new AgentError("daemon.already_running", `a daemon is already running for this home (pid ${owner})`, { pid: owner });
      }
      // Stale (owner dead), unreadable (a crash between create and write) or our own pid's: take it over.
      if (owner === this.pid) releaseLock(this.file, this.pid);
      // A lock without its owner line is young (being written, where the file system has no hard
      // links: file-lock.ts) or a crash's: the first is waited for, as any lock's is.
      else removeStaleLock(this.file, { legacyCommand: DAEMON_COMMAND });
    }
    throw new AgentError("daemon.lock_failed", `could not take the lock ${this.file}`);
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    releaseLock(this.file, this.pid);
  }
}

/** Whether the daemon named by the lock is alive (see daemon/store/file-lock.ts lockOwnerAlive). */
export function lockOwnerAlive(file: string): boolean {
  return ownerAlive(file, DAEMON_COMMAND);
}

export { isAlive, readLockPid };

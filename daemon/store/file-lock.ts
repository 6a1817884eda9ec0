/**
 * The one cross-process lock of the project: a lock file created with O_EXCL that holds its
 * owner's pid on the first line and, where /proc tells it, the owner's start time on the second
 * (so a pid reused by another process after the owner died does not keep the lock). Two kinds
 * of holder use it:
 * - the single-daemon lock (daemon/lock.ts), taken once for the daemon's life;
 * - `withFileLock`, around a read-change-replace of a file that more than one process writes
 *   (auth.json: `agent auth login` in the daemon, a refresh in a kanban worker or a second
 *   daemon thread), so none loses another's change.
 *
 * A lock whose owner is gone (killed with -9, a crash) is taken over. The takeover itself is
 * guarded (`<lock>.takeover`, created with O_EXCL and held for a few synchronous calls), so two
 * processes that both find the lock stale cannot each remove the other's fresh lock.
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { AgentError } from "../../shared/errors.js";
import { isAlive, processCommandLine, processStartTime } from "../../shared/process.js";

/** A lock file found empty (created, its owner line not written yet) counts as held this long. */
const EMPTY_GRACE_MS = 5_000;

/** The owner line(s) a lock file of `pid` holds. */
function ownerText(pid: number): string {
  const started = processStartTime(pid);
  return `${pid}\n${started ? `${started}\n` : ""}`;
}

/**
 * Create the lock file with this process as its owner. True when it was created; false when it
 * exists (whoever holds it). Other errors (a missing directory, EACCES) are thrown.
 */
export function tryCreateLock(file: string, pid = process.pid): boolean {
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, ownerText(pid));
  } finally {
    closeSync(fd);
  }
  return true;
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
 * Whether the process named by the lock is the one that wrote it; its pid may have been reused
 * since that process died. Where /proc tells: a recorded start time must be the process's
 * (clock ticks since boot: no wall-clock jump changes them). A lock without one is believed
 * when `legacyCommand` is unset or matches the process's command line (an older daemon's lock).
 * Without /proc a live pid is believed.
 */
export function lockOwnerAlive(file: string, legacyCommand?: RegExp): boolean {
  const pid = readLockPid(file);
  if (pid === null || !isAlive(pid)) return false;
  const recorded = readLockStartTime(file);
  const now = processStartTime(pid);
  if (recorded && now) return recorded === now;
  if (!legacyCommand) return true;
  const cmd = processCommandLine(pid);
  return cmd === null || legacyCommand.test(cmd);
}

export interface StaleRules {
  /** See lockOwnerAlive. */
  legacyCommand?: RegExp;
  /** A lock file without an owner line counts as being written (held) this long after its last change (default 5 s). */
  emptyGraceMs?: number;
}

/** True when the lock file exists and is held: by a live owner, or being written (no owner line yet, and young). */
function lockHeld(file: string, rules: StaleRules = {}): boolean {
  const st = statSync(file, { throwIfNoEntry: false });
  if (!st) return false;
  if (readLockPid(file) === null) return Date.now() - st.mtimeMs < (rules.emptyGraceMs ?? EMPTY_GRACE_MS);
  return lockOwnerAlive(file, rules.legacyCommand);
}

/**
 * Remove the lock file when its owner is gone. The check and the removal run under
 * `<file>.takeover` (O_EXCL, synchronous, so held for microseconds; one left by a process that
 * died inside it is removed when its owner is gone): a lock created in between by a live
 * process is seen as held and stays. True when the lock is free now (removed, or absent).
 */
export function removeStaleLock(file: string, rules: StaleRules = {}): boolean {
  const guard = `${file}.takeover`;
  if (!tryCreateLock(guard)) {
    if (lockHeld(guard)) return false;
    try {
      unlinkSync(guard);
    } catch {}
    if (!tryCreateLock(guard)) return false;
  }
  try {
    if (lockHeld(file, rules)) return false;
    try {
      unlinkSync(file);
    } catch {}
    return true;
  } finally {
    try {
      unlinkSync(guard);
    } catch {}
  }
}

/** Remove the lock file if this process owns it. */
export function releaseLock(file: string, pid = process.pid): void {
  try {
    if (readLockPid(file) === pid) unlinkSync(file);
  } catch {}
}

export interface FileLockOptions {
  /** Give up (`storage.lock_timeout`) after waiting this long for another holder (default 15 s). */
  timeoutMs?: number;
  /** What the lock protects, for the error ("auth.json"). */
  what?: string;
}

/** Locks held by this process, by lock file: a second caller in the same process waits its turn here. */
const held = new Map<string, Promise<void>>();

/**
 * Run `fn` holding `<file>.lock`: no other process (nor any other caller in this one) runs a
 * `withFileLock` of the same file meanwhile. Waits for a live holder (polling, from 2 ms up to
 * 50 ms), takes over a dead one's lock, and throws `storage.lock_timeout` after `timeoutMs`.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const lock = `${file}.lock`;
  const previous = held.get(lock) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const tail = previous.then(() => mine);
  held.set(lock, tail);
  try {
    await previous;
    await acquire(lock, options);
    try {
      return await fn();
    } finally {
      releaseLock(lock);
    }
  } finally {
    done();
    if (held.get(lock) === tail) held.delete(lock);
  }
}

async function acquire(lock: string, options: FileLockOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const deadline = Date.now() + timeoutMs;
  let wait = 2;
  for (;;) {
    if (tryCreateLock(lock)) return;
    if (!lockHeld(lock) && removeStaleLock(lock) && tryCreateLock(lock)) return;
    if (Date.now() >= deadline) {
      const owner = readLockPid(lock);
      throw new AgentError(
        "storage.lock_timeout",
        `${options.what ?? lock} stayed locked by another process${owner ? ` (pid ${owner})` : ""} for ${Math.round(timeoutMs / 1000)} s; if no agent process is running, remove ${lock}`,
        { file: lock },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(50, wait * 2);
  }
}

/**
 * The one cross-process lock of the project: a lock file created exclusively that holds its
 * owner's pid on the first line and, where /proc tells it, the owner's start time on the second
 * (so a pid reused by another process after the owner died does not keep the lock). Two kinds
 * of holder use it:
 * - the single-daemon lock (daemon/lock.ts), taken once for the daemon's life;
 * - `withFileLock`, around a read-change-replace of a file that more than one process writes
 *   (auth.json: `agent auth login` in the daemon, a refresh in a kanban worker or a second
 *   daemon thread), so none loses another's change.
 *
 * A lock whose owner is gone (killed with -9, a crash) is taken over. The takeover itself is
 * guarded (`<lock>.takeover`, created like a lock and held for a few synchronous calls), so two
 * processes that both find the lock stale cannot each remove the other's fresh lock.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { AgentError } from "../../shared/errors.js";
import { isAlive, processCommandLine, processStartTime } from "../../shared/process.js";

/** A lock file found empty (written by an older build, which created it before writing) counts as held this long. */
const EMPTY_GRACE_MS = 5_000;

/** The owner line(s) a lock file of `pid` holds. */
function ownerText(pid: number): string {
  const started = processStartTime(pid);
  return `${pid}\n${started ? `${started}\n` : ""}`;
}

/**
 * Create the lock file with this process as its owner. True when it was created; false when it
 * exists (whoever holds it). Other errors (a missing directory, EACCES) are thrown.
 *
 * The owner lines are written to a file of this call's own first and linked to the lock's name
 * (link fails when the name exists, like O_EXCL): the lock never exists without its owner, so
 * no reader ever finds it empty and takes a lock being written for a crash's.
 */
export function tryCreateLock(file: string, pid = process.pid): boolean {
  // A name temp-cleanup.ts knows (a kill -9 between the write and the link leaves it).
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    try {
      writeSync(fd, ownerText(pid));
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A file system without hard links: O_EXCL, the owner written just after.
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
      const direct = openSync(file, "wx", 0o600);
      try {
        writeSync(direct, ownerText(pid));
      } finally {
        closeSync(direct);
      }
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {}
  }
}

/** One version of a lock file, read through one descriptor: its owner, its start time, its inode and age. */
interface LockRead {
  pid: number | null;
  started: string | null;
  ino: number;
  mtimeMs: number;
}

/**
 * Read the lock file once. Every decision about a lock is made from one read: two reads may see
 * two different locks (released and taken again in between), and a decision mixing them took a
 * live lock for a dead one. Null when there is no lock file; other errors are thrown.
 */
function readLock(file: string): LockRead | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const st = fstatSync(fd);
    const [first, second] = readFileSync(fd, "utf8").split("\n");
    const pid = Number.parseInt(first?.trim() ?? "", 10);
    return { pid: Number.isInteger(pid) && pid > 0 ? pid : null, started: second?.trim() || null, ino: st.ino, mtimeMs: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

/**
 * The pid a lock file names: null when there is no lock file, NaN when it names none. Errors
 * other than its absence (EMFILE, EACCES) are thrown: the caller tells them from a removal.
 */
export function lockFilePid(file: string): number | null {
  const lock = readLock(file);
  return lock === null ? null : (lock.pid ?? Number.NaN);
}

export function readLockPid(file: string): number | null {
  try {
    return readLock(file)?.pid ?? null;
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
function ownerAlive(lock: LockRead, legacyCommand?: RegExp): boolean {
  if (lock.pid === null || !isAlive(lock.pid)) return false;
  const now = processStartTime(lock.pid);
  if (lock.started && now) return lock.started === now;
  if (!legacyCommand) return true;
  const cmd = processCommandLine(lock.pid);
  return cmd === null || legacyCommand.test(cmd);
}

/** See ownerAlive; false when there is no lock file or it cannot be read. */
export function lockOwnerAlive(file: string, legacyCommand?: RegExp): boolean {
  try {
    const lock = readLock(file);
    return lock !== null && ownerAlive(lock, legacyCommand);
  } catch {
    return false;
  }
}

export interface StaleRules {
  /** See ownerAlive. */
  legacyCommand?: RegExp;
  /** A lock file without an owner line counts as held this long after its last change (default 5 s). */
  emptyGraceMs?: number;
}

/** Whether this version of the lock is held: by a live owner, or (no owner line) young. */
function held(lock: LockRead, rules: StaleRules): boolean {
  if (lock.pid === null) return Date.now() - lock.mtimeMs < (rules.emptyGraceMs ?? EMPTY_GRACE_MS);
  return ownerAlive(lock, rules.legacyCommand);
}

/**
 * Remove `file` when it is stale; true when it is free now (removed, or absent). An absent file
 * is never unlinked: a live process may create it between the check and the unlink (creating
 * needs no guard), and unlinking that fresh lock would let two holders in. A stale version is
 * removed only while the name still holds that version (its inode).
 */
function unlinkIfStale(file: string, rules: StaleRules = {}): boolean {
  const lock = readLock(file);
  if (lock === null) return true;
  if (held(lock, rules)) return false;
  if (statSync(file, { throwIfNoEntry: false })?.ino !== lock.ino) return false;
  try {
    unlinkSync(file);
  } catch {}
  return true;
}

/**
 * Remove the lock file when its owner is gone. The check and the removal run under
 * `<file>.takeover` (created like a lock, synchronous, so held for microseconds; one left by a
 * process that died inside it is removed when its owner is gone), so two processes that both
 * find the lock stale cannot each remove the other's fresh lock. True when the lock is free now
 * (removed, or absent).
 */
export function removeStaleLock(file: string, rules: StaleRules = {}): boolean {
  const guard = `${file}.takeover`;
  if (!tryCreateLock(guard)) {
    // A stale guard is removed, never taken in the same call: its removal is not itself guarded
    // (another process may replace it between our check and our unlink, and be inside while we
    // would be too); the next poll takes the free guard.
    unlinkIfStale(guard);
    return false;
  }
  try {
    return unlinkIfStale(file, rules);
  } finally {
    releaseLock(guard);
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
const queued = new Map<string, Promise<void>>();

/**
 * Run `fn` holding `<file>.lock`: no other process (nor any other caller in this one) runs a
 * `withFileLock` of the same file meanwhile. Waits for a live holder (polling, from 2 ms up to
 * 50 ms), takes over a dead one's lock, and throws `storage.lock_timeout` after `timeoutMs`.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const lock = `${file}.lock`;
  const previous = queued.get(lock) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const tail = previous.then(() => mine);
  queued.set(lock, tail);
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
    if (queued.get(lock) === tail) queued.delete(lock);
  }
}

async function acquire(lock: string, options: FileLockOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const deadline = Date.now() + timeoutMs;
  let wait = 2;
  for (;;) {
    if (tryCreateLock(lock)) return;
    if (removeStaleLock(lock) && tryCreateLock(lock)) return;
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

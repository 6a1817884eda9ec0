/**
 * A daemon whose home was removed (`rm -rf ~/.agent`, a test's temp home cleaned up) or taken by
 * another daemon has nothing left to own: its socket and lock are gone, no client can reach it,
 * and it would run until the machine restarts. Every few seconds it reads its lock file; when
 * the file is gone or names another process, `onGone` runs. Any other read error (EMFILE under
 * load, say) is not taken for a removal.
 */
import { lockFilePid } from "./store/file-lock.js";

export function watchHomeRemoved(lockFile: string, onGone: (why: string) => void, intervalMs: number): () => void {
  const timer = setInterval(() => {
    let why: string | null = null;
    try {
      const pid = lockFilePid(lockFile);
      if (pid === null) why = `the lock file ${lockFile} was removed`;
      else if (pid !== process.pid) why = `the lock file ${lockFile} now names pid ${pid}`;
    } catch {}
    if (why === null) return;
    clearInterval(timer);
    onGone(why);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

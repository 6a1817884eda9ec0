/**
 * Makes the staging's hard links for a backup (stage.ts) off the daemon's event loop: the first
 * pass lists the home's folders on the main thread and sends each folder's rename-only files
 * here; at 40,000 files the `link` calls were most of the main thread's time during a backup.
 * Answers each batch with the indexes of the files gone since the listing (ENOENT), or the
 * first other error (EXDEV, EPERM: no hard links here).
 */
import { linkSync } from "node:fs";
import { lowerThreadPriority } from "../thread-script.js";
import { parentPort } from "node:worker_threads";

export interface LinkBatch {
  id: number;
  /** [source, destination] pairs. */
  pairs: [string, string][];
}
export type LinkAnswer = { id: number; vanished: number[] } | { id: number; error: { code?: string; message: string } };

// Bulk work: the event loop of the daemon goes first on a busy machine.
lowerThreadPriority();

parentPort?.on("message", ({ id, pairs }: LinkBatch) => {
  const vanished: number[] = [];
  for (let i = 0; i < pairs.length; i++) {
    try {
      linkSync(pairs[i]![0], pairs[i]![1]);
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      if (e.code === "ENOENT") {
        vanished.push(i);
        continue;
      }
      parentPort?.postMessage({ id, error: { code: e.code, message: e.message } } satisfies LinkAnswer);
      return;
    }
  }
  parentPort?.postMessage({ id, vanished } satisfies LinkAnswer);
});

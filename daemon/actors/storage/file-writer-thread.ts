/**
 * The batch writer's thread (batch-writer.ts): replaces many small files per message with the
 * daemon's one atomic write (store/atomic-file.ts), off the main thread. The durability policy
 * lives in the main thread, so each batch says whether to fsync (`sync`); then each temp file
 * is fsynced before its rename and each directory once after the batch, not once per file.
 */
import { dirname } from "node:path";
import { parentPort } from "node:worker_threads";
import { writeFileAtomicSync } from "../../store/atomic-file.js";
import { syncDirSync } from "../../store/durability.js";

/** A batch: `items` is [file, contents, file, contents, …]. */
export interface WriterBatch {
  id: number;
  items: string[];
  sync: boolean;
}

/** What failed, by the index of the file in the batch: its message and its error code (`storage.*`) when it has one. */
export interface WriterResult {
  id: number;
  errors: Array<[number, string, string?]>;
}

function describe(error: unknown): [string, string?] {
  const e = error as { message?: unknown; code?: unknown };
  const code = typeof e?.code === "string" && e.code.includes(".") ? e.code : undefined;
  return [String(e?.message ?? error), code];
}

export function writeBatch({ id, items, sync }: WriterBatch): WriterResult {
  const errors: WriterResult["errors"] = [];
  const dirs = new Map<string, number[]>();
  for (let i = 0; i < items.length; i += 2) {
    const file = items[i]!;
    try {
      writeFileAtomicSync(file, items[i + 1]!, { fsync: sync, syncDir: false });
      if (sync) {
        const dir = dirname(file);
        const list = dirs.get(dir);
        if (list) list.push(i / 2);
        else dirs.set(dir, [i / 2]);
      }
    } catch (error) {
      errors.push([i / 2, ...describe(error)]);
    }
  }
  for (const [dir, indexes] of dirs) {
    try {
      syncDirSync(dir);
    } catch (error) {
      for (const i of indexes) errors.push([i, ...describe(error)]);
    }
  }
  return { id, errors };
}

parentPort?.on("message", (batch: WriterBatch) => parentPort!.postMessage(writeBatch(batch)));

/**
 * Folds the search index's journal into its snapshot off the daemon's event loop: it reads the
 * snapshot, applies the journal's first `lines` lines and writes the snapshot again, a removed
 * session's documents left out. Run by search-index.ts as a worker thread;
 * the daemon then drops those lines from the journal.
 */
import { parentPort, workerData } from "node:worker_threads";
import { parseJsonLines, readJournalLines } from "../../store/journal.js";
import { applyLine, emptyState, type Line, readSnapshot, writeSnapshot } from "./index-store.js";

const { snapshot, journal, lines } = workerData as { snapshot: string; journal: string; lines: number };

async function fold(): Promise<void> {
  const state = (await readSnapshot(snapshot)) ?? emptyState();
  const purged = new Set<number>();
  for (const line of parseJsonLines<Line>(await readJournalLines(journal, lines))) {
    try {
      applyLine(state, line, purged);
    } catch {}
  }
  await writeSnapshot(snapshot, state, purged);
}

fold().then(
  () => parentPort?.postMessage({ ok: true }),
  (error) => parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) }),
);

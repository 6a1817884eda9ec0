import type { Logger } from "../../log/logger.js";

export interface FolderWatch {
  close(): Promise<void>;
}

/**
 * Watch a folder (chokidar) and call `changed` once per burst of changes (debounced), so an
 * editor's save or a copied tree triggers one rescan. Resolves once the watcher is ready.
 */
export async function watchFolder(dir: string, depth: number, changed: () => void, log: Logger): Promise<FolderWatch> {
  const { watch } = await import("chokidar");
  let timer: NodeJS.Timeout | null = null;
  const w = watch(dir, { ignoreInitial: true, depth, awaitWriteFinish: { stabilityThreshold: 60, pollInterval: 20 } });
  w.on("all", () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      changed();
    }, 40);
  });
  w.on("error", (error: unknown) => log.warn("folder watcher error", { dir, error: String(error) }));
  await new Promise<void>((resolve) => w.once("ready", () => resolve()));
  return {
    close: async () => {
      if (timer) clearTimeout(timer);
      await w.close();
    },
  };
}

import type { DaemonContext, Feature } from "../context.js";
import { createBackup, removeStaleBackupTemps } from "./backup.js";

/**
 * Backups (`agent backup`, docs/backup.md): the `backup.create` method. Before the archive is
 * staged, the chat service folds its journals into their snapshots, so the archive is compact.
 * `agent import` runs with the daemon stopped (daemon/backup/import.ts), not through this feature.
 */
export function backupFeature(): Feature {
  return {
    name: "backup",
    needs: { serve: ["chat"] },
    async start(ctx: DaemonContext) {
      const stale = removeStaleBackupTemps(ctx.paths);
      if (stale.length) ctx.log.info("removed unfinished backup files", { files: stale });
      ctx.rpc.register({
        "backup.create": (p) =>
          createBackup(ctx.paths, {
            ...p,
            flush: () => ctx.services.get("chat").flush(),
            compressionLevel: ctx.config.current().backup.compression_level,
            account: (fields) => ctx.log.info("backup written", fields),
          }),
      });
    },
  };
}

import type { RpcServer } from "../rpc/server.js";
import type { Logger } from "../log/logger.js";
import { CONFIG_VERSION } from "../../shared/config/defaults.js";
import type { FileConfigSource } from "./config-source.js";

/** The config RPC group. `applied` runs after a change (log settings, features' reload hooks). */
export function registerConfigHandlers(rpc: RpcServer, config: FileConfigSource, log: Logger, applied: () => Promise<void>): void {
  rpc.register({
    "config.get": ({ key }) => ({ ...config.entry(key), file: config.file }),
    "config.list": () => ({ file: config.file, version: CONFIG_VERSION, entries: config.entries(), warnings: config.warnings }),
    "config.set": async ({ key, value }) => {
      const result = await config.set(key, value);
      log.info("config changed", { key, value: result.value, previous: result.previous });
      await applied();
      return { ...result, file: config.file, effective: config.entry(key) };
    },
    "config.migrate": async () => {
      const report = await config.migrate();
      if (report.changed) {
        log.info("config migrated", { from: report.fromVersion, to: report.toVersion, envRemoved: report.env.removed });
        await applied();
      }
      return { ...report, atStartup: config.startupMigration };
    },
  });
}

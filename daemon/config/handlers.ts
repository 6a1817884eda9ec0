import type { RpcServer } from "../rpc/server.js";
import type { Logger } from "../log/logger.js";
import { CONFIG_VERSION } from "../../shared/config/defaults.js";
import { isSecretKey } from "../../shared/config/schema.js";
import type { ConfigEntry } from "../../shared/protocol/config.js";
import type { FileConfigSource } from "./config-source.js";

/** A secret's value never leaves the daemon: readers learn whether it is set and where from. */
function redacted(entry: ConfigEntry): ConfigEntry {
  if (!isSecretKey(entry.key) || entry.value === "" || entry.value === undefined) return entry;
  return { ...entry, value: "(set, hidden)" };
}

/** The config RPC group. `applied` runs after a change (log settings, features' reload hooks). */
export function registerConfigHandlers(rpc: RpcServer, config: FileConfigSource, log: Logger, applied: () => Promise<void>): void {
  rpc.register({
    "config.get": ({ key }) => ({ ...redacted(config.entry(key)), file: config.file }),
    "config.list": () => ({ file: config.file, version: CONFIG_VERSION, entries: config.entries().map(redacted), warnings: config.warnings }),
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

import { z } from "zod";
import { rpc } from "./define.js";

export type ConfigOriginName = "default" | "file" | "env";

/** One key's effective value and where it came from. */
export interface ConfigEntry {
  key: string;
  value: unknown;
  origin: ConfigOriginName;
  /** The `AGENT_*` variable that set it, when `origin` is `env`. */
  env?: string;
}

export interface ConfigMigrationStep {
  from: number;
  to: number;
  description: string;
  notes: string[];
}

export interface ConfigMigrationReport {
  file: string;
  /** The version found, or null when there is no config.yaml (nothing to migrate). */
  fromVersion: number | null;
  toVersion: number;
  changed: boolean;
  steps: ConfigMigrationStep[];
  /** The copy of the file before migrating (`config.yaml.bak`), when it was written. */
  backup: string | null;
  env: { file: string; removed: string[]; backup: string | null };
}

/** RPC methods of the config group. The daemon is the only writer of config.yaml and .env. */
export const configMethods = {
  /** A key's effective value (a section key returns the whole section). */
  "config.get": rpc<ConfigEntry & { file: string }>()(() => z.object({ key: z.string().min(1) }).strict()),
  /** Every key's effective value, plus warnings about the file (unknown keys). */
  "config.list": rpc<{ file: string; version: number; entries: ConfigEntry[]; warnings: string[] }>()(() => z.object({}).strict()),
  /** Set a key in config.yaml; the value is typed by the key's default. Keeps config.yaml.bak. */
  "config.set": rpc<{ key: string; value: unknown; previous: unknown; file: string; backup: string | null; effective: ConfigEntry }>()(() =>
    z.object({ key: z.string().min(1), value: z.union([z.string(), z.number(), z.boolean()]) }).strict(),
  ),
  /** Migrate config.yaml (and .env) to the current version; idempotent. `atStartup` is what the daemon did when it started. */
  "config.migrate": rpc<ConfigMigrationReport & { atStartup: ConfigMigrationReport | null }>()(() => z.object({}).strict()),
};

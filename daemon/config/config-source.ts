import { Document } from "yaml";
import { CONFIG_VERSION, type AgentConfig } from "../../shared/config/defaults.js";
import { chmod, rm } from "node:fs/promises";
import { parseDotenv, setDotenvKey } from "../../shared/config/dotenv.js";
import { getPath, originOf, resolveWithOrigins, type Resolution } from "../../shared/config/resolve.js";
import { checkValue, configKeys, describeKey, isSecretKey, parseValueFor, secretHint, validateFileValues } from "../../shared/config/schema.js";
import { AgentError } from "../../shared/errors.js";
import type { ConfigEntry, ConfigMigrationReport } from "../../shared/protocol/config.js";
import type { ConfigSource } from "../context.js";
import { keepBackup, readTextOrNull, writeFileAtomic } from "./files.js";
import { migrateConfigFiles, parseConfigDocument, versionOf } from "./migrate.js";

interface Snapshot {
  fromFile: Record<string, unknown>;
  /** `.env` alone (the entries the daemon's own environment may override). */
  dotenv: Record<string, string>;
  resolution: Resolution;
  env: NodeJS.ProcessEnv;
  warnings: string[];
}

/**
 * The daemon's config: `config.yaml` + `.env` + the environment the daemon started with. The
 * daemon is the only writer of both files; writes are serialized through one queue. A load
 * that fails validation throws (at start) or keeps the previous config (on reload).
 */
export class FileConfigSource implements ConfigSource {
  private snapshot: Snapshot;
  private queue: Promise<unknown> = Promise.resolve();
  /** Keys this daemon copied from `.env` into process.env, so a reload can take them back. */
  private appliedFromDotenv = new Set<string>();
  /** What the migration at start did (reported by `config migrate`). */
  startupMigration: ConfigMigrationReport | null = null;

  private constructor(
    private readonly paths: { config: string; env: string },
    /** The environment the daemon was started with; `.env` fills in what it does not set. */
    private readonly baseEnv: NodeJS.ProcessEnv,
    initial: Snapshot,
  ) {
    this.snapshot = initial;
    this.applyDotenvToProcess();
  }

  /** Migrate the files forward if needed, then read and validate them. */
  static async load(paths: { config: string; env: string }, baseEnv: NodeJS.ProcessEnv = { ...process.env }): Promise<FileConfigSource> {
    const migration = await migrateConfigFiles(paths);
    const source = new FileConfigSource(paths, baseEnv, await readSnapshot(paths, baseEnv));
    source.startupMigration = migration.changed ? migration : null;
    return source;
  }

  /** Read and validate the files without migrating or writing them (a kanban worker; the daemon migrated them at its start). */
  static async read(paths: { config: string; env: string }, baseEnv: NodeJS.ProcessEnv = { ...process.env }): Promise<FileConfigSource> {
    return new FileConfigSource(paths, baseEnv, await readSnapshot(paths, baseEnv));
  }

  current(): AgentConfig {
    return this.snapshot.resolution.config;
  }

  /** The daemon's view of the environment: its own, with `.env` filling the gaps. */
  env(): NodeJS.ProcessEnv {
    return this.snapshot.env;
  }

  get file(): string {
    return this.paths.config;
  }

  get warnings(): string[] {
    return this.snapshot.warnings;
  }

  /** Re-read config.yaml and .env (SIGHUP, `daemon.reload`). On error the previous config stays. */
  reload(): Promise<AgentConfig> {
    return this.serialize(async () => {
      await migrateConfigFiles(this.paths);
      this.snapshot = await readSnapshot(this.paths, this.baseEnv);
      this.applyDotenvToProcess();
      return this.current();
    });
  }

  entry(key: string): ConfigEntry {
    const info = describeKey(key);
    const value = getPath(this.current(), key);
    if (!info || value === undefined) throw unknownKey(key);
    return { key, value, ...toOrigin(originOf(key, this.snapshot.fromFile, this.snapshot.resolution)) };
  }

  entries(): ConfigEntry[] {
    const providerKeys = Object.entries(this.current().providers ?? {}).flatMap(([name, p]) => Object.keys(p ?? {}).map((f) => `providers.${name}.${f}`));
    return [...configKeys(), ...providerKeys].map((key) => this.entry(key));
  }

  /** Set one key in config.yaml (typed by its default), keeping comments and config.yaml.bak. */
  set(key: string, raw: string | number | boolean): Promise<{ key: string; value: unknown; previous: unknown; backup: string | null }> {
    return this.serialize(async () => {
      const value = valueFor(key, raw);
      await migrateConfigFiles(this.paths);
      const result = await writeKey(this.paths.config, key, value, (fromFile) => resolveWithOrigins(fromFile, this.snapshot.env, checkValue));
      this.snapshot = await readSnapshot(this.paths, this.baseEnv);
      return result;
    });
  }

  /**
   * Set one key in a profile's config.yaml, typed and checked as `set` does, the check being
   * on the profile's file merged over the home's (what `layered` will read). The caller drops
   * its cached view of the profile.
   */
  setLayered(
    paths: { config: string; env: string },
    key: string,
    raw: string | number | boolean,
  ): Promise<{ key: string; value: unknown; previous: unknown; backup: string | null }> {
    return this.serialize(async () => {
      const value = valueFor(key, raw);
      const home = this.snapshot;
      const dotenv = parseDotenv((await readTextOrNull(paths.env)) ?? "");
      const env = { ...home.dotenv, ...dotenv, ...this.baseEnv };
      return writeKey(paths.config, key, value, (own) => resolveWithOrigins(mergeFileValues(structuredClone(home.fromFile), own), env, checkValue));
    });
  }

  /**
   * A profile's effective config: its config.yaml merged over the home's (mappings key by key),
   * its `.env` over the home's, and the daemon's own environment over both, as for the home.
   * Read only: a profile's files are validated like the home's, an invalid one is an error
   * naming the file.
   */
  async layered(paths: { config: string; env: string }): Promise<LayeredConfig> {
    const home = this.snapshot;
    const text = await readTextOrNull(paths.config);
    let own: Record<string, unknown> = {};
    if (text !== null && text.trim() !== "") {
      const doc = parseConfigDocument(text, paths.config);
      versionOf(doc, paths.config);
      own = (doc.toJS() ?? {}) as Record<string, unknown>;
    }
    const warnings = validateFileValues(own, paths.config);
    const fromFile = mergeFileValues(structuredClone(home.fromFile), own);
    const dotenv = parseDotenv((await readTextOrNull(paths.env)) ?? "");
    const env = { ...home.dotenv, ...dotenv, ...this.baseEnv };
    const resolution = resolveWithOrigins(fromFile, env, checkValue);
    return { current: () => resolution.config, env: () => env, warnings };
  }

  /** Run the migrations now (idempotent). */
  migrate(): Promise<ConfigMigrationReport> {
    return this.serialize(async () => {
      const report = await migrateConfigFiles(this.paths);
      if (report.changed) {
        this.snapshot = await readSnapshot(this.paths, this.baseEnv);
        this.applyDotenvToProcess();
      }
      return report;
    });
  }

  /**
   * Guided set-up's write: `providers.<name>` (base_url, model, api_key_env) and `model.provider`
   * in config.yaml through its YAML Document (comments kept), dropping `model.name` and
   * `model.base_url`, which would override the chosen provider; the key, if given, in `.env`
   * (0600). Everything is checked before either file changes; `.env` is written first and put
   * back if config.yaml cannot be, so a failure changes nothing.
   */
  applyProvider(plan: {
    name: string;
    entry: { base_url: string; model: string; api_key_env?: string };
    key: { env: string; value: string } | null;
  }): Promise<{ removed: string[]; backup: string | null }> {
    return this.serialize(async () => {
      await migrateConfigFiles(this.paths);
      const file = this.paths.config;
      const text = await readTextOrNull(file);
      const doc = text === null || text.trim() === "" ? new Document({ _config_version: CONFIG_VERSION }) : parseConfigDocument(text, file);
      if (text !== null) versionOf(doc, file);
      if (!doc.has("_config_version")) doc.set("_config_version", CONFIG_VERSION);
      const removed: string[] = [];
      for (const key of ["model.name", "model.base_url"]) {
        if (doc.getIn(key.split(".")) === undefined) continue;
        doc.deleteIn(key.split("."));
        removed.push(key);
      }
      doc.setIn(["model", "provider"], plan.name);
      doc.setIn(["providers", plan.name], doc.createNode({ ...plan.entry }));
      const fromFile = (doc.toJS() ?? {}) as Record<string, unknown>;
      validateFileValues(fromFile, file);
      const envText = await readTextOrNull(this.paths.env);
      const env = { ...this.snapshot.env };
      if (plan.key) env[plan.key.env] = plan.key.value;
      resolveWithOrigins(fromFile, env, checkValue);
      if (plan.key) {
        await writeFileAtomic(this.paths.env, setDotenvKey(envText ?? "", plan.key.env, plan.key.value), 0o600);
        await chmod(this.paths.env, 0o600);
      }
      let backup: string | null = null;
      try {
        backup = text === null ? null : await keepBackup(file);
        await writeFileAtomic(file, doc.toString(), 0o600);
      } catch (error) {
        if (plan.key) {
          if (envText === null) await rm(this.paths.env, { force: true }).catch(() => undefined);
          else await writeFileAtomic(this.paths.env, envText, 0o600).catch(() => undefined);
        }
        throw error;
      }
      this.snapshot = await readSnapshot(this.paths, this.baseEnv);
      this.applyDotenvToProcess();
      return { removed, backup };
    });
  }

  /**
   * Set (or, with `undefined`, delete) a whole subtree such as `mcp_servers.<name>` in the home's
   * config.yaml (`paths` null) or a profile's, through its YAML Document (comments kept). The
   * result is validated as a whole before the file is touched; the previous file is kept as
   * `<file>.bak`. Returns what was there before.
   */
  writeTree(paths: { config: string; env: string } | null, path: string[], value: unknown): Promise<{ file: string; previous: unknown }> {
    return this.serialize(async () => {
      if (!paths) await migrateConfigFiles(this.paths);
      const file = paths?.config ?? this.paths.config;
      const text = await readTextOrNull(file);
      const doc = text === null || text.trim() === "" ? new Document({ _config_version: CONFIG_VERSION }) : parseConfigDocument(text, file);
      if (text !== null) versionOf(doc, file);
      if (!doc.has("_config_version")) doc.set("_config_version", CONFIG_VERSION);
      const previous = doc.getIn(path);
      // Deleting what is not there changes nothing (the file is not rewritten).
      if (value === undefined && previous === undefined) return { file, previous: undefined };
      if (value === undefined) doc.deleteIn(path);
      else doc.setIn(path, doc.createNode(value));
      const fromFile = (doc.toJS() ?? {}) as Record<string, unknown>;
      validateFileValues(fromFile, file);
      if (text !== null) await keepBackup(file);
      await writeFileAtomic(file, doc.toString(), 0o600);
      if (!paths) this.snapshot = await readSnapshot(this.paths, this.baseEnv);
      return { file, previous: previous && typeof previous === "object" && "toJSON" in previous ? (previous as { toJSON(): unknown }).toJSON() : previous };
    });
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Features and spawned workers read secrets from process.env, so `.env` values the daemon's
   * own environment lacks are copied there, and taken back when `.env` loses them.
   */
  private applyDotenvToProcess(): void {
    const next = new Set<string>();
    for (const [name, value] of Object.entries(this.snapshot.env)) {
      if (this.baseEnv[name] !== undefined) continue;
      process.env[name] = value;
      next.add(name);
    }
    for (const name of this.appliedFromDotenv) if (!next.has(name)) delete process.env[name];
    this.appliedFromDotenv = next;
  }
}

/** The typed value of a settable key, or a clear error (secrets, unknown keys, sections). */
function valueFor(key: string, raw: string | number | boolean): unknown {
  if (isSecretKey(key)) throw new AgentError("config.secret_key", secretHint(key), { key });
  const info = describeKey(key);
  if (!info) throw unknownKey(key);
  if (info.kind === "section") {
    throw new AgentError("config.not_a_value", `${key} is a section, not a value${info.children.length ? `; set one of ${info.children.join(", ")}` : ""}`, {
      key,
    });
  }
  return parseValueFor(key, raw);
}

/**
 * Set `key` in the config.yaml `file` through its YAML Document (comments kept). The whole
 * result is validated (`resolve` checks it in its context) before the file is touched, so a
 * set never leaves an unloadable config; the previous file is kept as `<file>.bak`.
 */
async function writeKey(
  file: string,
  key: string,
  value: unknown,
  resolve: (fromFile: Record<string, unknown>) => unknown,
): Promise<{ key: string; value: unknown; previous: unknown; backup: string | null }> {
  const text = await readTextOrNull(file);
  const doc = text === null || text.trim() === "" ? new Document({ _config_version: CONFIG_VERSION }) : parseConfigDocument(text, file);
  if (text !== null) versionOf(doc, file);
  if (!doc.has("_config_version")) doc.set("_config_version", CONFIG_VERSION);
  const previous = doc.getIn(key.split("."));
  doc.setIn(key.split("."), value);
  const fromFile = (doc.toJS() ?? {}) as Record<string, unknown>;
  validateFileValues(fromFile, file);
  resolve(fromFile);
  const backup = text === null ? null : await keepBackup(file);
  await writeFileAtomic(file, doc.toString(), 0o600);
  return { key, value, previous: previous === undefined ? null : previous, backup };
}

async function readSnapshot(paths: { config: string; env: string }, baseEnv: NodeJS.ProcessEnv): Promise<Snapshot> {
  const text = await readTextOrNull(paths.config);
  let fromFile: Record<string, unknown> = {};
  if (text !== null && text.trim() !== "") {
    const doc = parseConfigDocument(text, paths.config);
    versionOf(doc, paths.config);
    fromFile = (doc.toJS() ?? {}) as Record<string, unknown>;
  }
  const warnings = validateFileValues(fromFile, paths.config);
  const dotenv = parseDotenv((await readTextOrNull(paths.env)) ?? "");
  const env = { ...dotenv, ...baseEnv };
  const resolution = resolveWithOrigins(fromFile, env, checkValue);
  return { fromFile, dotenv, resolution, env, warnings };
}

/** A profile's effective config: its files layered over the home's. */
export interface LayeredConfig {
  current(): AgentConfig;
  env(): NodeJS.ProcessEnv;
  warnings: string[];
}

/** `over` merged into `base`: mappings key by key, anything else replaced. */
function mergeFileValues(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(over)) {
    if (key === "_config_version") continue;
    const cur = base[key];
    const isMap = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);
    base[key] = isMap(value) && isMap(cur) ? mergeFileValues(cur as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return base;
}

function toOrigin(o: { origin: ConfigEntry["origin"]; env?: string }): Pick<ConfigEntry, "origin" | "env"> {
  return o.env ? { origin: o.origin, env: o.env } : { origin: o.origin };
}

function unknownKey(key: string): AgentError {
  const section = key.split(".")[0]!;
  const near = configKeys().filter((k) => k.startsWith(section + "."));
  const hint = near.length
    ? `; keys of ${section}: ${near.join(", ")}`
    : `; sections: ${[...new Set(configKeys().map((k) => k.split(".")[0]))].join(", ")}, providers`;
  return new AgentError("config.unknown_key", `unknown config key ${key}${hint}`, { key });
}

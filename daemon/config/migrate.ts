import { parseDocument, type Document } from "yaml";
import { CONFIG_VERSION } from "../../shared/config/defaults.js";
import { CONFIG_MIGRATIONS, OLDEST_CONFIG_VERSION, type MigrationState } from "../../shared/config/migrations.js";
import { AgentError } from "../../shared/errors.js";
import type { ConfigMigrationReport } from "../../shared/protocol/config.js";
import { keepBackup, readTextOrNull, writeFileAtomic } from "./files.js";

/** Parse config.yaml text into a Document (comments kept); YAML errors name the file and line. */
export function parseConfigDocument(text: string, file: string): Document {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new AgentError("config.invalid_yaml", `${file} is not valid YAML: ${doc.errors[0]!.message}`, { file });
  }
  const contents = doc.toJS();
  if (contents !== null && contents !== undefined && (typeof contents !== "object" || Array.isArray(contents))) {
    throw new AgentError("config.invalid_yaml", `${file} must hold a mapping of keys`, { file });
  }
  return doc;
}

/** The file's `_config_version`; a file without one is taken as current (written by hand, or by us before any step existed). */
export function versionOf(doc: Document, file: string): number {
  const v = doc.get("_config_version");
  if (v === undefined || v === null) return CONFIG_VERSION;
  if (!Number.isInteger(v))
    throw new AgentError("config.invalid_value", `${file}: _config_version must be an integer, got ${JSON.stringify(v)}`, { key: "_config_version", file });
  const version = v as number;
  if (version > CONFIG_VERSION) {
    throw new AgentError(
      "config.version_too_new",
      `${file} is at config version ${version}, newer than this agent knows (${CONFIG_VERSION}); upgrade agent or restore ${file}.bak`,
      { file, fileVersion: version, knownVersion: CONFIG_VERSION },
    );
  }
  if (version < OLDEST_CONFIG_VERSION) {
    throw new AgentError("config.version_unsupported", `${file} is at config version ${version}; migrations exist from version ${OLDEST_CONFIG_VERSION} on`, {
      file,
      fileVersion: version,
    });
  }
  return version;
}

/**
 * Step config.yaml (and .env) forward to CONFIG_VERSION, one version at a time. Idempotent: a
 * current file is left untouched. `.env` is written first and config.yaml last, so a crash in
 * between leaves the old version number and the next run repeats the (idempotent) steps.
 */
export async function migrateConfigFiles(paths: { config: string; env: string }): Promise<ConfigMigrationReport> {
  const report: ConfigMigrationReport = {
    file: paths.config,
    fromVersion: null,
    toVersion: CONFIG_VERSION,
    changed: false,
    steps: [],
    backup: null,
    env: { file: paths.env, removed: [], backup: null },
  };
  const text = await readTextOrNull(paths.config);
  if (text === null) return report;
  const doc = parseConfigDocument(text, paths.config);
  const from = versionOf(doc, paths.config);
  report.fromVersion = from;
  if (from === CONFIG_VERSION) return report;

  const envBefore = await readTextOrNull(paths.env);
  const state: MigrationState = { doc, env: envBefore, notes: [], envRemoved: [] };
  for (let at = from; at < CONFIG_VERSION; at++) {
    const step = CONFIG_MIGRATIONS.find((m) => m.from === at);
    if (!step) throw new AgentError("config.no_migration", `no config migration from version ${at} to ${at + 1}`, { file: paths.config });
    state.notes = [];
    step.run(state);
    doc.set("_config_version", at + 1);
    report.steps.push({ from: at, to: at + 1, description: step.description, notes: state.notes });
  }

  if (envBefore !== null && state.env !== envBefore) {
    report.env.backup = await keepBackup(paths.env);
    await writeFileAtomic(paths.env, state.env ?? "", 0o600);
    report.env.removed = state.envRemoved;
  }
  report.backup = await keepBackup(paths.config);
  await writeFileAtomic(paths.config, doc.toString(), 0o600);
  report.changed = true;
  return report;
}

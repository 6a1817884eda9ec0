import { isMap, isScalar, type Document } from "yaml";
import { removeDotenvKeys } from "./dotenv.js";

/**
 * Config migrations: each step takes a file of version `from` to `from + 1`. They edit the
 * parsed YAML Document in place (so comments stay with their keys) and may edit `.env` text.
 * The runner (daemon/config/migrate.ts) applies them one at a time and writes the result.
 */
export interface MigrationState {
  doc: Document;
  /** `.env` contents, or null when there is none. */
  env: string | null;
  /** Human notes of what the step changed. */
  notes: string[];
  /** `.env` keys removed so far. */
  envRemoved: string[];
}

export interface ConfigMigration {
  from: number;
  description: string;
  run(state: MigrationState): void;
}

/** The oldest version a migration path exists from. */
export const OLDEST_CONFIG_VERSION = 11;

/** Keys in `.env` that nothing reads since version 13 (the model comes from config `model.name`). */
export const DEAD_ENV_KEYS = Object.freeze(["LLM_MODEL", "OPENAI_MODEL"]);

export const CONFIG_MIGRATIONS: readonly ConfigMigration[] = Object.freeze([
  {
    from: 11,
    description: "rename display.status_bar to display.statusbar and agent.max_iterations to agent.max_turns",
    run(state) {
      renameKey(state, ["display"], "status_bar", "statusbar");
      renameKey(state, ["agent"], "max_iterations", "max_turns");
    },
  },
  {
    from: 12,
    description: `remove the dead ${DEAD_ENV_KEYS.join(" and ")} entries from .env`,
    run(state) {
      if (state.env === null) return;
      const { text, removed } = removeDotenvKeys(state.env, DEAD_ENV_KEYS);
      if (removed.length === 0) return;
      state.env = text;
      state.envRemoved.push(...removed);
      state.notes.push(`.env: removed ${removed.join(", ")} (set model.name in config.yaml to choose the model)`);
    },
  },
]);

/** Rename a key inside a mapping, keeping its value node and comments; a key already present under the new name wins. */
function renameKey(state: MigrationState, parent: string[], from: string, to: string): void {
  const map = parent.length ? state.doc.getIn(parent, true) : state.doc.contents;
  if (!isMap(map)) return;
  const pair = map.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === from);
  if (!pair) return;
  const where = [...parent, from].join(".");
  const target = [...parent, to].join(".");
  if (map.items.some((p) => (isScalar(p.key) ? p.key.value : p.key) === to)) {
    map.items.splice(map.items.indexOf(pair), 1);
    state.notes.push(`config.yaml: dropped ${where} (${target} is already set)`);
    return;
  }
  if (isScalar(pair.key)) pair.key.value = to;
  else (pair as { key: unknown }).key = to;
  state.notes.push(`config.yaml: renamed ${where} to ${target}`);
}

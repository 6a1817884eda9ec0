/**
 * The environment (issue 34 §2): every `AGENT_*` variable the product reads is declared once, in
 * shared/config/env.ts (ENV_VARS with a description and who it is for, or a config override in
 * ENV_OVERRIDES), and code reads them through its readers, not `process.env.AGENT_*`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ENV_OVERRIDES, ENV_VARS, envFlag, envNumber, envValue } from "../../shared/config/env.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TABLE = "shared/config/env.ts";
/** `AGENT_*` identifiers in the source that are not environment variables. */
const NOT_ENV = new Set(["AGENT_STATE_NAMES"]);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith(".ts")) out.push(p);
  }
  return out;
}
const FILES = ["daemon", "shared", "cli", "tui"].flatMap(sources).filter((f) => f !== TABLE);

test("no AGENT_* variable is read straight from process.env outside the table", () => {
  const offenders: string[] = [];
  for (const f of FILES) {
    readFileSync(join(ROOT, f), "utf8")
      .split("\n")
      .forEach((line, i) => {
        // Setting one for a child process (the CLI's --profile) is not a read.
        if (/process\.env(\.AGENT_\w+\b|\["AGENT_\w+"\])(?!\s*=[^=])/.test(line)) offenders.push(`${f}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.equal(offenders, []);
});

test("every AGENT_* name in the source is declared in the table, with a description", () => {
  const declared = new Set<string>([...Object.keys(ENV_VARS), ...ENV_OVERRIDES.map(([name]) => name)]);
  const missing = new Set<string>();
  for (const f of FILES) {
    for (const m of readFileSync(join(ROOT, f), "utf8").matchAll(/\bAGENT_[A-Z0-9_]*[A-Z0-9]\b(?!_)/g)) {
      if (!declared.has(m[0]) && !NOT_ENV.has(m[0])) missing.add(`${m[0]} (${f})`);
    }
  }
  assert.equal([...missing], []);
  for (const [name, v] of Object.entries(ENV_VARS)) {
    assert.ok(v.about.length > 10, `${name} has a description`);
    assert.ok(["user", "process", "test"].includes(v.use), `${name}: ${v.use}`);
  }
  for (const [name] of ENV_OVERRIDES) assert.not.ok(Object.hasOwn(ENV_VARS, name), `${name} is declared twice`);
  // Test-only knobs are marked as such.
  for (const name of ["AGENT_RPC_GRACE_MS", "AGENT_CRON_CLOCK_OFFSET_MS", "AGENT_PROFILE_INSTALL_PAUSE_MS", "AGENT_RUNNER_WATCHDOG_MS"] as const)
    assert.is(ENV_VARS[name].use, "test", name);
});

test("the readers: unset, blank, garbage and out-of-range values fall back", () => {
  const env = { AGENT_CRON_KEEP_RUNS: "3", AGENT_RPC_GRACE_MS: " ", AGENT_TUI_DEV_HEIGHT: "x", AGENT_DEBUG: "true", AGENT_ENV: "production" };
  assert.is(
    envNumber("AGENT_CRON_KEEP_RUNS", 200, (n) => n >= 1, env),
    3,
  );
  assert.is(
    envNumber("AGENT_CRON_KEEP_RUNS", 200, (n) => n >= 5, env),
    200,
  );
  assert.is(envNumber("AGENT_RPC_GRACE_MS", 10, undefined, env), 10);
  assert.is(envNumber("AGENT_TUI_DEV_HEIGHT", 9, undefined, env), 9);
  assert.is(envNumber("AGENT_CRON_CLOCK_OFFSET_MS", 0, undefined, env), 0);
  assert.ok(envFlag("AGENT_DEBUG", env));
  assert.not.ok(envFlag("AGENT_ACTORS_WATCH", env));
  assert.is(envValue("AGENT_ENV", env), "production");
  assert.is(envValue("AGENT_HOME", env), undefined);
});

test.run();

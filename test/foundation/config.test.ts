import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, startedHome, tempHome, waitFor } from "../helpers/cli.js";

const V11 = `# My agent settings
_config_version: 11 # bumped by agent

# How it looks
display:
  # the bar at the bottom
  status_bar: false # I like it quiet
  file_mutation_verifier: true

agent:
  max_iterations: 40 # long tasks

gateway:
  port: 7411 # fixed for my firewall
`;

const V13 = `# My agent settings
_config_version: 13 # bumped by agent

# How it looks
display:
  # the bar at the bottom
  statusbar: false # I like it quiet
  file_mutation_verifier: true

agent:
  max_turns: 40 # long tasks

gateway:
  port: 7411 # fixed for my firewall
`;

const ENV_BEFORE = `# provider keys
OPENAI_API_KEY=sk-test-123
LLM_MODEL=gpt-4o
# which model (dead since 13)
export OPENAI_MODEL="gpt-4o-mini"   # old

ANTHROPIC_API_KEY='abc'
LLM_MODEL_FALLBACK=keep-me
`;

const ENV_AFTER = `# provider keys
OPENAI_API_KEY=sk-test-123
# which model (dead since 13)

ANTHROPIC_API_KEY='abc'
LLM_MODEL_FALLBACK=keep-me
`;

function homeWith(files: Record<string, string>) {
  const h = tempHome();
  for (const [name, text] of Object.entries(files)) writeFileSync(join(h.home, name), text);
  return h;
}

async function stop(home: string) {
  await runCli(["daemon", "stop"], { home });
}

test("a config file at version 11 migrates to 13 with its comments intact", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": V11 });
  try {
    const r = await runCli(["config", "migrate", "--json"], { home });
    assert.is(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    // The daemon started on demand and migrated at start; the report says so.
    const done = report.at_startup ?? report;
    assert.is(done.from_version, 11);
    assert.is(done.to_version, 13);
    assert.equal(
      done.steps.map((s: { from: number; to: number }) => [s.from, s.to]),
      [
        [11, 12],
        [12, 13],
      ],
    );
    assert.is(readFileSync(join(home, "config.yaml"), "utf8"), V13);
    assert.is(readFileSync(join(home, "config.yaml.bak"), "utf8"), V11);
    const got = await runCli(["config", "get", "agent.max_turns", "--json"], { home });
    assert.equal(JSON.parse(got.stdout), { key: "agent.max_turns", value: 40, origin: "file", file: join(home, "config.yaml") });
  } finally {
    await stop(home);
    cleanup();
  }
});

test(".env loses exactly the two dead keys and keeps every other line and comment", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": V11, ".env": ENV_BEFORE });
  try {
    const r = await runCli(["config", "migrate", "--json"], { home });
    assert.is(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal((report.at_startup ?? report).env.removed, ["LLM_MODEL", "OPENAI_MODEL"]);
    assert.is(readFileSync(join(home, ".env"), "utf8"), ENV_AFTER);
    assert.is(readFileSync(join(home, ".env.bak"), "utf8"), ENV_BEFORE);
  } finally {
    await stop(home);
    cleanup();
  }
});

test("config migrate is idempotent: a second run changes nothing and keeps the .bak", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": V11 });
  try {
    await runCli(["config", "migrate"], { home });
    const r = await runCli(["config", "migrate", "--json"], { home });
    assert.is(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.is(report.changed, false);
    assert.equal(report.steps, []);
    assert.is(readFileSync(join(home, "config.yaml"), "utf8"), V13);
    assert.is(readFileSync(join(home, "config.yaml.bak"), "utf8"), V11);
    const human = await runCli(["config", "migrate"], { home });
    assert.match(human.stdout, /at version 13: nothing to do/);
  } finally {
    await stop(home);
    cleanup();
  }
});

test("config set of an unknown key is refused with a clear error and changes nothing", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": V13 });
  try {
    const r = await runCli(["config", "set", "gateway.prot", "8080"], { home });
    assert.is(r.code, 2);
    assert.match(r.stderr, /unknown config key gateway\.prot; keys of gateway: gateway\.port/);
    assert.not.match(r.stderr, /\n\s+at /);
    assert.is(readFileSync(join(home, "config.yaml"), "utf8"), V13);
    assert.not.ok(existsSync(join(home, "config.yaml.bak")));
  } finally {
    await stop(home);
    cleanup();
  }
});

test("config set types the value by its default, writes only that key, and keeps comments", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": V13 });
  try {
    const r = await runCli(["config", "set", "kanban.auto_decompose", "off", "--json"], { home });
    assert.is(r.code, 0, r.stderr);
    assert.is(JSON.parse(r.stdout).value, false);
    assert.is(readFileSync(join(home, "config.yaml"), "utf8"), V13 + "kanban:\n  auto_decompose: false\n");
    assert.is(readFileSync(join(home, "config.yaml.bak"), "utf8"), V13);
    const bad = await runCli(["config", "set", "gateway.port", "99999"], { home });
    assert.is(bad.code, 2);
    assert.match(bad.stderr, /gateway\.port must be an integer between 0 and 65535/);
    const notBool = await runCli(["config", "set", "lsp.enabled", "maybe"], { home });
    assert.is(notBool.code, 2);
    assert.match(notBool.stderr, /lsp\.enabled must be true or false/);
  } finally {
    await stop(home);
    cleanup();
  }
});

test("defaults the user did not set are never written", async () => {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(["config", "set", "logs.level", "debug"], { home });
    assert.is(r.code, 0, r.stderr);
    assert.is(readFileSync(join(home, "config.yaml"), "utf8"), "_config_version: 13\nlogs:\n  level: debug\n");
  } finally {
    await stop(home);
    cleanup();
  }
});

test("config set of a secret is refused with a hint to use .env", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": V13 });
  try {
    const r = await runCli(["config", "set", "gateway.inspector_token", "hunter2"], { home });
    assert.is(r.code, 2);
    assert.match(r.stderr, /secret.*AGENT_INSPECTOR_TOKEN=<value> in \$AGENT_HOME\/\.env/);
    assert.is(readFileSync(join(home, "config.yaml"), "utf8"), V13);
  } finally {
    await stop(home);
    cleanup();
  }
});

test("config get shows that a secret is set and where from, never its value", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": V13, ".env": "AGENT_GATEWAY_TOKEN=hunter2-gateway\n" });
  try {
    const one = await runCli(["config", "get", "gateway.token", "--json"], { home });
    assert.equal(JSON.parse(one.stdout), {
      key: "gateway.token",
      value: "(set, hidden)",
      origin: "env",
      env: "AGENT_GATEWAY_TOKEN",
      file: join(home, "config.yaml"),
    });
    const all = await runCli(["config", "get"], { home });
    assert.is(all.code, 0);
    assert.not.match(one.stdout + all.stdout, /hunter2/);
    // An unset secret reads as empty, like any other unset string.
    assert.is(JSON.parse((await runCli(["config", "get", "gateway.inspector_token", "--json"], { home })).stdout).value, "");
  } finally {
    await stop(home);
    cleanup();
  }
});

test("config get tells whether a value comes from the default, the file or the environment", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": V13, ".env": "AGENT_MAX_TURNS=12\n" });
  try {
    const get = async (key: string) => JSON.parse((await runCli(["config", "get", key, "--json"], { home })).stdout);
    assert.equal(await get("logs.keep"), { key: "logs.keep", value: 3, origin: "default", file: join(home, "config.yaml") });
    assert.is((await get("display.statusbar")).origin, "file");
    // .env is part of the daemon's environment; AGENT_GATEWAY_PORT=0 comes from the test's env.
    assert.equal(await get("agent.max_turns"), { key: "agent.max_turns", value: 12, origin: "env", env: "AGENT_MAX_TURNS", file: join(home, "config.yaml") });
    assert.is((await get("gateway.port")).env, "AGENT_GATEWAY_PORT");
    const list = JSON.parse((await runCli(["config", "get", "--json"], { home })).stdout);
    assert.ok(list.entries.length > 10);
    assert.ok(list.entries.every((e: { origin: string }) => ["default", "file", "env"].includes(e.origin)));
    const unknown = await runCli(["config", "get", "nope"], { home });
    assert.is(unknown.code, 2);
  } finally {
    await stop(home);
    cleanup();
  }
});

test("config path prints where config.yaml and .env are without starting a daemon", async () => {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(["config", "path", "--json"], { home });
    assert.is(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), { config: join(home, "config.yaml"), env: join(home, ".env"), home });
    assert.not.ok(existsSync(join(home, "daemon.lock")));
  } finally {
    cleanup();
  }
});

test("an invalid value in config.yaml stops the daemon's start with an error naming the key", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": "_config_version: 13\nlogs:\n  keep: many\n" });
  try {
    const r = await runCli(["daemon", "start"], { home });
    assert.is(r.code, 69);
    assert.match(r.stderr, /logs\.keep must be a number/);
    assert.match(r.stderr, /config\.yaml/);
  } finally {
    await stop(home);
    cleanup();
  }
});

test("a config file from a newer version is refused", async () => {
  const { home, cleanup } = homeWith({ "config.yaml": "_config_version: 14\n" });
  try {
    const r = await runCli(["daemon", "start"], { home });
    assert.is(r.code, 69);
    assert.match(r.stderr, /config version 14, newer than this agent knows \(13\)/);
    assert.is(readFileSync(join(home, "config.yaml"), "utf8"), "_config_version: 14\n");
  } finally {
    await stop(home);
    cleanup();
  }
});

test("SIGHUP reloads config.yaml and .env", async () => {
  const h = await startedHome();
  try {
    const get = async (key: string) => JSON.parse((await runCli(["config", "get", key, "--json"], { home: h.home })).stdout);
    assert.is((await get("logs.level")).value, "info");
    writeFileSync(join(h.home, "config.yaml"), "_config_version: 13\nlogs:\n  level: debug # louder\n");
    writeFileSync(join(h.home, ".env"), "AGENT_MAX_TURNS=7\n");
    process.kill(h.pid, "SIGHUP");
    await waitFor("the reload", async () => (await get("logs.level")).value === "debug");
    assert.equal(await get("agent.max_turns"), { key: "agent.max_turns", value: 7, origin: "env", env: "AGENT_MAX_TURNS", file: join(h.home, "config.yaml") });
  } finally {
    await h.dispose();
  }
});

test("agent daemon reload re-reads config.yaml without a restart", async () => {
  const h = await startedHome();
  try {
    writeFileSync(join(h.home, "config.yaml"), "_config_version: 13\nagent:\n  max_turns: 12\n");
    const r = await runCli(["daemon", "reload", "--json"], { home: h.home });
    assert.is(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), { reloaded: true });
    const turns = JSON.parse((await runCli(["config", "get", "agent.max_turns", "--json"], { home: h.home })).stdout);
    assert.is(turns.value, 12);
    const status = JSON.parse((await runCli(["daemon", "status", "--json"], { home: h.home })).stdout);
    assert.is(status.pid, h.pid);
  } finally {
    await h.dispose();
  }
});

test("a reload of an invalid config keeps the previous one and reports the key", async () => {
  const h = await startedHome();
  try {
    writeFileSync(join(h.home, "config.yaml"), "_config_version: 13\ngateway:\n  port: -1\n");
    const { rpcConnect } = await import("../helpers/cli.js");
    const c = await rpcConnect(h.home);
    const error = await (c.rpc.sendRequest("daemon.reload", {}) as Promise<unknown>).then(
      () => null,
      (e: { message: string }) => e,
    );
    c.close();
    assert.ok(error);
    assert.match(error!.message, /gateway\.port must be an integer between 0 and 65535/);
    const level = JSON.parse((await runCli(["config", "get", "logs.level", "--json"], { home: h.home })).stdout);
    assert.is(level.value, "info");
  } finally {
    await h.dispose();
  }
});

test.run();

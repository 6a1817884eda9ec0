import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DAEMON, runCli, tempHome } from "../helpers/cli.js";

/** A temp HOME with a fake `systemctl` first on PATH that records its arguments. */
function fakeUserHome() {
  const h = tempHome("sd");
  const bin = join(h.home, "bin");
  mkdirSync(bin);
  const record = join(h.home, "systemctl.calls");
  writeFileSync(join(bin, "systemctl"), `#!/bin/sh\necho "$*" >> "${record}"\n`);
  chmodSync(join(bin, "systemctl"), 0o755);
  const agentHome = join(h.home, "agent home");
  // AGENT_GATEWAY_PORT empty: the unit's port comes from the home's config (the test runner sets 0).
  const env = { HOME: h.home, XDG_CONFIG_HOME: "", PATH: `${bin}:${process.env.PATH}`, AGENT_GATEWAY_PORT: "" };
  const dir = join(h.home, ".config", "systemd", "user");
  // Not the default home (~/.agent): the unit is named after the home.
  const name = /^agentd-agent-home-[0-9a-f]{8}\.service$/;
  const units = () => (existsSync(dir) ? readdirSync(dir).sort() : []);
  const unitOf = () => {
    const [only, ...more] = units();
    if (!only || more.length || !name.test(only)) throw new Error(`expected one per-home unit, found ${units().join(", ")}`);
    return join(dir, only);
  };
  const calls = () => (existsSync(record) ? readFileSync(record, "utf8").trim().split("\n") : []);
  return { ...h, agentHome, env, dir, units, unitOf, calls };
}

test("daemon install writes a user unit with absolute paths, AGENT_HOME, Restart=on-failure and KillMode=mixed", async () => {
  const h = fakeUserHome();
  try {
    const r = await runCli(["daemon", "install", "--json"], { home: h.agentHome, env: h.env });
    assert.is(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.is(result.path, h.unitOf());
    assert.is(result.daemon_reload, "done");
    assert.is(result.enable, `systemctl --user enable --now ${result.name}`);
    const unit = readFileSync(h.unitOf(), "utf8");
    assert.ok(unit.includes("\nEnvironment=AGENT_GATEWAY_PORT=6420\n"), "the gateway port is pinned");
    assert.ok(unit.includes(`\nExecStart=${process.execPath} ${DAEMON} --foreground\n`), unit);
    assert.ok(unit.includes(`\nEnvironment="AGENT_HOME=${h.agentHome}"\n`), "a path with a space is quoted");
    for (const l of ["Type=simple", "Restart=on-failure", "KillMode=mixed", "WantedBy=default.target"]) assert.ok(unit.includes(`\n${l}\n`), l);
    assert.equal(h.calls(), ["--user daemon-reload"]);
  } finally {
    h.cleanup();
  }
});

test("daemon install --print prints the unit and writes nothing", async () => {
  const h = fakeUserHome();
  try {
    const r = await runCli(["daemon", "install", "--print"], { home: h.agentHome, env: h.env });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# Written by `agent daemon install`/);
    assert.match(r.stdout, /\[Service\][\s\S]*KillMode=mixed/);
    assert.equal(h.units(), []);
    assert.equal(h.calls(), []);
    const json = await runCli(["daemon", "install", "--print", "--json"], { home: h.agentHome, env: h.env });
    assert.is(JSON.parse(json.stdout).unit, r.stdout);
  } finally {
    h.cleanup();
  }
});

test("daemon uninstall removes the unit, and says so when there is none", async () => {
  const h = fakeUserHome();
  try {
    await runCli(["daemon", "install"], { home: h.agentHome, env: h.env });
    const unit = h.unitOf();
    const r = await runCli(["daemon", "uninstall", "--json"], { home: h.agentHome, env: h.env });
    assert.is(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), { path: unit, removed: true, disabled: true, daemon_reload: true });
    assert.not.ok(existsSync(unit));
    assert.equal(h.calls(), ["--user daemon-reload", `--user disable ${unit.split("/").pop()}`, "--user daemon-reload"]);
    const again = await runCli(["daemon", "uninstall"], { home: h.agentHome, env: h.env });
    assert.is(again.code, 0);
    assert.match(again.stdout, /nothing to remove/);
  } finally {
    h.cleanup();
  }
});

test("daemon install works without systemctl and says how to enable the unit", async () => {
  const h = fakeUserHome();
  try {
    const r = await runCli(["daemon", "install"], { home: h.agentHome, env: { ...h.env, PATH: "/nonexistent" } });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /daemon-reload: skipped \(no systemctl\)/);
    assert.match(r.stdout, /systemctl --user enable --now agentd-agent-home-[0-9a-f]{8}\.service/);
    assert.ok(existsSync(h.unitOf()));
  } finally {
    h.cleanup();
  }
});

test("two homes get two units, each with its own AGENT_HOME and gateway port; status and uninstall find their own", async () => {
  const h = fakeUserHome();
  try {
    const second = join(h.home, "work");
    mkdirSync(second);
    writeFileSync(join(second, "config.yaml"), "_config_version: 13\ngateway:\n  port: 6431\n");
    const a = await runCli(["daemon", "install", "--json"], { home: h.agentHome, env: h.env });
    assert.is(a.code, 0, a.stderr);
    const b = await runCli(["daemon", "install", "--json"], { home: second, env: h.env });
    assert.is(b.code, 0, b.stderr);
    const [ua, ub] = [JSON.parse(a.stdout), JSON.parse(b.stdout)];
    assert.match(ub.name, /^agentd-work-[0-9a-f]{8}\.service$/);
    assert.is.not(ua.path, ub.path, "the second install does not overwrite the first");
    assert.equal(h.units(), [ua.name, ub.name].sort());
    const textA = readFileSync(ua.path, "utf8");
    const textB = readFileSync(ub.path, "utf8");
    assert.ok(textA.includes(`Environment="AGENT_HOME=${h.agentHome}"`) && textA.includes("Environment=AGENT_GATEWAY_PORT=6420"), textA);
    assert.ok(textB.includes(`Environment=AGENT_HOME=${second}\n`) && textB.includes("Environment=AGENT_GATEWAY_PORT=6431"), textB);

    // The default home (~/.agent) keeps the stable name; on a port another home's unit uses, install refuses.
    const dflt = join(h.home, ".agent");
    const clash = await runCli(["daemon", "install"], { home: dflt, env: h.env });
    assert.is(clash.code, 1);
    assert.match(clash.stderr, /already uses gateway port 6420; give this home another: agent daemon install --port <n>/);
    const c = await runCli(["daemon", "install", "--port", "6440", "--json"], { home: dflt, env: h.env });
    assert.is(c.code, 0, c.stderr);
    assert.is(JSON.parse(c.stdout).name, "agentd.service");

    const status = await runCli(["daemon", "status", "--json"], { home: second, env: h.env });
    assert.is(status.code, 3);
    assert.equal(JSON.parse(status.stdout).unit, { name: ub.name, path: ub.path });
    const off = await runCli(["daemon", "uninstall"], { home: second, env: h.env });
    assert.is(off.code, 0, off.stderr);
    assert.equal(h.units(), ["agentd.service", ua.name].sort(), "only the second home's unit is gone");
  } finally {
    h.cleanup();
  }
});

test("a unit written under the old shared name for this home is found by uninstall and replaced by install", async () => {
  const h = fakeUserHome();
  try {
    mkdirSync(h.dir, { recursive: true });
    const legacy = join(h.dir, "agentd.service");
    writeFileSync(legacy, `[Service]\nEnvironment="AGENT_HOME=${h.agentHome}"\n`);
    const status = await runCli(["daemon", "status", "--json"], { home: h.agentHome, env: h.env });
    assert.equal(JSON.parse(status.stdout).unit, { name: "agentd.service", path: legacy });
    // The default home would take that name: refused, nothing overwritten.
    const dflt = await runCli(["daemon", "install", "--port", "6450"], { home: join(h.home, ".agent"), env: h.env });
    assert.is(dflt.code, 1);
    assert.match(dflt.stderr, /is the unit of another home .*give it its own name first/);
    assert.match(readFileSync(legacy, "utf8"), /AGENT_HOME=/);
    const r = await runCli(["daemon", "install"], { home: h.agentHome, env: h.env });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /removed .*agentd\.service, this home's unit under the old shared name/);
    assert.ok(existsSync(h.unitOf()));
    const now = await runCli(["daemon", "install", "--port", "6450"], { home: join(h.home, ".agent"), env: h.env });
    assert.is(now.code, 0, now.stderr);
  } finally {
    h.cleanup();
  }
});

test.run();

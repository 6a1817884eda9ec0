import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
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
  const env = { HOME: h.home, XDG_CONFIG_HOME: "", PATH: `${bin}:${process.env.PATH}` };
  const unit = join(h.home, ".config", "systemd", "user", "agentd.service");
  const calls = () => (existsSync(record) ? readFileSync(record, "utf8").trim().split("\n") : []);
  return { ...h, agentHome, env, unit, calls };
}

test("daemon install writes a user unit with absolute paths, AGENT_HOME, Restart=on-failure and KillMode=mixed", async () => {
  const h = fakeUserHome();
  try {
    const r = await runCli(["daemon", "install", "--json"], { home: h.agentHome, env: h.env });
    assert.is(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.is(result.path, h.unit);
    assert.is(result.daemon_reload, "done");
    assert.match(result.enable, /systemctl --user enable --now agentd\.service/);
    const unit = readFileSync(h.unit, "utf8");
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
    assert.not.ok(existsSync(h.unit));
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
    const r = await runCli(["daemon", "uninstall", "--json"], { home: h.agentHome, env: h.env });
    assert.is(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), { path: h.unit, removed: true, disabled: true, daemon_reload: true });
    assert.not.ok(existsSync(h.unit));
    assert.equal(h.calls(), ["--user daemon-reload", "--user disable agentd.service", "--user daemon-reload"]);
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
    assert.match(r.stdout, /systemctl --user enable --now agentd\.service/);
    assert.ok(existsSync(h.unit));
  } finally {
    h.cleanup();
  }
});

test.run();

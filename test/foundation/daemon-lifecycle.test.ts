import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, startedHome, tempHome } from "../helpers/cli.js";

test("a daemon starts, reports its status as JSON, and stops", async () => {
  const h = await startedHome();
  try {
    const status = await runCli(["daemon", "status", "--json"], { home: h.home });
    assert.is(status.code, 0, status.stderr);
    const info = JSON.parse(status.stdout);
    assert.is(info.running, true);
    assert.is(info.pid, h.pid);
    assert.is(info.home, h.home);
    assert.is(statSync(join(h.home, "daemon.sock")).mode & 0o777, 0o600);
    assert.is(readFileSync(join(h.home, "daemon.lock"), "utf8").trim(), String(h.pid));
    const stop = await runCli(["daemon", "stop", "--json"], { home: h.home });
    assert.is(stop.code, 0, stop.stderr);
    assert.is(JSON.parse(stop.stdout).stopped, true);
    const after = await runCli(["daemon", "status", "--json"], { home: h.home });
    assert.is(after.code, 3);
    assert.is(JSON.parse(after.stdout).running, false);
  } finally {
    await h.dispose();
  }
});

test("status of a home without a daemon says so and exits 3 without starting one", async () => {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(["daemon", "status"], { home });
    assert.is(r.code, 3);
    assert.match(r.stdout, /not running/);
    assert.not.ok(require_exists(join(home, "daemon.lock")));
  } finally {
    cleanup();
  }
});

function require_exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

test.run();

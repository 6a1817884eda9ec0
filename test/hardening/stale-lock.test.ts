import { spawn } from "node:child_process";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { killQuietly, runCli, tempHome } from "../helpers/cli.js";

// Issue 23, part 4b: a daemon.lock whose pid now belongs to another process does not block the daemon.

const linux = process.platform === "linux";

const stale = [
  // Another program now holds the pid.
  ["a sleep", () => spawn("sleep", ["60"], { stdio: "ignore" })],
  // A process that looks like a daemon, but started after the (older) lock was written.
  [
    "a process named like a daemon, started after the lock",
    () => spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "daemon/main.js"], { stdio: "ignore" }),
  ],
] as const;

for (const [label, start] of stale) {
  test(`a stale daemon.lock whose pid is now ${label}: daemon start starts, status agrees`, async () => {
    if (!linux) {
      console.log("skipped: needs /proc (Linux)");
      return;
    }
    const { home, cleanup } = tempHome("lk");
    const other = start();
    try {
      const lock = join(home, "daemon.lock");
      writeFileSync(lock, `${other.pid}\n`);
      const hourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(lock, hourAgo, hourAgo);
      const started = await runCli(["daemon", "start", "--json"], { home });
      assert.is(started.code, 0, started.stderr);
      const s = JSON.parse(started.stdout);
      assert.is(s.started, true, started.stdout);
      assert.is.not(s.pid, other.pid);
      const status = await runCli(["daemon", "status", "--json"], { home });
      assert.is(status.code, 0, status.stderr);
      assert.is(JSON.parse(status.stdout).pid, s.pid);
      assert.is(readFileSync(lock, "utf8").trim(), String(s.pid));
      // A second start still sees the live daemon.
      const again = await runCli(["daemon", "start"], { home });
      assert.is(again.code, 0);
      assert.match(again.stdout + again.stderr, new RegExp(`already running \\(pid ${s.pid}\\)`));
    } finally {
      await runCli(["daemon", "stop"], { home }).catch(() => undefined);
      killQuietly(other.pid!);
      cleanup();
    }
  });
}

test.run();

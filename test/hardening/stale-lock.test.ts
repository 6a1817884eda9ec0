import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { killQuietly, runCli, tempHome } from "../helpers/cli.js";
import { testUnless } from "../helpers/skip.js";

// Issue 23, part 4b: a daemon.lock whose pid now belongs to another process does not block the daemon.

/** Telling a process by its start time reads /proc. */
const onLinux = testUnless(process.platform === "linux" ? null : "needs /proc (Linux)");

const stale = [
  // An older daemon's lock (pid only); another program now holds the pid.
  ["a sleep, the lock an older daemon's (pid only)", () => spawn("sleep", ["60"], { stdio: "ignore" }), (pid: number) => `${pid}\n`],
  // The lock records the owner's start time; a process that looks like a daemon has another.
  [
    "a process named like a daemon, with another start time",
    () => spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "daemon/main.js"], { stdio: "ignore" }),
    (pid: number) => `${pid}\n1\n`,
  ],
] as const;

for (const [label, start, lockText] of stale) {
  onLinux(`a stale daemon.lock whose pid is now ${label}: daemon start starts, status agrees`, async () => {
    const { home, cleanup } = tempHome("lk");
    const other = start();
    try {
      const lock = join(home, "daemon.lock");
      writeFileSync(lock, lockText(other.pid!));
      const started = await runCli(["daemon", "start", "--json"], { home });
      assert.is(started.code, 0, started.stderr);
      const s = JSON.parse(started.stdout);
      assert.is(s.started, true, started.stdout);
      assert.is.not(s.pid, other.pid);
      const status = await runCli(["daemon", "status", "--json"], { home });
      assert.is(status.code, 0, status.stderr);
      assert.is(JSON.parse(status.stdout).pid, s.pid);
      // The new lock names the daemon and its start time.
      const [pid, startTime] = readFileSync(lock, "utf8").split("\n");
      assert.is(Number(pid), s.pid);
      assert.match(startTime!, /^\d+$/);
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

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { killQuietly, runCli, tempHome } from "../helpers/cli.js";

// Issue 23, part 4b: a daemon.lock whose pid now belongs to another process does not block the daemon.

const linux = process.platform === "linux";

for (const [label, lockText] of [
  ["a lock of an older daemon (pid only)", (pid: number) => `${pid}\n`],
  ["a lock whose recorded start time is not the process's", (pid: number) => `${pid}\n1\n`],
] as const) {
  test(`${label}, its pid reused by another live process: daemon start starts, status agrees`, async () => {
    if (!linux) {
      console.log("skipped: needs /proc (Linux)");
      return;
    }
    const { home, cleanup } = tempHome("lk");
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      writeFileSync(join(home, "daemon.lock"), lockText(other.pid!));
      const started = await runCli(["daemon", "start", "--json"], { home });
      assert.is(started.code, 0, started.stderr);
      const s = JSON.parse(started.stdout);
      assert.is(s.started, true, started.stdout);
      assert.is.not(s.pid, other.pid);
      const status = await runCli(["daemon", "status", "--json"], { home });
      assert.is(status.code, 0, status.stderr);
      assert.is(JSON.parse(status.stdout).pid, s.pid);
      // The new lock names the daemon, with its start time.
      const [pid, startTime] = readFileSync(join(home, "daemon.lock"), "utf8").split("\n");
      assert.is(Number(pid), s.pid);
      assert.match(startTime!, /^\d+$/);
      // A second start sees the live daemon.
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

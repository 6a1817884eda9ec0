// `logs/daemon-stderr.log` holds what reaches the daemon's stdout and stderr without its logger:
// an actor's console output (a runner thread's output is the daemon's), Node's warnings, a
// crash before the logger is up. It is written by the one log writer through the worker-output
// relay, so it rotates by size like every other log (it used to grow without bound), and the
// relay ends with the daemon (no process left behind by a stop or a kill -9).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { killQuietly, launchDaemon, runCli, tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const CHATTY = `
export const chatty = {
  actions: {
    spam: (c, n) => { for (let i = 0; i < n; i++) console.log("chatty line " + i + " " + "x".repeat(80)); return n; },
  },
};
`;
const MAX = 4096;
const env = { AGENT_GATEWAY_PORT: "0", AGENT_DAEMON_STDERR_MAX_BYTES: String(MAX) };

/** Processes whose command line names `needle` (the relay of a home's daemon-stderr.log). */
function processesNaming(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(needle)) out.push(Number(name));
    } catch {}
  }
  return out;
}

test("an actor's console output fills daemon-stderr.log: it rotates by size and keeps the newest lines", async () => {
  const { home, cleanup } = tempHome("stderr-rot");
  let pid = 0;
  try {
    mkdirSync(join(home, "actors"), { recursive: true });
    writeFileSync(join(home, "actors", "chatty.mjs"), CHATTY);
    ({ pid } = await launchDaemon(home, env));
    const log = join(home, "logs", "daemon-stderr.log");
    const created = await runCli(["actors", "create", "chatty", "--key", "k", "--json"], { home, env });
    assert.is(created.code, 0, created.stderr);
    const id = JSON.parse(created.stdout).actor_id;
    const called = await runCli(["actors", "call", id, "spam", "300", "--json"], { home, env });
    assert.is(called.code, 0, called.stderr);
    // 300 lines of ~100 bytes: about 30 KB through a 4 KB limit.
    await waitFor("the last line in daemon-stderr.log", () => existsSync(log) && readFileSync(log, "utf8").includes("chatty line 299 "), 10_000);
    assert.ok(statSync(log).size <= MAX, `daemon-stderr.log is ${statSync(log).size} bytes`);
    for (let i = 1; i <= 3; i++) {
      assert.ok(existsSync(`${log}.${i}`), `daemon-stderr.log.${i} kept`);
      assert.ok(statSync(`${log}.${i}`).size <= MAX);
    }
    assert.not.ok(existsSync(`${log}.4`), "only logs.keep (3) rotated files are kept");
    // Nothing lost in the newest files: the lines run on across the rotation.
    const text = readFileSync(`${log}.1`, "utf8") + readFileSync(log, "utf8");
    const numbers = [...text.matchAll(/chatty line (\d+) /g)].map((m) => Number(m[1]));
    for (let i = 1; i < numbers.length; i++) assert.is(numbers[i], numbers[i - 1]! + 1);
  } finally {
    await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
    killQuietly(pid);
    cleanup();
  }
});

test("the relay writing daemon-stderr.log ends with the daemon, after a stop and after a kill -9", async () => {
  const { home, cleanup } = tempHome("stderr-rot");
  let pid = 0;
  const needle = join(home, "logs", "daemon-stderr.log");
  try {
    ({ pid } = await launchDaemon(home, env));
    // There (empty) from the start, as before the relay: `agent logs -c daemon-stderr` finds it.
    const shown = await runCli(["logs", "--component", "daemon-stderr"], { home, env });
    assert.is(shown.code, 0, shown.stderr);
    const relays = processesNaming(needle);
    assert.is(relays.length, 1, "one relay for the daemon's output");
    const stopped = await runCli(["daemon", "stop"], { home, env });
    assert.is(stopped.code, 0, stopped.stderr);
    await waitFor("the relay to exit after a stop", () => processesNaming(needle).length === 0, 10_000);

    ({ pid } = await launchDaemon(home, env));
    assert.is(processesNaming(needle).length, 1);
    killQuietly(pid);
    await waitFor("the relay to exit after a kill -9", () => processesNaming(needle).length === 0, 10_000);
  } finally {
    killQuietly(pid);
    cleanup();
  }
});

test("a relay killed with -9 does not take the daemon down: its console output is dropped, it keeps answering", async () => {
  const { home, cleanup } = tempHome("stderr-rot");
  let pid = 0;
  const needle = join(home, "logs", "daemon-stderr.log");
  try {
    mkdirSync(join(home, "actors"), { recursive: true });
    writeFileSync(join(home, "actors", "chatty.mjs"), CHATTY);
    ({ pid } = await launchDaemon(home, env));
    const created = await runCli(["actors", "create", "chatty", "--key", "k", "--json"], { home, env });
    assert.is(created.code, 0, created.stderr);
    const id = JSON.parse(created.stdout).actor_id;
    for (const relay of processesNaming(needle)) killQuietly(relay);
    await waitFor("the relay to be gone", () => processesNaming(needle).length === 0, 10_000);
    for (let i = 0; i < 3; i++) {
      const called = await runCli(["actors", "call", id, "spam", "50", "--json"], { home, env });
      assert.is(called.code, 0, called.stderr);
    }
    const status = await runCli(["daemon", "status", "--json"], { home, env });
    assert.is(status.code, 0, status.stderr);
    assert.is(JSON.parse(status.stdout).pid, pid, "the same daemon still runs");
  } finally {
    await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
    killQuietly(pid);
    cleanup();
  }
});

test.run();

// `agent logs --follow` as a user runs it: it keeps following a real daemon's log across its
// rotations (several between two looks included), prints a line written in two pieces once,
// whole, follows a file truncated in place, and a log that does not exist yet once it appears.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, rpcConnect, runCli, tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const line = (msg: string) => JSON.stringify({ ts: "2026-11-22T10:00:00.000Z", level: "info", component: "x", msg }) + "\n";

/** `agent logs <args> --follow --json` running; `records()` is what it printed so far. */
function follow(home: string, args: string[]) {
  const child = spawn(process.execPath, [CLI, "logs", ...args, "--follow", "--json"], {
    env: { ...process.env, AGENT_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    child,
    exited,
    err: () => err,
    records: () =>
      out
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

test("agent logs -f keeps following a daemon's log across its size rotations, losing and repeating nothing", async () => {
  const { home, cleanup } = tempHome();
  writeFileSync(join(home, "config.yaml"), "_config_version: 13\nlogs:\n  level: debug\n  max_bytes: 600\n  keep: 100\n");
  const start = await runCli(["daemon", "start", "--json"], { home });
  assert.is(start.code, 0, start.stderr);
  const rpcLog = join(home, "logs", "rpc.log");
  const f = follow(home, ["-c", "rpc", "-n", "0"]);
  try {
    // A first call makes the rpc log; the follower is reading once it prints a line added to it
    // (added again at each look: the CLI may start after the first one was written).
    const c = await rpcConnect(home);
    await c.rpc.sendRequest("daemon.status", {});
    await waitFor("the rpc log", () => existsSync(rpcLog));
    let added = 0;
    await waitFor(
      () => `the follower to start: ${f.err()}`,
      () => {
        if (f.records().some((r) => r.msg === "follower-ready")) return true;
        if (Date.now() - added > 300) appendFileSync(rpcLog, line("follower-ready")), (added = Date.now());
        return false;
      },
    );
    // Paced (each rotation seen as it happens) and then a burst (several rotations between two looks).
    for (let i = 0; i < 10; i++) {
      await c.rpc.sendRequest("ping", {});
      await new Promise((r) => setTimeout(r, 40));
    }
    for (let i = 0; i < 30; i++) await c.rpc.sendRequest("ping", {});
    c.close();
    const pings = () => f.records().filter((r) => r.msg === "rpc call" && r.method === "ping").length;
    await waitFor(
      () => `40 pings followed, got ${pings()}`,
      () => pings() >= 40,
    );
    assert.ok(existsSync(`${rpcLog}.4`), "the log rotated several times while followed");
    await new Promise((r) => setTimeout(r, 400)); // a few more looks: nothing is printed twice
    assert.is(pings(), 40);
    f.child.kill("SIGINT");
    assert.is(await f.exited, 0, f.err());
  } finally {
    f.child.kill("SIGKILL");
    await runCli(["daemon", "stop"], { home });
    cleanup();
  }
});

test("a line written in two pieces is printed once, whole; a file truncated in place is followed from its start", async () => {
  const { home, cleanup } = tempHome();
  mkdirSync(join(home, "logs"));
  const file = join(home, "logs", "x.log");
  writeFileSync(file, line("first") + line("second"));
  const f = follow(home, ["-c", "x", "-n", "1"]);
  try {
    await waitFor("the last line", () => f.records().some((r) => r.msg === "second"));
    const whole = line("written in two pieces");
    assert.ok(whole.length > 60);
    appendFileSync(file, whole.slice(0, 30));
    // Give the follower a few looks at the half line: it must wait for the rest, not print it.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(
      f.records().map((r) => r.msg),
      ["second"],
    );
    appendFileSync(file, whole.slice(30));
    await waitFor("the whole line", () => f.records().length === 2);
    assert.is(f.records()[1]!.msg, "written in two pieces");
    assert.is(f.records()[1]!.raw, undefined, "parsed as one JSON line, not pieces");
    truncateSync(file, 0);
    appendFileSync(file, line("after truncation"));
    await waitFor("the line after the truncation", () => f.records().some((r) => r.msg === "after truncation"));
    assert.equal(
      f.records().map((r) => r.msg),
      ["second", "written in two pieces", "after truncation"],
    );
    f.child.kill("SIGINT");
    assert.is(await f.exited, 0, f.err());
  } finally {
    f.child.kill("SIGKILL");
    cleanup();
  }
});

test("agent logs -f on a log that does not exist yet prints its lines once it appears", async () => {
  const { home, cleanup } = tempHome();
  mkdirSync(join(home, "logs"));
  const f = follow(home, ["-c", "later"]);
  try {
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(join(home, "logs", "later.log"), line("one") + line("two"));
    await waitFor(
      () => `the new log's lines: ${f.err()}`,
      () => f.records().length === 2,
    );
    assert.equal(
      f.records().map((r) => r.msg),
      ["one", "two"],
    );
    f.child.kill("SIGINT");
    assert.is(await f.exited, 0, f.err());
  } finally {
    f.child.kill("SIGKILL");
    cleanup();
  }
});

test.run();

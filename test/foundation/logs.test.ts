import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, rpcConnect, runCli, startedHome, tempHome, waitFor } from "../helpers/cli.js";

const line = (msg: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ts: "2026-11-22T10:00:00.000Z", level: "info", component: "x", msg, ...extra }) + "\n";

test("log files rotate by size: each file stays under logs.max_bytes, logs.keep rotated files are kept", async () => {
  const { home, cleanup } = tempHome();
  writeFileSync(join(home, "config.yaml"), "_config_version: 13\nlogs:\n  level: debug\n  max_bytes: 600\n  keep: 2\n");
  const start = await runCli(["daemon", "start", "--json"], { home });
  assert.is(start.code, 0, start.stderr);
  const h = { home };
  try {
    const c = await rpcConnect(h.home);
    for (let i = 0; i < 40; i++) await c.rpc.sendRequest("ping", {});
    c.close();
    const logs = join(h.home, "logs");
    await waitFor("rotated rpc logs", () => existsSync(join(logs, "rpc.log.2")));
    const files = readdirSync(logs)
      .filter((f) => f.startsWith("rpc.log"))
      .sort();
    assert.equal(files, ["rpc.log", "rpc.log.1", "rpc.log.2"], "keep: 2 leaves no rpc.log.3");
    for (const f of files) {
      const text = readFileSync(join(logs, f), "utf8");
      assert.ok(statSync(join(logs, f)).size <= 600, `${f} is ${statSync(join(logs, f)).size} bytes`);
      for (const l of text.trim().split("\n")) assert.is(JSON.parse(l).component, "rpc");
    }
  } finally {
    await runCli(["daemon", "stop"], { home });
    cleanup();
  }
});

test("agent logs --lines N shows the last N lines, reaching into the rotated file", async () => {
  const { home, cleanup } = tempHome();
  try {
    mkdirSync(join(home, "logs"));
    writeFileSync(join(home, "logs", "x.log.1"), line("one") + line("two") + line("three"));
    writeFileSync(join(home, "logs", "x.log"), line("four") + line("five", { n: 5, who: "a b" }));
    const r = await runCli(["logs", "--component", "x", "--lines", "3", "--json"], { home });
    assert.is(r.code, 0, r.stderr);
    assert.equal(
      JSON.parse(r.stdout).records.map((rec: { msg: string }) => rec.msg),
      ["three", "four", "five"],
    );
    const human = await runCli(["logs", "-c", "x", "-n", "1"], { home });
    assert.is(human.stdout, '2026-11-22 10:00:00.000  INFO   x  five  n=5 who="a b"\n');
    const viaDaemon = await runCli(["daemon", "logs", "--component", "x", "--lines", "2", "--json"], { home });
    assert.equal(
      JSON.parse(viaDaemon.stdout).records.map((rec: { msg: string }) => rec.msg),
      ["four", "five"],
    );
    assert.not.ok(existsSync(join(home, "daemon.lock")), "reading logs starts no daemon");
  } finally {
    cleanup();
  }
});

test("agent logs for a component without a log names the ones that have one and exits 4", async () => {
  const { home, cleanup } = tempHome();
  try {
    mkdirSync(join(home, "logs"));
    writeFileSync(join(home, "logs", "daemon.log"), line("hi"));
    const r = await runCli(["logs", "--component", "nope"], { home });
    assert.is(r.code, 4);
    assert.match(r.stderr, /no log for component "nope".*components with logs: daemon/);
    const bad = await runCli(["logs", "--component", "../etc/passwd"], { home });
    assert.is(bad.code, 2);
    const list = await runCli(["logs", "--list", "--json"], { home });
    assert.equal(JSON.parse(list.stdout), { components: [{ component: "daemon", bytes: line("hi").length, rotated: 0 }] });
  } finally {
    cleanup();
  }
});

test("agent logs --follow prints new lines and keeps following across a rotation", async () => {
  const { home, cleanup } = tempHome();
  const dir = join(home, "logs");
  mkdirSync(dir);
  const file = join(dir, "x.log");
  writeFileSync(file, line("old"));
  const child = spawn(process.execPath, [CLI, "logs", "-c", "x", "--follow", "--json", "--lines", "1"], {
    env: { ...process.env, AGENT_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const msgs = () =>
    out
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).msg);
  try {
    await waitFor("the last existing line", () => msgs().includes("old"));
    appendFileSync(file, line("a"));
    await waitFor("line a", () => msgs().includes("a"));
    appendFileSync(file, line("b")); // written just before the rotation
    renameSync(file, `${file}.1`);
    writeFileSync(file, line("c"));
    appendFileSync(file, line("d"));
    await waitFor("lines after the rotation", () => msgs().includes("d"));
    assert.equal(msgs(), ["old", "a", "b", "c", "d"]);
    child.kill("SIGINT");
    assert.is(await exited, 0);
  } finally {
    child.kill("SIGKILL");
    cleanup();
  }
});

test("agent logs works while the daemon runs and reads what it wrote", async () => {
  const h = await startedHome();
  try {
    const r = await runCli(["logs", "--json"], { home: h.home });
    assert.is(r.code, 0, r.stderr);
    const records = JSON.parse(r.stdout).records as Array<{ msg: string; pid?: number }>;
    assert.ok(records.some((rec) => rec.msg === "daemon ready" && rec.pid === h.pid));
  } finally {
    await h.dispose();
  }
});

test.run();

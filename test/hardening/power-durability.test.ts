// storage.durability (README "Durable means"): under `power` an acknowledged action is fsynced
// before its HTTP response is written; under `process` (the default) it is not. Seen from
// outside with strace attached to a real daemon; skipped with the reason where strace is missing.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, tempHome, waitFor } from "../helpers/cli.js";
import { call, putActor, startDaemon, type TestDaemon } from "../gateway/daemon.js";
import { testUnless } from "../helpers/skip.js";

const strace = spawnSync("strace", ["-V"], { encoding: "utf8" });
const noStrace = strace.error || strace.status !== 0 ? `strace is not available (${strace.error?.message ?? strace.stderr.trim()})` : null;
/** A test that needs strace: reported skipped, with why, where it is missing. */
const traced = testUnless(noStrace);

/**
 * The syscalls of one increment, from the read of its request to the write of its response:
 * strace follows every thread of the daemon while the call runs.
 */
async function tracedIncrement(d: TestDaemon, id: string, dir: string): Promise<string[]> {
  const out = join(dir, `strace-${Date.now()}.txt`);
  const tracer = spawn("strace", ["-f", "-p", String(d.pid), "-e", "trace=fsync,fdatasync,read,write,writev", "-s", "64", "-o", out], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  tracer.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise<void>((resolve) => tracer.on("exit", () => resolve()));
  try {
    await waitFor(
      () => `strace to attach (${stderr})`,
      () => /attached/.test(stderr),
    );
    const r = await call(d.url, id, "increment", [1]);
    assert.is(r.status, 200);
  } finally {
    tracer.kill("SIGINT");
    await exited;
  }
  const lines = readFileSync(out, "utf8").split("\n");
  const start = lines.findIndex((l) => l.includes(`POST /gateway/${id}/action/increment`));
  assert.ok(start >= 0, `the request's read is in the trace:\n${lines.join("\n")}`);
  const end = lines.findIndex((l, i) => i > start && l.includes("HTTP/1.1 200"));
  assert.ok(end > start, `the response's write is in the trace:\n${lines.join("\n")}`);
  return lines.slice(start, end);
}

const syncs = (lines: string[]) => lines.filter((l) => /\b(fsync|fdatasync)\(/.test(l));

let d: TestDaemon;
let powered: TestDaemon;
let id = "";
const scratch = tempHome("trace");
test.before(async () => {
  if (noStrace) return;
  // The default mode, whatever the environment running the tests says.
  d = await startDaemon({ env: { AGENT_STORAGE_DURABILITY: undefined } });
  id = (await putActor(d.url, { name: "counter", key: "power" })).json.actor.actor_id;
  await call(d.url, id, "increment", [1]);
});
test.after(async () => {
  await d?.dispose();
  await powered?.dispose();
  scratch.cleanup();
});

traced("under the default durability an acknowledged action is answered without an fsync", async () => {
  assert.equal(syncs(await tracedIncrement(d, id, scratch.home)), []);
});

traced("after config set storage.durability power, an acknowledged action is fsynced before its response", async () => {
  const r = await runCli(["config", "set", "storage.durability", "power"], { home: d.home, env: d.env });
  assert.is(r.code, 0, r.stderr);
  assert.ok(syncs(await tracedIncrement(d, id, scratch.home)).length >= 1);
});

traced("a daemon started with AGENT_STORAGE_DURABILITY=power fsyncs an action before its response", async () => {
  powered = await startDaemon({ env: { AGENT_STORAGE_DURABILITY: "power" } });
  const pid = (await putActor(powered.url, { name: "counter", key: "env" })).json.actor.actor_id;
  await call(powered.url, pid, "increment", [1]);
  assert.ok(syncs(await tracedIncrement(powered, pid, scratch.home)).length >= 1);
});

test("config set storage.durability to an unknown mode is refused and changes nothing", async () => {
  const { home, cleanup } = tempHome("dur");
  try {
    const env = { AGENT_STORAGE_DURABILITY: undefined };
    const r = await runCli(["config", "set", "storage.durability", "sometimes"], { home, env });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /storage\.durability.*must be one of process, power/);
    const get = await runCli(["config", "get", "storage.durability"], { home, env });
    assert.match(get.stdout, /process/);
  } finally {
    await runCli(["daemon", "stop"], { home, env: { AGENT_STORAGE_DURABILITY: undefined } }).catch(() => undefined);
    cleanup();
  }
});

test.run();

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createToolRegistry } from "../../daemon/agent/tools/index.js";
import { waitFor } from "../helpers/wait.js";
import { ctxFor, out, tempTree } from "./helpers.js";

const registry = createToolRegistry();
const t = tempTree({ "sub/here.txt": "x" });
test.after(async () => {
  await registry.close();
  t.cleanup();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitDead(pid: number, ms: number): Promise<boolean> {
  return waitFor(`process ${pid} to exit`, () => !alive(pid), ms).catch(() => false);
}

test("terminal runs a command in the session cwd and reports stdout, stderr and exit code 0", async () => {
  const r = await registry.execute("terminal", { command: "pwd; echo oops >&2" }, ctxFor(t.dir));
  assert.is(r.ok, true, JSON.stringify(r.output));
  assert.is(out(r).exit_code, 0);
  assert.is(out(r).output, `${t.dir}\noops\n`);
});

test("terminal reports a non-zero exit code as a failed call the model can read", async () => {
  const r = await registry.execute("terminal", { command: "echo partial; exit 7" }, ctxFor(t.dir));
  assert.is(r.ok, false);
  assert.is(out(r).exit_code, 7);
  assert.is(out(r).output, "partial\n");
});

test("terminal runs in the given cwd, with the session env, and rejects a missing cwd", async () => {
  const r = await registry.execute(
    "terminal",
    { command: "ls; echo $TOOL_TEST_VAR", cwd: "sub" },
    ctxFor(t.dir, { env: { ...process.env, TOOL_TEST_VAR: "from-session" } }),
  );
  assert.is(out(r).output, "here.txt\nfrom-session\n");
  const bad = await registry.execute("terminal", { command: "true", cwd: "nope" }, ctxFor(t.dir));
  assert.is(bad.ok, false);
  assert.match(out(bad).error, /working directory does not exist/);
});

test("terminal timeout kills the whole process group", async () => {
  const pidFile = join(t.dir, "bg.pid");
  const started = Date.now();
  const r = await registry.execute("terminal", { command: `sleep 30 & echo $! > ${pidFile}; echo started; sleep 30`, timeout: 0.5 }, ctxFor(t.dir));
  assert.ok(Date.now() - started < 5000, "returned promptly after the timeout");
  assert.is(r.ok, false);
  assert.is(out(r).timed_out, true);
  assert.match(out(r).note, /killed after 0.5 s/);
  assert.match(out(r).output, /started/);
  const bgPid = Number(readFileSync(pidFile, "utf8").trim());
  assert.ok(bgPid > 0);
  assert.ok(await waitDead(bgPid, 3000), "the background child in the group was killed too");
});

test("terminal output over the cap keeps the beginning and the end with a note", async () => {
  const r = await registry.execute("terminal", { command: "echo FIRST; seq 1 20000; echo LAST", max_output: 1000 }, ctxFor(t.dir));
  assert.is(r.ok, true);
  const text = out(r).output as string;
  assert.ok(text.startsWith("FIRST\n1\n2\n"));
  assert.ok(text.endsWith("20000\nLAST\n"));
  assert.match(text, /\[… output truncated: \d+ bytes omitted from the middle …\]/);
  assert.ok(out(r).truncated_bytes > 100_000);
  assert.ok(text.length < 1200);
});

test("terminal strips terminal escape sequences from the output", async () => {
  const r = await registry.execute("terminal", { command: "printf '\\033[31mred\\033[0m\\r\\n'" }, ctxFor(t.dir));
  assert.is(out(r).output, "red\n");
});

test("an interrupted turn kills the running command", async () => {
  const ac = new AbortController();
  const marker = join(t.dir, "interrupt.started");
  // Interrupt once the command is running (it has created the marker), not after a guessed delay.
  void waitFor("the command to start", () => existsSync(marker)).then(() => ac.abort());
  const started = Date.now();
  const r = await registry.execute("terminal", { command: `touch ${marker}; sleep 30` }, ctxFor(t.dir, { signal: ac.signal }));
  assert.ok(Date.now() - started < 5000);
  assert.is(r.ok, false);
  assert.is(out(r).interrupted, true);
});

test("a command that leaves a background child holding the output does not hang the call", async () => {
  const pidFile = join(t.dir, "daemon.pid");
  const started = Date.now();
  const r = await registry.execute("terminal", { command: `sleep 5 & echo $! > ${pidFile}; echo done` }, ctxFor(t.dir));
  assert.ok(Date.now() - started < 3000);
  assert.is(r.ok, true);
  assert.is(out(r).output, "done\n");
  process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGKILL");
});

test.run();

// The worker-output relay process (dist/daemon/log/relay-main.js), fed as a kanban worker feeds
// it: a piece at a time through a pipe, the secrets on fd 3. A secret split across two writes
// with a pause between them is still redacted whole; a line still being written shows up after
// a pause; SIGTERM does not stop it before it has written everything; it exits at the pipe's end.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Writable } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const RELAY = join(dirname(dirname(CLI)), "daemon", "log", "relay-main.js");
const SECRET = "tok_9b1e44c07fa2d3e8";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function relay(path: string, maxBytes = 1 << 20, keep = 2) {
  const child = spawn(process.execPath, [RELAY, path, String(maxBytes), String(keep)], { stdio: ["pipe", "ignore", "pipe", "pipe"] });
  const secrets = child.stdio[3] as Writable;
  // A relay that refused its arguments never reads them.
  secrets.on("error", () => undefined);
  child.stdin!.on("error", () => undefined);
  secrets.end(JSON.stringify([SECRET]));
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  live.push(child);
  return { child, exited, input: child.stdin!, stderr: () => stderr };
}

const live: Array<{ kill(signal: NodeJS.Signals): boolean }> = [];
test.after.each(() => {
  // A failed test leaves its relay waiting for input: it must not keep this process alive.
  for (const child of live.splice(0)) child.kill("SIGKILL");
});

const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : "");

test("a secret split across two writes with a pause between them is redacted whole", async () => {
  const { home, cleanup } = tempHome("relay");
  try {
    const path = join(home, "t.log");
    const r = relay(path);
    r.input.write(`key=${SECRET.slice(0, 8)}`);
    // The pause lets the relay write what is safe: not the start of the secret.
    await waitFor("the safe part of the line in the log", () => read(path) !== "");
    await sleep(300);
    assert.is(read(path), "key=");
    r.input.write(`${SECRET.slice(8)} done\n`);
    r.input.end();
    assert.is(await r.exited, 0, r.stderr());
    assert.is(read(path), "key=[redacted] done\n");
  } finally {
    cleanup();
  }
});

test("a line still being written is written after a pause; the rest follows when it comes", async () => {
  const { home, cleanup } = tempHome("relay");
  try {
    const path = join(home, "t.log");
    const r = relay(path);
    r.input.write("progress: 10%");
    await waitFor("the partial line in the log", () => read(path) === "progress: 10%");
    r.input.write(" 20%\nnext\n");
    r.input.end();
    assert.is(await r.exited, 0, r.stderr());
    assert.is(read(path), "progress: 10% 20%\nnext\n");
  } finally {
    cleanup();
  }
});

test("SIGTERM (a timeout killing the worker) does not stop the relay: it writes all and exits at the end of the pipe", async () => {
  const { home, cleanup } = tempHome("relay");
  try {
    const path = join(home, "t.log");
    const r = relay(path);
    r.input.write("before\n");
    await waitFor("the first line", () => read(path) === "before\n");
    r.child.kill("SIGTERM");
    await sleep(200);
    r.input.write(`after ${SECRET}\n`);
    r.input.end();
    assert.is(await r.exited, 0, r.stderr());
    assert.is(read(path), "before\nafter [redacted]\n");
  } finally {
    cleanup();
  }
});

test("the relay rotates by size with the one log writer; bad arguments are refused", async () => {
  const { home, cleanup } = tempHome("relay");
  try {
    const path = join(home, "t.log");
    const r = relay(path, 100, 1);
    for (let i = 0; i < 10; i++) r.input.write(`line ${i} ${"y".repeat(20)}\n`);
    r.input.end();
    assert.is(await r.exited, 0, r.stderr());
    assert.ok(read(path).length <= 100 && read(`${path}.1`).length <= 100);
    assert.not.ok(existsSync(`${path}.2`));
    assert.match(read(path), /line 9 /);
    const bad = relay(path, 0, 1);
    bad.input.end();
    assert.is(await bad.exited, 2);
    assert.match(bad.stderr(), /usage/);
  } finally {
    cleanup();
  }
});

test.run();

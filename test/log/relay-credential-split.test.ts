// The worker-output relay (dist/daemon/log/relay-main.js) writes a line still being written after
// a pause. A credential the daemon does not know as a value (a `Bearer` token, a `?token=` query
// parameter, an `authorization:` header a worker prints) is redacted by its context; when the
// pause falls inside such a credential, the part written before the pause and the part after it
// must not reach the log as plain text (each half alone no longer looks like a credential).
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Writable } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const RELAY = join(dirname(dirname(CLI)), "daemon", "log", "relay-main.js");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : "");

const live: Array<{ kill(signal: NodeJS.Signals): boolean }> = [];
test.after.each(() => {
  for (const child of live.splice(0)) child.kill("SIGKILL");
});

/** Feed the relay `pieces` with a pause longer than its idle flush (150 ms) between them; the log as written. */
async function relayed(pieces: string[]): Promise<string> {
  const { home, cleanup } = tempHome("relay-cred");
  try {
    const path = join(home, "t.log");
    const child = spawn(process.execPath, [RELAY, path, String(1 << 20), "2"], { stdio: ["pipe", "ignore", "pipe", "pipe"] });
    live.push(child);
    const secrets = child.stdio[3] as Writable;
    secrets.on("error", () => undefined);
    secrets.end("[]");
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    // The relay is up and reading before the first piece (a slow start would join the pieces).
    child.stdin!.write("start\n");
    await waitFor("the relay's first line", () => read(path) === "start\n");
    for (const [i, piece] of pieces.entries()) {
      if (i > 0) await sleep(400);
      child.stdin!.write(piece);
    }
    child.stdin!.end();
    assert.is(await exited, 0, stderr);
    return read(path).slice("start\n".length);
  } finally {
    cleanup();
  }
}

const CRED = "sk9Xq2LmP7vR4tW8zY3n";

test("a Bearer token cut by a pause is redacted whole", async () => {
  const log = await relayed([`curl -H "Authorization: Bearer ${CRED.slice(0, 8)}`, `${CRED.slice(8)}" https://x\n`]);
  assert.not.ok(log.includes(CRED.slice(8)), log);
  assert.not.ok(log.includes(CRED.slice(0, 8)), log);
  assert.match(log, /https:\/\/x\n$/);
});

test("a pause right after the scheme word does not let the token through", async () => {
  const log = await relayed(["using Bearer ", `${CRED} now\n`]);
  assert.not.ok(log.includes(CRED), log);
  assert.match(log, /now\n$/);
});

test("a pause inside the keyword itself (Bea|rer) does not let the token through", async () => {
  const log = await relayed(["header Bea", `rer ${CRED}\n`]);
  assert.not.ok(log.includes(CRED), log);
});

test("a query token cut by a pause is redacted whole", async () => {
  const log = await relayed([`GET /v1/x?access_token=${CRED.slice(0, 5)}`, `${CRED.slice(5)}&a=1\n`]);
  assert.not.ok(log.includes(CRED.slice(5)), log);
  assert.match(log, /&a=1\n$/);
});

test("an authorization header value cut by a pause is redacted whole", async () => {
  const log = await relayed(["authorization: ", `${CRED}\n`]);
  assert.not.ok(log.includes(CRED), log);
});

test("ordinary text still shows up after a pause (nothing held that cannot be a credential)", async () => {
  const { home, cleanup } = tempHome("relay-cred");
  try {
    const path = join(home, "t.log");
    const child = spawn(process.execPath, [RELAY, path, String(1 << 20), "2"], { stdio: ["pipe", "ignore", "ignore", "pipe"] });
    live.push(child);
    (child.stdio[3] as Writable).end("[]");
    child.stdin!.write("progress: 40% done");
    await waitFor("the partial line", () => read(path) === "progress: 40% done");
    child.stdin!.end();
  } finally {
    cleanup();
  }
});

test("a long line that names a token is still written as it comes past 64 KiB (held back only near its end)", async () => {
  const { home, cleanup } = tempHome("relay-cred");
  try {
    const path = join(home, "t.log");
    const child = spawn(process.execPath, [RELAY, path, String(1 << 22), "2"], { stdio: ["pipe", "ignore", "ignore", "pipe"] });
    live.push(child);
    (child.stdio[3] as Writable).end("[]");
    // A minified JSON blob with no newline: "token" near its start, 300 KB in all.
    child.stdin!.write(`{"token_count": 12, "data": "`);
    for (let i = 0; i < 30; i++) child.stdin!.write("z".repeat(10_000));
    await waitFor("most of the line in the log while it is still being written", () => read(path).length > 250_000, 10_000);
    child.stdin!.end();
  } finally {
    cleanup();
  }
});

test.run();

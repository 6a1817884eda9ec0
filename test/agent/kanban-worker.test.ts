// `agent chat -q` with AGENT_KANBAN_TASK set execs the worker entry (daemon/agent/worker-main.ts):
// its exit codes, signals and checks are the CLI's and the daemon's.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { ROOT } from "../helpers/cli.js";
import { chatHome, driveChat, PNG_1X1, waitFor } from "./helpers.js";

const WORKER = { AGENT_KANBAN_TASK: "t_7" };

/** A worker is always spawned by a running daemon (it never starts one itself): start it first. */
async function workerHome(...args: Parameters<typeof chatHome>): ReturnType<typeof chatHome> {
  const h = await chatHome(...args);
  const started = await h.cli(["daemon", "start"]);
  if (started.code !== 0) throw new Error(started.stderr);
  return h;
}

async function sessionCount(home: string): Promise<number> {
  const client = await connectDaemon({ home });
  try {
    return (await client.call("chat.sessions.list", {})).sessions.length;
  } finally {
    client.close();
  }
}

test("a kanban worker that stays rate limited exits with 75, so its task goes back to ready", async () => {
  const h = await workerHome({ script: [{ status: 429, retryAfter: 0 }], loop: true }, "  max_retries: 1\n");
  try {
    const r = await h.chat(["-q", "do the task"], { env: WORKER });
    assert.is(r.code, 75, r.stderr);
    assert.match(r.stderr, /rate limit/i);
    assert.ok(h.fake.requests.length >= 1);
  } finally {
    await h.dispose();
  }
});

test("a kanban worker stopped at --max-turns exits with 1", async () => {
  const h = await workerHome({ script: [{ toolCalls: [{ name: "list_files", arguments: { path: "." } }] }], loop: true });
  try {
    const r = await h.chat(["-q", "loop forever", "--max-turns", "1", "--json"], { env: WORKER });
    assert.is(r.code, 1, r.stderr);
    assert.is(JSON.parse(r.stdout).stop_reason, "max_turns");
  } finally {
    await h.dispose();
  }
});

test("a kanban worker interrupted by SIGINT stops its turn and exits with 130", async () => {
  const h = await workerHome({ script: [{ stall: true, text: "thinking" }], loop: true });
  try {
    const chat = driveChat(h, ["-q", "think hard"], WORKER);
    await waitFor("the worker's first model call", () => h.fake.requests.length >= 1, 15_000);
    chat.child.kill("SIGINT");
    assert.is(await chat.end(), 130, chat.err);
  } finally {
    await h.dispose();
  }
});

test("a kanban worker refuses an attachment that is not an image, before any session is created", async () => {
  const h = await workerHome({ script: [{ text: "never" }] });
  try {
    const notes = join(h.home, "notes.txt");
    writeFileSync(notes, "not a picture\n");
    const r = await h.chat(["-q", "look", "--image", notes], { env: WORKER });
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /is not a PNG, JPEG, GIF or WebP image/);
    assert.is(h.fake.requests.length, 0);
    assert.is(await sessionCount(h.home), 0);
  } finally {
    await h.dispose();
  }
});

test("a kanban worker sends an attached image as a typed data URL, as a daemon turn does", async () => {
  const h = await workerHome({ script: [{ text: "a pixel" }] });
  try {
    const png = join(h.home, "PIXEL.PNG");
    writeFileSync(png, PNG_1X1);
    const r = await h.chat(["-q", "what is this?", "--image", png], { env: WORKER });
    assert.is(r.code, 0, r.stderr);
    const user = h.fake.requests[0]!.body.messages.at(-1);
    assert.is(user.content[1].image_url.url, `data:image/png;base64,${PNG_1X1.toString("base64")}`);
  } finally {
    await h.dispose();
  }
});

test("a kanban worker validates config.yaml as the daemon does", async () => {
  const h = await workerHome({ script: [{ text: "never" }] });
  try {
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    // Edited after the daemon started: the daemon still runs on the previous config.
    writeFileSync(join(h.home, "config.yaml"), `_config_version: 13\nmodel:\n  base_url: ${h.fake.baseUrl}\n  name: fake-model\nagent:\n  max_turns: lots\n`);
    const r = await h.chat(["-q", "do the task"], { env: WORKER });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /max_turns/);
    assert.is(h.fake.requests.length, 0);
  } finally {
    await h.dispose();
  }
});

test("a kanban worker whose daemon is gone fails and starts no daemon of its own", async () => {
  const h = await chatHome();
  try {
    const r = await h.chat(["-q", "do the task"], { env: WORKER });
    assert.is.not(r.code, 0);
    assert.match(r.stderr, /no daemon is running .*a kanban worker never starts one/);
    assert.not.ok(existsSync(join(h.home, "daemon.sock")), "no daemon socket appeared");
    assert.is(h.fake.requests.length, 0);
  } finally {
    await h.dispose();
  }
});

test("the CLI imports no daemon code: it execs the worker entry by its path", () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : []));
  const offenders = files(join(ROOT, "cli")).filter((f) => /(?:from|import\()\s*["'][./]*daemon\//.test(readFileSync(f, "utf8")));
  assert.equal(offenders, []);
});

test.run();

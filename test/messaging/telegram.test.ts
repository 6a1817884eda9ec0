import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, driveChat, waitFor } from "../agent/helpers.js";
import { startFakeProxy, startFakeTelegram, type FakeTelegram } from "../fixtures/fake-telegram.js";
import type { FakeModel, RecordedRequest } from "../fixtures/fake-model-server.js";

/**
 * The Telegram adapter through grammY against a fake Bot API on loopback (`telegram.api_root`),
 * with a real daemon and the fake model: what the chat receives is what the fake recorded.
 */
const OWNER = 111;
const tg: FakeTelegram = await startFakeTelegram();
/** The model answers `echo: <last user text>`; a prompt `stall` hangs until interrupted. */
let stallNext = false;
const lastUser = (r: RecordedRequest): string => {
  const users = (r.body?.messages ?? []).filter((m: { role: string }) => m.role === "user");
  const c = users[users.length - 1]?.content;
  return typeof c === "string" ? c : Array.isArray(c) ? c.map((p: { text?: string }) => p.text ?? "[image]").join(" ") : "";
};
const h = await chatHome(
  {
    respond: (r) => {
      const text = lastUser(r);
      if (text.includes("stall") && stallNext) return { stall: true };
      if (text.includes("slow")) return { text: `**echo**: ${text}`, chunkDelayMs: 150, chunkChars: 4 };
      return { text: `**echo**: ${text}` };
    },
  },
  `telegram:\n  enabled: true\n  api_root: ${tg.apiRoot}\n  allow_users: ["${OWNER}"]\n`,
);
h.env.TELEGRAM_BOT_TOKEN = tg.token;
// A loaded machine can take long to start a daemon; the CLI must not give up on it meanwhile.
h.env.AGENT_DAEMON_START_TIMEOUT_MS = "60000";
const fake: FakeModel = h.fake;

test.after(async () => {
  await h.dispose();
});

const sentTo = (chat: number, re: RegExp) => tg.sent.filter((s) => s.chat_id === String(chat) && re.test(s.text ?? ""));
const waitSent = (chat: number, re: RegExp, timeoutMs = 15_000) =>
  waitFor(
    () => `a message to ${chat} matching ${re}; sent: ${JSON.stringify(tg.sent.map((s) => [s.chat_id, s.text]))}\n${daemonLog()}`,
    () => sentTo(chat, re)[0],
    timeoutMs,
  );
/** The daemon log's stop lines (a failure says why the daemon stopped, if it did). */
const daemonLog = () => {
  try {
    return readFileSync(join(h.home, "logs", "daemon.log"), "utf8")
      .split("\n")
      .filter((l) => /stopping|error|warn/i.test(l))
      .slice(-15)
      .join("\n");
  } catch {
    return "";
  }
};
const status = async () =>
  JSON.parse((await h.cli(["channels", "status", "--json"])).stdout) as { channels: Array<Record<string, any>>; pendingInbound: number };

test("a message from the owner becomes a turn of a messaging session; the reply arrives as Telegram HTML", async () => {
  // Adapters start once the daemon is ready.
  const s = await waitFor("the adapter running", async () => {
    const x = await status();
    return x.channels[0]?.state === "running" ? x : null;
  });
  assert.is(s.channels.length, 1, JSON.stringify(s));
  assert.is(s.channels[0]!.platform, "telegram");
  assert.is(s.channels[0]!.state, "running");
  await waitFor("the command menu", () => tg.calls.includes("setMyCommands"));
  tg.push({ chat: OWNER, text: "hello there" });
  const reply = await waitSent(OWNER, /hello there/);
  assert.is(reply.text, "<b>echo</b>: hello there");
  assert.is(reply.parse_mode, "HTML");
  const list = JSON.parse((await h.cli(["sessions", "list", "--json", "--kind", "messaging"])).stdout);
  const sessions = list.sessions ?? list;
  assert.ok(
    sessions.some((x: { kind: string; source?: string }) => x.kind === "messaging" && x.source === "telegram"),
    JSON.stringify(list),
  );
});

test("an outsider gets no turn, and is counted and logged with its sender id", async () => {
  const before = fake.requests.length;
  tg.push({ chat: 999, text: "let me in" });
  await waitFor("the refusal to be counted", async () => (await status()).channels[0]!.counts.refused >= 1);
  assert.is(fake.requests.length, before, "no model call");
  assert.is(sentTo(999, /./).length, 0);
  const log = (await h.cli(["logs", "--lines", "300"])).stdout;
  assert.match(log, /999/);
});

test("messages sent during a turn wait in order and do not start a second turn", async () => {
  tg.push({ chat: OWNER, text: "slow one" });
  tg.push({ chat: OWNER, text: "second" });
  tg.push({ chat: OWNER, text: "third" });
  await waitSent(OWNER, /third/);
  const order = tg.sent.filter((s) => /slow one|second|third/.test(s.text ?? "")).map((s) => /(slow one|second|third)/.exec(s.text ?? "")![1]);
  assert.equal(order, ["slow one", "second", "third"]);
  // Each turn saw the one before it: they ran one after the other in the same session.
  const third = fake.requests.find((r) => lastUser(r) === "third")!;
  const users = third.body.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content);
  assert.equal(users.slice(-3), ["slow one", "second", "third"]);
});

test("/stop interrupts the running turn at once", async () => {
  stallNext = true;
  const n = fake.requests.length;
  tg.push({ chat: OWNER, text: "stall forever" });
  await waitFor("the stalled model call", () => fake.requests.length > n);
  tg.push({ chat: OWNER, text: "/stop" });
  await waitSent(OWNER, /^Stopped\.$/);
  stallNext = false;
  tg.push({ chat: OWNER, text: "after stop" });
  await waitSent(OWNER, /after stop/);
});

test("a reply Telegram rejects as HTML is sent again as plain text", async () => {
  tg.rejectHtml = true;
  try {
    tg.push({ chat: OWNER, text: "plain please" });
    const r = await waitSent(OWNER, /plain please/);
    assert.is(r.parse_mode, undefined);
    assert.is(r.text, "echo: plain please");
  } finally {
    tg.rejectHtml = false;
  }
});

test("a photo reaches the model as an image part", async () => {
  tg.push({ chat: OWNER, text: "what is this", photo: true });
  await waitSent(OWNER, /what is this/);
  const req = fake.requests.find((r) => lastUser(r).includes("what is this"))!;
  const users = req.body.messages.filter((m: { role: string }) => m.role === "user");
  const parts = users[users.length - 1].content;
  assert.ok(Array.isArray(parts) && parts.some((p: { type: string }) => p.type === "image_url"), JSON.stringify(parts).slice(0, 300));
});

test("a cron job's output is delivered to the chat", async () => {
  const add = await h.cli(["cron", "add", "every 1h", "--prompt", "cron report", "--deliver", `telegram:${OWNER}`, "--json"]);
  assert.is(add.code, 0, add.stderr);
  const job = JSON.parse(add.stdout).job ?? JSON.parse(add.stdout);
  const run = await h.cli(["cron", "run", job.id, "--json"]);
  assert.is(run.code, 0, run.stderr);
  await waitSent(OWNER, /cron report/);
  const logs = await waitFor("the run's delivery", async () => {
    const out = JSON.parse((await h.cli(["cron", "logs", job.id, "--json"])).stdout);
    const runs = out.runs ?? out;
    return runs.find((r: { delivery: { status: string } }) => r.delivery.status === "delivered");
  });
  assert.is(logs.delivery.detail, `telegram:${OWNER}`);
});

test("a chat subscribed to the board hears of a completed task, with the summary's first line", async () => {
  tg.push({ chat: OWNER, text: "/kanban subscribe" });
  await waitSent(OWNER, /^Subscribed to board default/);
  const created = JSON.parse((await h.cli(["kanban", "create", "ship it", "--json"])).stdout);
  const id = created.task?.id ?? created.tasks?.[0]?.id ?? created.id;
  const done = await h.cli(["kanban", "complete", id, "--summary", "Shipped v2\nwith details", "--json"]);
  assert.is(done.code, 0, done.stderr);
  const msg = await waitSent(OWNER, new RegExp(`Task ${id}`));
  assert.match(msg.text!, /"ship it" completed: Shipped v2/);
  assert.not.match(msg.text!, /with details/);
});

test("/handoff in line-mode chat: the session continues in the chat, and records the handoff", async () => {
  const chat = driveChat(h);
  chat.send("remember the word pelican");
  await chat.expect(/echo/);
  const from = chat.out.length;
  chat.send(`/handoff telegram ${OWNER}`);
  await chat.expect(/handed off: this session continues in telegram chat 111/, from);
  await chat.end();
  const note = await waitSent(OWNER, /continues session/);
  const sessionId = /continues session (\S+)/.exec(note.text!)![1]!;
  tg.push({ chat: OWNER, text: "what was the word?" });
  await waitSent(OWNER, /what was the word/);
  const req = fake.requests.find((x) => lastUser(x) === "what was the word?")!;
  assert.ok(JSON.stringify(req.body.messages).includes("pelican"), "the chat's turn has the line-mode session's history");
  const shown = await h.cli(["sessions", "show", sessionId, "--json"]);
  assert.match(shown.stdout, /handed off to telegram chat 111/);
});

test("an inbound message stored before a restart is handled after it", async () => {
  stallNext = true;
  const n = fake.requests.length;
  const id = tg.push({ chat: OWNER, text: "stall then survive" });
  await waitFor("the stalled model call", () => fake.requests.length > n);
  assert.ok(tg.ackedOffset > id, "acknowledged once stored");
  stallNext = false;
  const stop = await h.cli(["daemon", "stop"]);
  assert.is(stop.code, 0, stop.stderr);
  // Started again by the next command: the stored message is handled.
  await status();
  await waitSent(OWNER, /stall then survive/, 20_000);
});

test.run();

// The proxy: a second home whose TELEGRAM_PROXY wins over telegram.proxy_url.
const proxy = await startFakeProxy();
const p = await chatHome(
  { script: [{ text: "via proxy" }], loop: true },
  `telegram:\n  enabled: true\n  api_root: ${tg.apiRoot}\n  proxy_url: http://127.0.0.1:9\n  allow_all_users: true\n`,
);
const proxyTest = (await import("uvu")).suite("telegram proxy");
proxyTest.after(async () => {
  await p.dispose();
  await proxy.close();
  await tg.close();
});
proxyTest("TELEGRAM_PROXY wins over telegram.proxy_url, and the Bot API is reached through its tunnel", async () => {
  p.env.TELEGRAM_BOT_TOKEN = tg.token;
  p.env.TELEGRAM_PROXY = proxy.url;
  p.env.AGENT_DAEMON_START_TIMEOUT_MS = "60000";
  const s = await waitFor("the adapter started", async () => {
    const x = JSON.parse((await p.cli(["channels", "status", "--json"])).stdout);
    return x.channels[0] && x.channels[0].state !== "starting" ? x : null;
  });
  assert.is(s.channels[0].state, "running", JSON.stringify(s));
  assert.match(s.channels[0].detail, /proxy/);
  assert.ok(proxy.tunnels.includes(tg.apiRoot.replace("http://", "")), JSON.stringify(proxy.tunnels));
});
proxyTest.run();

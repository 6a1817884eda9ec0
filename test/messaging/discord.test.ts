import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, PNG_1X1, waitFor } from "../agent/helpers.js";
import { BOT_ID, type FakeDiscord, startFakeDiscord } from "../fixtures/fake-discord.js";
import type { RecordedRequest } from "../fixtures/fake-model-server.js";

/**
 * The Discord adapter through the real discord.js against a fake Discord on loopback: the REST
 * API (`discord.api_root`) hands out a fake gateway (hello, identify, ready, MESSAGE_CREATE);
 * a real daemon runs the turns against the fake model; what the chat gets is what the fake REST
 * API recorded.
 */
const OWNER = "111000000000000001";
const STRANGER = "222000000000000002";
const DM = "700000000000000001";
const GUILD = "800000000000000001";
const ROOM = "500000000000000001";
const FREE = "501000000000000001";
const THREAD = "600000000000000001";

const dc: FakeDiscord = await startFakeDiscord();
dc.setChannel(ROOM, { guild: GUILD });
dc.setChannel(FREE, { guild: GUILD });
dc.setChannel(THREAD, { guild: GUILD, parent: ROOM, thread: true });

const lastUser = (r: RecordedRequest): string => {
  const users = (r.body?.messages ?? []).filter((m: { role: string }) => m.role === "user");
  const c = users[users.length - 1]?.content;
  return typeof c === "string" ? c : Array.isArray(c) ? c.map((p: { text?: string }) => p.text ?? "[image]").join(" ") : "";
};
const CHART = join(mkdtempSync(join(tmpdir(), "dc-chart-")), "chart.png");
writeFileSync(CHART, PNG_1X1);
const LONG = Array.from({ length: 3 }, (_, i) => `${String(i).repeat(1500)}`).join("\n\n");
const h = await chatHome(
  {
    respond: (r) => {
      const text = lastUser(r);
      if (text.includes("long please")) return { text: LONG };
      if (text.includes("draw it")) return { text: `Here:\n\n![chart](${CHART})` };
      return { text: `echo: ${text}` };
    },
  },
  [
    "discord:",
    "  enabled: true",
    `  api_root: ${dc.api}`,
    `  allow_users: ["${OWNER}"]`,
    `  free_channels: ["${FREE}"]`,
    "  max_attachment_bytes: 1000",
    "",
  ].join("\n"),
);
h.env.DISCORD_BOT_TOKEN = dc.token;
h.env.AGENT_DAEMON_START_TIMEOUT_MS = "60000";

test.after(async () => {
  await h.dispose();
  await dc.close();
});

const daemonLog = () => {
  try {
    return readFileSync(join(h.home, "logs", "daemon.log"), "utf8")
      .split("\n")
      .filter((l) => /discord|"level":"error"/i.test(l))
      .slice(-10)
      .join("\n");
  } catch {
    return "";
  }
};
const postsTo = (channel: string, re: RegExp) => dc.posts.filter((p) => p.channel === channel && re.test(p.content));
const waitPost = (channel: string, re: RegExp, timeoutMs = 20_000) =>
  waitFor(
    () => `a post to ${channel} matching ${re}; posts: ${JSON.stringify(dc.posts.map((p) => [p.channel, p.content.slice(0, 80)]))}\n${daemonLog()}`,
    () => postsTo(channel, re)[0],
    timeoutMs,
  );
const status = async () => JSON.parse((await h.cli(["channels", "status", "--json"])).stdout) as { channels: Array<Record<string, any>> };
const running = () =>
  waitFor(
    () => `the discord adapter running\n${daemonLog()}`,
    async () => (await status()).channels.find((c) => c.platform === "discord" && c.state === "running"),
    30_000,
  );
/** Restart the daemon with `env` added (the adapter reads its settings at start). */
async function restartWith(env: NodeJS.ProcessEnv): Promise<void> {
  const stop = await h.cli(["daemon", "stop"]);
  assert.is(stop.code, 0, stop.stderr);
  Object.assign(h.env, env);
  const before = dc.identifies.length;
  await running();
  await waitFor("a new gateway session", () => dc.identifies.length > before);
}

test("a DM → a turn with the fake model → the reply, quoting the message (reply-to mode first); the gateway got the intents", async () => {
  const s = await running();
  assert.is(s.platform, "discord");
  await dc.ready();
  const { GatewayIntentBits: I } = await import("discord.js");
  const intents = dc.identifies[0]!.intents;
  for (const bit of [I.Guilds, I.GuildMessages, I.DirectMessages, I.MessageContent]) assert.ok((intents & bit) === bit, `intent ${bit} in ${intents}`);
  assert.is(dc.identifies[0]!.token, dc.token);
  const id = dc.push({ channel: DM, author: OWNER, content: "hello discord" });
  const reply = await waitPost(DM, /hello discord/);
  assert.is(reply.content, "echo: hello discord");
  assert.is(reply.replyTo, id);
  assert.equal(reply.body.allowed_mentions, { parse: [], replied_user: false });
  const list = JSON.parse((await h.cli(["sessions", "list", "--json", "--kind", "messaging"])).stdout);
  const sessions = list.sessions ?? list;
  assert.ok(
    sessions.some((x: { source?: string }) => x.source === "discord"),
    JSON.stringify(list),
  );
});

test("a long reply is split at 2,000 characters; with mode first only the first piece quotes", async () => {
  const id = dc.push({ channel: DM, author: OWNER, content: "long please" });
  await waitFor("three pieces", () => dc.posts.filter((p) => p.channel === DM && /^2+$/.test(p.content)).length === 1, 20_000);
  const pieces = dc.posts.filter((p) => p.channel === DM && /^([012])\1+$/.test(p.content));
  assert.is(pieces.length, 3);
  assert.ok(pieces.every((p) => p.content.length <= 2000));
  assert.equal(
    pieces.map((p) => p.replyTo),
    [id, null, null],
  );
});

test("an image the agent wrote as a Markdown image of a local file is uploaded as a file", async () => {
  dc.push({ channel: DM, author: OWNER, content: "draw it" });
  await waitPost(DM, /^Here:$/);
  const file = await waitFor("the upload", () => dc.posts.find((p) => p.channel === DM && Array.isArray(p.body.files)));
  assert.equal(file.body.files, ["chart.png"]);
});

test("in a guild channel a mention is needed, unless the channel is free; an outsider gets nothing", async () => {
  const before = h.fake.requests.length;
  dc.push({ channel: ROOM, guild: GUILD, author: OWNER, content: "no mention here" });
  dc.push({ channel: ROOM, guild: GUILD, author: STRANGER, content: "stranger asks", mentionBot: true });
  dc.push({ channel: ROOM, guild: GUILD, author: OWNER, content: "with a mention", mentionBot: true });
  const r = await waitPost(ROOM, /with a mention/);
  assert.is(r.content, "echo: with a mention", "the mention is taken out of the prompt");
  dc.push({ channel: FREE, guild: GUILD, author: OWNER, content: "free talk" });
  await waitPost(FREE, /free talk/);
  assert.is(h.fake.requests.length, before + 2, "only the mentioned and the free-channel messages got turns");
  assert.is(postsTo(ROOM, /no mention|stranger/).length, 0);
  assert.ok(!JSON.stringify(h.fake.requests.slice(before).map((x) => x.body)).includes(`<@${BOT_ID}>`));
});

test("`agent channels allow discord <channel> --group` lists the channel in discord.allow_channels: its members are answered", async () => {
  const r = await h.cli(["channels", "allow", "discord", ROOM, "--group"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(readFileSync(join(h.home, "config.yaml"), "utf8"), new RegExp(`allow_channels:[\\s\\S]*${ROOM}`));
  dc.push({ channel: ROOM, guild: GUILD, author: STRANGER, content: "now let in", mentionBot: true });
  await waitPost(ROOM, /now let in/);
});

test("a thread is its own session, answered in the thread; once the bot answered there, no mention is needed", async () => {
  dc.push({ channel: THREAD, guild: GUILD, author: OWNER, content: "in the thread", mentionBot: true });
  await waitPost(THREAD, /in the thread/);
  dc.push({ channel: THREAD, guild: GUILD, author: OWNER, content: "follow-up without a mention" });
  await waitPost(THREAD, /follow-up without a mention/);
  const list = JSON.parse((await h.cli(["sessions", "list", "--json", "--kind", "messaging"])).stdout);
  const sessions = (list.sessions ?? list) as Array<{ source?: string }>;
  // The DM, the room, the free channel and the thread: four chats, four sessions.
  assert.is(sessions.filter((x) => x.source === "discord").length, 4, JSON.stringify(sessions));
});

test("attachments: a PDF is refused by type and a big text by size (config), each with a one-line reason; text and images reach the model", async () => {
  const before = h.fake.requests.length;
  dc.push({
    channel: DM,
    author: OWNER,
    content: "see attached",
    attachments: [
      { filename: "report.pdf", content_type: "application/pdf", data: Buffer.from("%PDF-1.4 tiny") },
      { filename: "big.txt", content_type: "text/plain", data: Buffer.alloc(1500, "b") },
      { filename: "notes.txt", content_type: "text/plain; charset=utf-8", data: Buffer.from("the secret word is heron") },
      { filename: "pic.png", content_type: "image/png", data: PNG_1X1 },
    ],
  });
  const refusal = await waitPost(DM, /refused/);
  const lines = refusal.content.split("\n");
  assert.is(lines.length, 2, refusal.content);
  assert.match(lines[0]!, /^Attachment "report\.pdf" refused: only images and text files are accepted/);
  assert.match(lines[1]!, /^Attachment "big\.txt" refused: 1500 bytes is over the limit of 1000 bytes/);
  await waitPost(DM, /echo: see attached/);
  const req = h.fake.requests.slice(before).find((r) => lastUser(r).includes("see attached"))!;
  const users = req.body.messages.filter((m: { role: string }) => m.role === "user");
  const parts = users[users.length - 1].content;
  assert.ok(Array.isArray(parts), JSON.stringify(parts).slice(0, 300));
  assert.ok(
    parts.some((p: { type: string }) => p.type === "image_url"),
    "the image",
  );
  assert.match(JSON.stringify(parts), /the secret word is heron/);
  assert.not.match(JSON.stringify(parts), /bbbbbbbbbb/);
});

test("an attachment larger than it said: refused by its Content-Length before reading, and a body that never ends is read only to the limit", async () => {
  dc.push({
    channel: DM,
    author: OWNER,
    content: "liars attached",
    attachments: [
      // Both claim 10 bytes (under the limit of 1000): one is served whole with its true Content-Length, one never ends.
      { filename: "declared.txt", content_type: "text/plain", size: 10, data: Buffer.alloc(200_000, "d") },
      { filename: "endless.txt", content_type: "text/plain", size: 10, endless: true, data: Buffer.alloc(16 * 1024, "e") },
    ],
  });
  await waitPost(DM, /echo: liars attached/, 30_000);
  const refusal = await waitPost(DM, /endless\.txt" refused/);
  const lines = refusal.content.split("\n");
  assert.match(lines[0]!, /^Attachment "declared\.txt" refused: it is larger than the 10 bytes it said, over the limit of 1000 bytes/);
  assert.match(lines[1]!, /^Attachment "endless\.txt" refused: it is larger than the 10 bytes it said/);
  // The endless body was cut once the daemon had read past the limit: what the fake sent is what socket buffers hold, not a gigabyte.
  await waitFor("the endless response to end", () => dc.served.has("endless.txt"));
  assert.ok(dc.served.get("endless.txt")! < 16 * 1024 * 1024, `served ${dc.served.get("endless.txt")} bytes`);
});

test("the environment wins: DISCORD_ALLOW_ANY_ATTACHMENT, DISCORD_MAX_ATTACHMENT_BYTES, and DISCORD_REPLY_TO_MODE=all", async () => {
  await restartWith({ DISCORD_ALLOW_ANY_ATTACHMENT: "true", DISCORD_MAX_ATTACHMENT_BYTES: "100", DISCORD_REPLY_TO_MODE: "all" });
  const from = dc.posts.length;
  const id = dc.push({
    channel: DM,
    author: OWNER,
    content: "env rules",
    attachments: [
      { filename: "report.pdf", content_type: "application/pdf", data: Buffer.from("%PDF-1.4 tiny") },
      { filename: "mid.txt", content_type: "text/plain", data: Buffer.alloc(500, "m") },
    ],
  });
  const refusal = await waitPost(DM, /mid\.txt" refused/);
  assert.match(refusal.content, /^Attachment "mid\.txt" refused: 500 bytes is over the limit of 100 bytes/);
  assert.not.match(refusal.content, /report\.pdf/);
  const reply = await waitPost(DM, /echo: env rules/);
  assert.match(reply.content, /report\.pdf \(application\/pdf, 13 bytes\), saved at /);
  const longId = dc.push({ channel: DM, author: OWNER, content: "long please" });
  await waitFor("three pieces", () => dc.posts.slice(from).filter((p) => /^2+$/.test(p.content)).length === 1, 20_000);
  const pieces = dc.posts.slice(from).filter((p) => p.channel === DM && /^([012])\1+$/.test(p.content));
  assert.equal(
    pieces.map((p) => p.replyTo),
    [longId, longId, longId],
  );
  assert.is(reply.replyTo, id);
});

test("DISCORD_REPLY_TO_MODE=off: no piece quotes", async () => {
  await restartWith({ DISCORD_REPLY_TO_MODE: "off" });
  dc.push({ channel: DM, author: OWNER, content: "quiet reply" });
  const r = await waitPost(DM, /quiet reply/);
  assert.is(r.replyTo, null);
  assert.is(r.body.message_reference, undefined);
});

test.run();

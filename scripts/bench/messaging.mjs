#!/usr/bin/env node
// Benchmark: the messaging channel layer (docs/messaging.md, docs/benchmarks.md), against the
// fake Telegram Bot API (test/fixtures/fake-telegram.ts) and the fake model, both in this
// process, with a real daemon on a temp home (grammY long polling on loopback).
//
//  1. inbound → turn: from the moment an update is available to the adapter until the model
//     receives the turn's request, p50/p95, against the same turn started by a direct
//     `chat.send` over the socket (the baseline, same run): the difference is the layer's cost
//     (poll answer, grammY, the store before acknowledgement, the chat queue).
//  2. load: --rate msg/s (default 50) spread over --chats chats (default 20) for --seconds (10):
//     every message must get its reply, and each chat's replies must come in the order sent.
//
// Usage (after `npm run build`): node scripts/bench/messaging.mjs [--samples 40] [--rate 50]
//        [--chats 20] [--seconds 10] [--platform telegram|line|discord|matrix]
// --platform line: signed webhook POSTs to the LINE listener (mounted on the gateway) and the
// fake LINE Messaging API (test/fixtures/fake-line-api.ts) through the real @line/bot-sdk; for
// LINE "inbound" starts when the POST is sent, and the webhook's own answer time (its 200 comes
// only after the event is stored) is printed too.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { register } from "tsx/esm/api";
import { agentCli } from "./lib/daemon-client.mjs";
import { rpcClient } from "./lib/measure.mjs";

register();
const { startFakeTelegram } = await import("../../test/fixtures/fake-telegram.ts");
const { startFakeLineApi, lineSignature } = await import("../../test/fixtures/fake-line-api.ts");
const { startFakeModel } = await import("../../test/fixtures/fake-model-server.ts");
const { startFakeDiscord } = await import("../../test/fixtures/fake-discord.ts");
const { startFakeMatrix } = await import("../../test/fixtures/fake-matrix.ts");

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const SAMPLES = Number(opt("samples", 40));
const RATE = Number(opt("rate", 50));
const CHATS = Number(opt("chats", 20));
const SECONDS = Number(opt("seconds", 10));
const PLATFORM = opt("platform", "telegram");
if (!["telegram", "line", "discord", "matrix"].includes(PLATFORM)) throw new Error(`no fake for ${PLATFORM} yet`);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const now = () => performance.now();

/** Prompt text → when the model got it. */
const arrived = new Map();
const lastUserText = (body) => {
  const users = (body?.messages ?? []).filter((m) => m.role === "user");
  const c = users[users.length - 1]?.content;
  return typeof c === "string" ? c : "";
};
const fakeModel = await startFakeModel({
  record: false,
  onRequest: (body) => arrived.set(lastUserText(body), now()),
  respond: () => ({ text: "ok" }),
});
const home = mkdtempSync(join(tmpdir(), "bench-msg-"));
const modelConfig = `_config_version: 13\nmodel:\n  base_url: ${fakeModel.baseUrl}\n  name: fake-model\napprovals:\n  mode: off\n`;

/**
 * The platform under test: `push` delivers one inbound message from `chat`, `sent()` counts the
 * replies the fake platform received, `ready()` waits until the adapter receives.
 */
async function telegramPlatform() {
  const tg = await startFakeTelegram();
  writeFileSync(join(home, "config.yaml"), `${modelConfig}telegram:\n  enabled: true\n  api_root: ${tg.apiRoot}\n  allow_all_users: true\n`);
  writeFileSync(join(home, ".env"), `TELEGRAM_BOT_TOKEN=${tg.token}\n`);
  return {
    push: (chat, text) => tg.push({ chat, text }),
    sent: () => tg.sent.length,
    ready: () => waitUntil(() => tg.calls.includes("getUpdates"), 20_000, "long polling"),
    acks: null,
    close: () => tg.close(),
  };
}

async function linePlatform() {
  const api = await startFakeLineApi();
  const secret = "bench-channel-secret";
  writeFileSync(join(home, "config.yaml"), `${modelConfig}line:\n  enabled: true\n  allow_all_users: true\n`);
  writeFileSync(
    join(home, ".env"),
    `LINE_CHANNEL_SECRET=${secret}\nLINE_CHANNEL_ACCESS_TOKEN=bench-token\nLINE_API_BASE_URL=${api.url}\nLINE_SLOW_RESPONSE_THRESHOLD=0\n`,
  );
  let webhook = "";
  let seq = 0;
  const acks = [];
  // One keep-alive connection per chat: LINE's deliveries of one chat arrive one after another,
  // so the order the daemon keeps is the order the chat's messages were sent.
  const agents = new Map();
  const agentFor = (chat) => {
    if (!agents.has(chat)) agents.set(chat, new http.Agent({ keepAlive: true, maxSockets: 1 }));
    return agents.get(chat);
  };
  const post = (chat, body) =>
    new Promise((resolve, reject) => {
      const url = new URL(webhook);
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          agent: agentFor(chat),
          headers: { "content-type": "application/json", "x-line-signature": lineSignature(body, secret), "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`webhook answered ${res.statusCode}`))));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  return {
    push: (chat, text) => {
      seq++;
      const event = {
        type: "message",
        mode: "active",
        timestamp: Date.now(),
        webhookEventId: `bench${process.pid}x${seq}`,
        deliveryContext: { isRedelivery: false },
        replyToken: `bench-reply-${seq}`,
        source: { type: "user", userId: `Ubench${chat}` },
        message: { id: String(seq), type: "text", text },
      };
      const t0 = now();
      post(chat, JSON.stringify({ destination: "Ubot", events: [event] })).then(
        () => acks.push(now() - t0),
        (error) => console.error(String(error)),
      );
    },
    sent: () => api.messages().length,
    ready: async () => {
      const status = JSON.parse(await agentCli(home, ["daemon", "status", "--json"]));
      webhook = `${status.gateway_url}/line/webhook`;
    },
    acks,
    close: async () => {
      for (const a of agents.values()) a.destroy();
      await api.close();
    },
  };
}

/** Discord: each chat a DM channel; the fake gateway dispatches MESSAGE_CREATE, the fake REST API counts the replies. */
async function discordPlatform() {
  const dc = await startFakeDiscord();
  writeFileSync(join(home, "config.yaml"), `${modelConfig}discord:\n  enabled: true\n  api_root: ${dc.api}\n  allow_all_users: true\n`);
  writeFileSync(join(home, ".env"), `DISCORD_BOT_TOKEN=${dc.token}\n`);
  return {
    push: (chat, text) => dc.push({ channel: String(700000000000000000n + BigInt(chat)), author: "111000000000000001", content: text }),
    sent: () => dc.posts.length,
    ready: () => dc.ready(),
    acks: null,
    close: () => dc.close(),
  };
}

/** Matrix: each chat a two-member room (a DM); the fake homeserver's long-polling sync delivers, its send counts. */
async function matrixPlatform() {
  const mx = await startFakeMatrix();
  const room = (chat) => `!c${chat}:fake.test`;
  for (const chat of [1, ...Array.from({ length: CHATS }, (_, i) => 1000 + i)]) mx.addRoom(room(chat), ["@user:fake.test"]);
  writeFileSync(
    join(home, "config.yaml"),
    `${modelConfig}matrix:\n  enabled: true\n  homeserver: ${mx.url}\n  user_id: "@agent:fake.test"\n  allow_all_users: true\n`,
  );
  writeFileSync(join(home, ".env"), `MATRIX_ACCESS_TOKEN=${mx.token}\n`);
  return {
    push: (chat, text) => mx.push(room(chat), "@user:fake.test", text),
    sent: () => mx.sent.length,
    // Running once a sync after the first (the adapter answers only what comes after its first sync).
    ready: () => waitUntil(() => mx.syncs.filter((x) => x !== null).length > 0, 30_000, "the matrix sync"),
    acks: null,
    close: () => mx.close(),
  };
}

const waitUntil = async (check, timeoutMs, what) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
};

const platform = await { line: linePlatform, discord: discordPlatform, matrix: matrixPlatform, telegram: telegramPlatform }[PLATFORM]();
try {
  await agentCli(home, ["daemon", "start"]);
  await platform.ready();

  // 1. Latency: one chat, one message at a time (after a warm-up that creates the session).
  const viaChat = [];
  for (let i = -3; i < SAMPLES; i++) {
    const text = `lat ${i}`;
    const replies = platform.sent();
    const t0 = now();
    platform.push(1, text);
    await waitUntil(() => arrived.has(text), 10_000, text);
    if (i >= 0) viaChat.push(arrived.get(text) - t0);
    await waitUntil(() => platform.sent() > replies, 10_000, `reply to ${text}`);
  }
  const { rpc, close } = await rpcClient(home);
  const direct = [];
  const { session } = await rpc.sendRequest("chat.sessions.create", {});
  for (let i = -3; i < SAMPLES; i++) {
    const text = `direct ${i}`;
    const t0 = now();
    await rpc.sendRequest("chat.send", { sessionId: session.id, prompt: text });
    if (i >= 0) direct.push(arrived.get(text) - t0);
  }
  close();

  // 2. Load: RATE msg/s over CHATS chats for SECONDS; replies counted per chat, in order.
  const total = RATE * SECONDS;
  const before = platform.sent();
  if (platform.acks) platform.acks.length = 0;
  const sentOrder = new Map();
  const t0 = Date.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const chat = 1000 + (i % CHATS);
    platform.push(chat, `load ${i}`);
    sentOrder.set(chat, [...(sentOrder.get(chat) ?? []), `load ${i}`]);
  }
  const pushedIn = (Date.now() - t0) / 1000;
  await waitUntil(() => platform.sent() - before >= total, 120_000, `${total} replies`);
  const drainedIn = (Date.now() - t0) / 1000;
  // Each chat's model requests arrived in the order its messages were sent.
  let outOfOrder = 0;
  for (const [, texts] of sentOrder) for (let k = 1; k < texts.length; k++) if (!(arrived.get(texts[k]) >= arrived.get(texts[k - 1]))) outOfOrder++;
  const missing = [...sentOrder.values()].flat().filter((t) => !arrived.has(t)).length;

  const p50c = pct(viaChat, 50);
  const p50d = pct(direct, 50);
  console.log(
    `messaging benchmark, ${PLATFORM} (${new Date().toISOString()}, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}, node ${process.version})`,
  );
  console.log(`inbound → model request   p50 ${p50c.toFixed(2)} ms  p95 ${pct(viaChat, 95).toFixed(2)} ms  (${SAMPLES} samples)`);
  console.log(`chat.send → model request p50 ${p50d.toFixed(2)} ms  p95 ${pct(direct, 95).toFixed(2)} ms  (baseline)`);
  console.log(`ratio ${(p50c / p50d).toFixed(2)}x; the layer's own cost (inbound → handed to the turn) p50 ≈ ${(p50c - p50d).toFixed(2)} ms (target < 5 ms)`);
  console.log(
    `load: ${total} messages at ${RATE}/s over ${CHATS} chats, pushed in ${pushedIn.toFixed(1)} s, all answered after ${drainedIn.toFixed(1)} s ` +
      `(ratio ${(drainedIn / SECONDS).toFixed(2)} of the sending time); missing ${missing}, out of order ${outOfOrder}`,
  );
  if (platform.acks?.length)
    console.log(`webhook answer (stored, then 200) under load p50 ${pct(platform.acks, 50).toFixed(2)} ms  p95 ${pct(platform.acks, 95).toFixed(2)} ms`);
  if (missing || outOfOrder) process.exitCode = 1;
} finally {
  await agentCli(home, ["daemon", "stop"]).catch(() => undefined);
  await platform.close();
  await fakeModel.close();
  rmSync(home, { recursive: true, force: true });
}

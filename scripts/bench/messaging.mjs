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
//        [--chats 20] [--seconds 10] [--platform telegram]
// (--platform: telegram now; another platform's fake can be added beside it.)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { register } from "tsx/esm/api";
import { agentCli } from "./lib/daemon-client.mjs";
import { rpcClient } from "./lib/measure.mjs";

register();
const { startFakeTelegram } = await import("../../test/fixtures/fake-telegram.ts");
const { startFakeModel } = await import("../../test/fixtures/fake-model-server.ts");

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
if (PLATFORM !== "telegram") throw new Error(`no fake for ${PLATFORM} yet`);

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
const tg = await startFakeTelegram();
const home = mkdtempSync(join(tmpdir(), "bench-msg-"));
writeFileSync(
  join(home, "config.yaml"),
  `_config_version: 13\nmodel:\n  base_url: ${fakeModel.baseUrl}\n  name: fake-model\napprovals:\n  mode: off\ntelegram:\n  enabled: true\n  api_root: ${tg.apiRoot}\n  allow_all_users: true\n`,
);
writeFileSync(join(home, ".env"), `TELEGRAM_BOT_TOKEN=${tg.token}\n`);

const waitUntil = async (check, timeoutMs, what) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
};

try {
  await agentCli(home, ["daemon", "start"]);
  await waitUntil(() => tg.calls.includes("getUpdates"), 20_000, "long polling");

  // 1. Latency: one chat, one message at a time (after a warm-up that creates the session).
  const viaChat = [];
  for (let i = -3; i < SAMPLES; i++) {
    const text = `lat ${i}`;
    const replies = tg.sent.length;
    const t0 = now();
    tg.push({ chat: 1, text });
    await waitUntil(() => arrived.has(text), 10_000, text);
    if (i >= 0) viaChat.push(arrived.get(text) - t0);
    await waitUntil(() => tg.sent.length > replies, 10_000, `reply to ${text}`);
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
  const before = tg.sent.length;
  const sentOrder = new Map();
  const t0 = Date.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const chat = 1000 + (i % CHATS);
    tg.push({ chat, text: `load ${i}` });
    sentOrder.set(chat, [...(sentOrder.get(chat) ?? []), `load ${i}`]);
  }
  const pushedIn = (Date.now() - t0) / 1000;
  await waitUntil(() => tg.sent.length - before >= total, 120_000, `${total} replies`);
  const drainedIn = (Date.now() - t0) / 1000;
  // Each chat's model requests arrived in the order its messages were sent.
  let outOfOrder = 0;
  for (const [, texts] of sentOrder) for (let k = 1; k < texts.length; k++) if (!(arrived.get(texts[k]) >= arrived.get(texts[k - 1]))) outOfOrder++;
  const missing = [...sentOrder.values()].flat().filter((t) => !arrived.has(t)).length;

  const p50c = pct(viaChat, 50);
  const p50d = pct(direct, 50);
  console.log(`messaging benchmark (${new Date().toISOString()}, load ${loadavg().map((x) => x.toFixed(2)).join(" ")}, node ${process.version})`);
  console.log(`inbound → model request   p50 ${p50c.toFixed(2)} ms  p95 ${pct(viaChat, 95).toFixed(2)} ms  (${SAMPLES} samples)`);
  console.log(`chat.send → model request p50 ${p50d.toFixed(2)} ms  p95 ${pct(direct, 95).toFixed(2)} ms  (baseline)`);
  console.log(`ratio ${(p50c / p50d).toFixed(2)}x; the layer's own cost (inbound → handed to the turn) p50 ≈ ${(p50c - p50d).toFixed(2)} ms (target < 5 ms)`);
  console.log(
    `load: ${total} messages at ${RATE}/s over ${CHATS} chats, pushed in ${pushedIn.toFixed(1)} s, all answered after ${drainedIn.toFixed(1)} s ` +
      `(ratio ${(drainedIn / SECONDS).toFixed(2)} of the sending time); missing ${missing}, out of order ${outOfOrder}`,
  );
  if (missing || outOfOrder) process.exitCode = 1;
} finally {
  await agentCli(home, ["daemon", "stop"]).catch(() => undefined);
  await tg.close();
  await fakeModel.close();
  rmSync(home, { recursive: true, force: true });
}

/**
 * LINE through a real daemon: the webhook mounted on the gateway (a gateway token is set, and
 * LINE's request carries none: the /line/ exemption), the channel layer, a turn against the fake
 * model, and the answer as the fake LINE API received it through the real SDK.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RecordedRequest } from "../fixtures/fake-model-server.js";
import { type FakeLineApi, lineSignature, linePostbackEvent, lineTextEvent, startFakeLineApi } from "../fixtures/fake-line-api.js";
import { killQuietly, launchDaemon, runCli } from "../helpers/cli.js";
import { chatHome, waitFor } from "../agent/helpers.js";

const SECRET = "daemon-test-channel-secret";
const ALLOWED = "Uallowed0000000000000000000000001";
const OTHER = "Uother00000000000000000000000000002";
const CONFIG = `line:\n  enabled: true\n  allow_users: [${ALLOWED}]\n  allow_groups: [Callowedgroup]\n  allow_rooms: [Rallowedroom]\n`;

function lineEnv(api: FakeLineApi, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    AGENT_GATEWAY_PORT: "0",
    AGENT_GATEWAY_TOKEN: "gateway-token-line-never-sends",
    LINE_CHANNEL_SECRET: SECRET,
    LINE_CHANNEL_ACCESS_TOKEN: "daemon-test-access-token",
    LINE_API_BASE_URL: api.url,
    LINE_SLOW_RESPONSE_THRESHOLD: "0",
    ...extra,
  };
}

/**
 * Start the daemon and wait for its LINE adapter: adapters start once the daemon is ready
 * (`agent channels status`), and before that the gateway has no /line/webhook route.
 */
async function launchWithLine(home: string, env: NodeJS.ProcessEnv): Promise<{ pid: number; url: string }> {
  const daemon = await launchDaemon(home, env);
  await waitFor(
    "the LINE adapter running",
    async () => {
      const r = await runCli(["channels", "status", "--json"], { home, env });
      return (JSON.parse(r.stdout).channels as Array<{ platform: string; state: string }>).some((c) => c.platform === "line" && c.state === "running");
    },
    15_000,
  );
  return daemon;
}

async function post(gateway: string, ...events: unknown[]): Promise<number> {
  const body = JSON.stringify({ destination: "Ubot", events });
  const res = await fetch(`${gateway}/line/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-line-signature": lineSignature(body, SECRET) },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

const lastUserText = (r: RecordedRequest) => {
  const msgs = (r.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...msgs].reverse().find((m) => m.role === "user");
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
};

test("a LINE message → a turn with the fake model → the reply LINE receives; each allowlist; duplicates dropped across a restart", async () => {
  const api = await startFakeLineApi();
  const h = await chatHome({ respond: (r) => ({ text: `answer to: ${lastUserText(r)}` }) }, CONFIG);
  const env = lineEnv(api);
  try {
    const { url } = await launchWithLine(h.home, env);
    const hello = lineTextEvent("hello over LINE", { type: "user", userId: ALLOWED });
    assert.is(await post(url, hello), 200);
    await waitFor("the reply at LINE", () => api.messages().length === 1, 30_000);
    assert.equal(api.messages()[0], { to: `reply:${hello.replyToken}`, via: "reply", message: { type: "text", text: "answer to: hello over LINE" } });
    assert.is(api.calls[0].authorization, "Bearer daemon-test-access-token");

    // Outsiders get no turn: a user not listed, a group or room not listed.
    const before = h.fake.requests.length;
    assert.is(await post(url, lineTextEvent("let me in", { type: "user", userId: OTHER })), 200);
    assert.is(await post(url, lineTextEvent("group hi", { type: "group", groupId: "Cunknowngroup", userId: OTHER })), 200);
    assert.is(await post(url, lineTextEvent("room hi", { type: "room", roomId: "Runknownroom", userId: OTHER })), 200);
    // Listed group and room: any member is answered, in the group's own chat.
    const inGroup = lineTextEvent("from the group", { type: "group", groupId: "Callowedgroup", userId: OTHER });
    const inRoom = lineTextEvent("from the room", { type: "room", roomId: "Rallowedroom", userId: OTHER });
    assert.is(await post(url, inGroup, inRoom), 200);
    await waitFor("the group and room replies", () => api.messages().length === 3, 30_000);
    const texts = api.messages().map((m) => m.message.text);
    assert.ok(texts.includes("answer to: from the group") && texts.includes("answer to: from the room"), texts.join(" | "));
    assert.is(h.fake.requests.length, before + 2, "only the listed group and room got turns");
    const log = readFileSync(join(h.home, "logs", "daemon.log"), "utf8");
    assert.match(log, new RegExp(`refused a line message from an outsider.*${OTHER}`));

    // While the turn ran, the one-to-one chat showed LINE's loading animation.
    assert.ok(
      api.calls.some((c) => c.kind === "loading" && c.body.chatId === ALLOWED),
      "a loading animation",
    );
    const status = await runCli(["channels", "status", "--json"], { home: h.home, env });
    const line = (JSON.parse(status.stdout).channels as Array<{ platform: string; state: string; counts: { refused: number } }>).find(
      (c) => c.platform === "line",
    );
    assert.equal([line?.state, line?.counts.refused], ["running", 3], status.stdout);

    // The same event again (LINE's redelivery): dropped; also after a restart.
    assert.is(await post(url, { ...hello, deliveryContext: { isRedelivery: true } }), 200);
    await runCli(["daemon", "stop"], { home: h.home, env });
    const again = await launchWithLine(h.home, env);
    assert.is(await post(again.url, { ...hello, deliveryContext: { isRedelivery: true } }), 200);
    // A fresh message after the restart is answered, and the duplicate never reached the model.
    assert.is(await post(again.url, lineTextEvent("after restart", { type: "user", userId: ALLOWED })), 200);
    await waitFor("the reply after the restart", () => api.messages().some((m) => m.message.text === "answer to: after restart"), 30_000);
    assert.is(h.fake.requests.filter((r) => lastUserText(r).includes("hello over LINE")).length, 1);

    // A bad signature on the gateway's mount: 401, nothing runs.
    const forged = await fetch(`${again.url}/line/webhook`, { method: "POST", headers: { "x-line-signature": "AAAA" }, body: "{}" });
    assert.is(forged.status, 401);
  } finally {
    await h.dispose();
    await api.close();
  }
});

test("the postback cache in a daemon: PENDING → READY → DELIVERED, and a PENDING answer across kill -9 resolves to the interrupted text", async () => {
  const api = await startFakeLineApi();
  const h = await chatHome(
    {
      respond: (r) => {
        const text = lastUserText(r);
        if (text.includes("hang forever")) return { stall: true };
        // Slower than the threshold by construction: 6 chunks, 150 ms apart.
        return { text: `slow answer to: ${text}`.padEnd(30, "."), chunkChars: 5, chunkDelayMs: 150 };
      },
    },
    CONFIG,
  );
  const env = lineEnv(api, { LINE_SLOW_RESPONSE_THRESHOLD: "0.2", LINE_INTERRUPTED_TEXT: "Interrupted by a restart." });
  const cacheFile = join(h.home, "data", "messaging", "line", "default", "postback-cache.json");
  const entries = () => Object.values(JSON.parse(readFileSync(cacheFile, "utf8")).data.entries) as Array<{ id: string; state: string; text: string | null }>;
  const buttons = () => api.messages().filter((m) => m.message.type === "template");
  let pid = 0;
  try {
    const daemon = await launchWithLine(h.home, env);
    pid = daemon.pid;
    // 1. A slow answer: the button after the threshold (PENDING), READY when the turn ends, DELIVERED on the tap.
    assert.is(await post(daemon.url, lineTextEvent("think slowly", { type: "user", userId: ALLOWED })), 200);
    await waitFor("the first get-answer button", () => buttons().length === 1, 30_000);
    const first = entries()[0];
    assert.is(first.state, "PENDING");
    await waitFor("the answer to be READY", () => entries()[0].state === "READY", 30_000);
    assert.match(entries()[0].text ?? "", /^slow answer to: think slowly/);
    assert.is(api.messages().filter((m) => m.message.type === "text").length, 0, "nothing sent until the tap");
    const tap1 = linePostbackEvent(buttons()[0].message.template.actions[0].data, { type: "user", userId: ALLOWED });
    assert.is(await post(daemon.url, tap1), 200);
    await waitFor("the answer on the tap", () => api.messages().find((m) => m.to === `reply:${tap1.replyToken}`), 30_000);
    assert.match(api.messages().find((m) => m.to === `reply:${tap1.replyToken}`)?.message.text, /^slow answer to: think slowly/);
    await waitFor("DELIVERED", () => entries()[0].state === "DELIVERED", 30_000);

    // 2. A turn that hangs, PENDING behind its button; kill -9; the restarted daemon resolves the orphan.
    assert.is(await post(daemon.url, lineTextEvent("hang forever", { type: "group", groupId: "Callowedgroup", userId: ALLOWED })), 200);
    await waitFor("the second get-answer button", () => buttons().length === 2, 30_000);
    const data = buttons()[1].message.template.actions[0].data as string;
    const orphanId = data.slice("agent-answer:".length);
    assert.is(entries().find((e) => e.id === orphanId)?.state, "PENDING");
    process.kill(pid, "SIGKILL");
    await waitFor(
      "the daemon to die",
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      30_000,
    );
    const restarted = await launchWithLine(h.home, env);
    pid = restarted.pid;
    await waitFor("the orphan to resolve", () => entries().find((e) => e.id === orphanId)?.state === "ERROR", 30_000);
    assert.is(entries().find((e) => e.id === orphanId)?.text, "Interrupted by a restart.");
    // The delivered one stays delivered.
    assert.is(entries().find((e) => e.id === first.id)?.state, "DELIVERED");
    const tap2 = linePostbackEvent(data, { type: "group", groupId: "Callowedgroup", userId: ALLOWED });
    assert.is(await post(restarted.url, tap2), 200);
    await waitFor("the interrupted text", () => api.messages().find((m) => m.to === `reply:${tap2.replyToken}`), 30_000);
    assert.is(api.messages().find((m) => m.to === `reply:${tap2.replyToken}`)?.message.text, "Interrupted by a restart.");
  } finally {
    if (pid) killQuietly(pid);
    await h.dispose();
    await api.close();
  }
});

test.run();

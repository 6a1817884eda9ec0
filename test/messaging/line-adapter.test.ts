/**
 * The LINE adapter on its own: the real @line/bot-sdk against a local fake LINE API, a real
 * webhook listener on loopback, and a stand-in for the channel layer (what `receive` got, what
 * the layer would send). The whole path through a daemon is in line-daemon.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { AdapterContext, InboundMessage } from "../../daemon/messaging/adapter.js";
import { LineAdapter, lineAccess, lineFactory } from "../../daemon/messaging/line/line-adapter.js";
import { LineMedia } from "../../daemon/messaging/line/line-media.js";
import { MAX_TEXT_CHARS } from "../../daemon/messaging/line/line-sender.js";
import { silentLogger } from "../../daemon/log/logger.js";
import { ManualClock } from "../../shared/clock.js";
import { type FakeLineApi, lineSignature, linePostbackEvent, lineTextEvent, startFakeLineApi } from "../fixtures/fake-line-api.js";
import { waitFor } from "../helpers/wait.js";

const SECRET = "test-channel-secret";
const USER = "U0123456789abcdef0123456789abcdef";

interface Harness {
  adapter: LineAdapter;
  api: FakeLineApi;
  received: InboundMessage[];
  clock: ManualClock;
  home: string;
  post(body: string | Buffer, signature?: string | null): Promise<Response>;
  close(): Promise<void>;
}

async function harness(options: { env?: Record<string, string>; home?: string; api?: FakeLineApi; clock?: ManualClock } = {}): Promise<Harness> {
  const api = options.api ?? (await startFakeLineApi());
  const home = options.home ?? mkdtempSync(join(tmpdir(), "line-adapter-"));
  const clock = options.clock ?? new ManualClock(Date.now());
  const received: InboundMessage[] = [];
  const seen = new Set<string>();
  const dataDir = join(home, "data", "messaging", "line-default");
  mkdirSync(dataDir, { recursive: true });
  const env = {
    AGENT_HOME: home,
    LINE_CHANNEL_SECRET: SECRET,
    LINE_CHANNEL_ACCESS_TOKEN: "test-access-token",
    LINE_API_BASE_URL: api.url,
    LINE_WEBHOOK_PORT: "0",
    LINE_PUBLIC_URL: "https://bot.example.test/base",
    ...options.env,
  };
  const ctx: AdapterContext = {
    platform: "line",
    profile: "default",
    log: silentLogger,
    dataDir,
    config: {},
    env,
    access: lineAccess({}, env),
    async receive(msg) {
      if (seen.has(msg.eventId)) return { duplicate: true };
      seen.add(msg.eventId);
      received.push(msg);
      return { duplicate: false };
    },
    dedup: {
      async seen(id) {
        if (seen.has(id)) return true;
        seen.add(id);
        return false;
      },
    },
    // As the layer's: retried up to `attempts`, unless the error says it is permanent.
    async retry(_what, fn, opts) {
      for (let i = 1; ; i++) {
        try {
          return await fn();
        } catch (error) {
          if ((error as { permanent?: boolean }).permanent || i >= (opts?.attempts ?? 3)) throw error;
        }
      }
    },
    error: () => undefined,
    setState: () => undefined,
    commands: [],
  };
  const adapter = new LineAdapter(clock);
  await adapter.start(ctx);
  const post = (body: string | Buffer, signature: string | null = lineSignature(body, SECRET)) =>
    fetch(`${adapter.url}/line/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(signature === null ? {} : { "x-line-signature": signature }) },
      body,
    });
  return {
    adapter,
    api,
    received,
    clock,
    home,
    post,
    async close() {
      await adapter.stop();
      if (!options.api) await api.close();
      if (!options.home) rmSync(home, { recursive: true, force: true });
    },
  };
}

const body = (...events: unknown[]) => JSON.stringify({ destination: "Ubot", events });

test("a signed text message reaches the layer, and the layer's answer is the reply LINE receives", async () => {
  const h = await harness();
  try {
    const event = lineTextEvent("hello agent", { type: "user", userId: USER });
    const res = await h.post(body(event));
    assert.is(res.status, 200);
    assert.is(h.received.length, 1);
    const msg = h.received[0];
    assert.equal([msg.eventId, msg.chatId, msg.chatType, msg.senderId, msg.text], [event.webhookEventId, USER, "user", USER, "hello agent"]);
    await h.adapter.send(msg.chatId, { text: "hi there", reply: msg.reply });
    assert.equal(h.api.messages(), [{ to: `reply:${event.replyToken}`, via: "reply", message: { type: "text", text: "hi there" } }]);
    assert.is(h.api.calls[0].authorization, "Bearer test-access-token");
    // A group message: the chat is the group, the sender the user.
    const inGroup = lineTextEvent("in a group", { type: "group", groupId: "Cgroup1", userId: USER });
    assert.is((await h.post(body(inGroup))).status, 200);
    assert.equal([h.received[1].chatId, h.received[1].chatType, h.received[1].groupId, h.received[1].senderId], ["Cgroup1", "group", "Cgroup1", USER]);
  } finally {
    await h.close();
  }
});

test("an image a user sends is downloaded through the SDK and reaches the layer as an image part", async () => {
  const h = await harness();
  try {
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    const event = { ...lineTextEvent("", { type: "user", userId: USER }), message: { id: "img-1", type: "image", contentProvider: { type: "line" } } };
    h.api.content.set("img-1", { type: "image/png", bytes: png });
    assert.is((await h.post(body(event))).status, 200);
    assert.is(h.received.length, 1);
    assert.equal(h.received[0].images, [{ mime: "image/png", base64: png.toString("base64"), name: "img-1.png" }]);
  } finally {
    await h.close();
  }
});

test("a missing or bad signature is 401 and nothing reaches the layer", async () => {
  const h = await harness();
  try {
    const payload = body(lineTextEvent("forged", { type: "user", userId: USER }));
    const missing = await h.post(payload, null);
    assert.is(missing.status, 401);
    const bad = await h.post(payload, lineSignature(payload, "another-secret"));
    assert.is(bad.status, 401);
    assert.is(((await bad.json()) as { error: { code: string } }).error.code, "line.bad_signature");
    const garbage = await h.post(payload, "not base64 at all!");
    assert.is(garbage.status, 401);
    // Signed for another body: the raw body is what is checked.
    const other = await h.post(payload, lineSignature(`${payload} `, SECRET));
    assert.is(other.status, 401);
    assert.is(h.received.length, 0);
    assert.is(h.adapter.status().counts.refused, 4);
  } finally {
    await h.close();
  }
});

test("a body over 1 MiB is refused with 413; one just under passes", async () => {
  const h = await harness();
  try {
    const big = body(lineTextEvent("x".repeat(1024 * 1024), { type: "user", userId: USER }));
    const res = await h.post(big);
    assert.is(res.status, 413);
    assert.is(h.received.length, 0);
    const event = lineTextEvent("", { type: "user", userId: USER });
    const base = body(event).length;
    const fits = body({ ...event, message: { ...event.message, text: "y".repeat(1024 * 1024 - base - 10) } });
    assert.ok(Buffer.byteLength(fits) <= 1024 * 1024);
    assert.is((await h.post(fits)).status, 200);
    assert.is(h.received.length, 1);
  } finally {
    await h.close();
  }
});

test("a duplicate webhook event id is handed on once", async () => {
  const h = await harness();
  try {
    const event = lineTextEvent("once", { type: "user", userId: USER });
    assert.is((await h.post(body(event))).status, 200);
    const again = { ...event, deliveryContext: { isRedelivery: true } };
    assert.is((await h.post(body(again))).status, 200);
    assert.is(h.received.length, 1);
    assert.is(h.adapter.status().counts.inbound, 1);
  } finally {
    await h.close();
  }
});

test("a long answer goes as bubbles of at most 4,500 characters, at most 5 per call: reply first, then pushes", async () => {
  const h = await harness();
  try {
    const event = lineTextEvent("write a lot", { type: "user", userId: USER });
    await h.post(body(event));
    const paragraphs = Array.from({ length: 40 }, (_, i) => `${i}:${"w ".repeat(600)}`.trim());
    const text = paragraphs.join("\n\n");
    await h.adapter.send(USER, { text, reply: h.received[0].reply });
    const calls = h.api.calls.filter((c) => c.kind !== "loading");
    assert.ok(calls.length >= 2, "more than one call");
    assert.is(calls[0].kind, "reply");
    for (const c of calls.slice(1)) assert.is(c.kind, "push");
    for (const c of calls) assert.ok(c.body.messages.length <= 5, `${c.body.messages.length} messages in one call`);
    const bubbles = h.api.messages().map((m) => m.message.text as string);
    for (const b of bubbles) assert.ok(Array.from(b).length <= MAX_TEXT_CHARS, `bubble of ${b.length}`);
    assert.is(bubbles.length > 5, true);
    // Nothing lost: the paragraphs are all there, in order, each whole (split on paragraph breaks).
    assert.equal(bubbles.join("\n\n").split("\n\n"), paragraphs);
    // A single run of text without breaks is cut at the limit.
    h.api.calls.length = 0;
    await h.adapter.send(USER, { text: "z".repeat(MAX_TEXT_CHARS * 2 + 7) });
    assert.equal(
      h.api.messages().map((m) => [m.via, m.message.text.length]),
      [
        ["push", MAX_TEXT_CHARS],
        ["push", MAX_TEXT_CHARS],
        ["push", 7],
      ],
    );
  } finally {
    await h.close();
  }
});

test("an expired reply token falls back to a push to the same chat", async () => {
  const h = await harness({ env: { LINE_SLOW_RESPONSE_THRESHOLD: "0" } });
  try {
    const event = lineTextEvent("slow one", { type: "group", groupId: "Cgroup2", userId: USER });
    await h.post(body(event));
    h.api.expiredTokens.add(event.replyToken);
    await h.adapter.send("Cgroup2", { text: "late answer", reply: h.received[0].reply });
    assert.equal(h.api.messages(), [{ to: "Cgroup2", via: "push", message: { type: "text", text: "late answer" } }]);
    // A token older than LINE keeps them is not even tried.
    h.api.calls.length = 0;
    const second = lineTextEvent("another", { type: "user", userId: USER });
    await h.post(body(second));
    h.clock.advance(120_000);
    await h.adapter.send(USER, { text: "much later", reply: h.received[1].reply });
    assert.equal(
      h.api.calls.map((c) => c.kind),
      ["push"],
    );
  } finally {
    await h.close();
  }
});

test("a reply that fails otherwise also goes by push; a push LINE refuses (4xx) is not retried and fails the send", async () => {
  const h = await harness({ env: { LINE_SLOW_RESPONSE_THRESHOLD: "0" } });
  try {
    await h.post(body(lineTextEvent("hi", { type: "user", userId: USER })));
    h.api.failNext.reply = 1;
    await h.adapter.send(USER, { text: "still arrives", reply: h.received[0].reply });
    assert.equal(h.api.messages(), [{ to: USER, via: "push", message: { type: "text", text: "still arrives" } }]);
    h.api.calls.length = 0;
    h.api.failNext.push = 1;
    try {
      await h.adapter.send(USER, { text: "refused" });
      assert.unreachable("the send should fail");
    } catch (error) {
      assert.match((error as Error).message, /LINE push failed \(HTTP 400\)/);
    }
    assert.is(h.api.calls.filter((c) => c.kind === "push").length, 1, "one attempt only");
    assert.match(h.adapter.status().lastError ?? "", /HTTP 400/);
  } finally {
    await h.close();
  }
});

test("media: served from the temp dir and the home; refused outside the roots, through a symlink out, with `..`, or once expired", async () => {
  const h = await harness({ env: { LINE_SLOW_RESPONSE_THRESHOLD: "0" } });
  // "Outside" must be outside every root, wherever the checkout is (a clone may live in /tmp):
  // the roots checked below are this test's own temp folder and the home, never the system's.
  const systemTmp = tmpdir();
  const savedTmp = process.env.TMPDIR;
  const outside = mkdtempSync(join(systemTmp, "line-outside-"));
  try {
    const png = Buffer.from("89504e470d0a1a0a0000", "hex");
    const inHome = join(h.home, "workspace", "chart.png");
    mkdirSync(join(h.home, "workspace"), { recursive: true });
    writeFileSync(inHome, png);
    const secretFile = join(outside, "secret.png");
    writeFileSync(secretFile, "not yours");
    // The agent sends an image: LINE gets a URL on LINE_PUBLIC_URL, and the listener serves it.
    await h.adapter.send(USER, { text: "here", images: [inHome] });
    const image = h.api.messages().find((m) => m.message.type === "image")?.message;
    assert.ok(image, "an image message was sent");
    assert.match(image.originalContentUrl, /^https:\/\/bot\.example\.test\/base\/line\/media\/[A-Za-z0-9_-]{32}\/chart\.png$/);
    const path = new URL(image.originalContentUrl).pathname.replace(/^\/base/, "");
    const served = await fetch(`${h.adapter.url}${path}`);
    assert.is(served.status, 200);
    assert.is(served.headers.get("content-type"), "image/png");
    assert.equal(Buffer.from(await served.arrayBuffer()), png);
    // Another filename under a good token, or a `..` path: not found.
    const token = path.split("/")[3];
    assert.is((await fetch(`${h.adapter.url}/line/media/${token}/other.png`)).status, 404);
    assert.is((await fetch(`${h.adapter.url}/line/media/${token}/..%2F..%2Fetc%2Fpasswd`)).status, 404);
    assert.is((await fetch(`${h.adapter.url}/line/media/guess/chart.png`)).status, 404);

    process.env.TMPDIR = mkdtempSync(join(systemTmp, "line-tmp-"));
    const media = new LineMedia({ roots: [h.home], clock: h.clock, ttlMs: 60_000 });
    // Outside the roots, directly or by `..`.
    await rejects(() => media.register(secretFile), /outside the allowed roots/);
    await rejects(() => media.register(join(h.home, "..", "..", outside.slice(1), "secret.png")), /outside the allowed roots/);
    // A symlink inside the home pointing out is refused (the real path is checked).
    const link = join(h.home, "workspace", "link.png");
    symlinkSync(secretFile, link);
    await rejects(() => media.register(link), /outside the allowed roots/);
    // A file registered while good, then swapped for a symlink out, is not served.
    const swapped = join(h.home, "workspace", "swap.png");
    writeFileSync(swapped, png);
    const swapPath = await media.register(swapped);
    rmSync(swapped);
    symlinkSync(secretFile, swapped);
    const fakeRes = await serveVia(media, swapPath);
    assert.is(fakeRes.status, 404);
    // Expired: the token stops working after its time.
    const tmpFile = join(mkdtempSync(join(tmpdir(), "line-media-")), "a.jpg");
    writeFileSync(tmpFile, "jpeg");
    const live = await media.register(tmpFile);
    assert.is((await serveVia(media, live)).status, 200);
    h.clock.advance(60_001);
    assert.is((await serveVia(media, live)).status, 404);
  } finally {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(outside, { recursive: true, force: true });
    await h.close();
  }
});

async function rejects(fn: () => Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await fn();
  } catch (error) {
    assert.match(String((error as Error).message), pattern);
    return;
  }
  assert.unreachable(`expected a rejection matching ${pattern}`);
}

/** Serves `path` from `media` through a real loopback listener. */
async function serveVia(media: LineMedia, path: string): Promise<{ status: number; body: string }> {
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => void media.serve(req, res, (req.url ?? "").split("?")[0]));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: await res.text() };
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

test("slow answers: PENDING behind a get-answer button, READY when done, DELIVERED on the tap", async () => {
  const h = await harness({ env: { LINE_SLOW_RESPONSE_THRESHOLD: "45" } });
  try {
    const event = lineTextEvent("think hard", { type: "user", userId: USER });
    await h.post(body(event));
    h.clock.advance(44_000);
    assert.is(h.api.calls.length, 0, "nothing before the threshold");
    h.clock.advance(1_000);
    const cache = h.adapter.postbacks;
    assert.ok(cache);
    const entry = await waitFor("a PENDING entry", () => cache.list()[0]);
    assert.is(entry.state, "PENDING");
    await waitFor("the button", () => h.api.calls.length === 1);
    const button = h.api.messages()[0];
    assert.is(button.via, "reply");
    assert.is(button.message.type, "template");
    const data = button.message.template.actions[0].data as string;
    assert.is(data, `agent-answer:${entry.id}`);
    // Tapped too early: still working, the button again.
    assert.is((await h.post(body(linePostbackEvent(data, { type: "user", userId: USER })))).status, 200);
    await waitFor("the still-working answer", () => h.api.calls.length === 2);
    assert.match(h.api.messages()[1].message.template.text, /Still working/);
    // The answer finishes: READY, nothing sent (the reply token was used for the button).
    await h.adapter.send(USER, { text: "the deep answer", reply: h.received[0].reply });
    assert.is(cache.get(entry.id)?.state, "READY");
    assert.is(h.api.calls.length, 2);
    // The tap: the answer, DELIVERED.
    const tap = linePostbackEvent(data, { type: "user", userId: USER });
    await h.post(body(tap));
    await waitFor("the answer", () => h.api.calls.length === 3);
    assert.equal(h.api.messages()[2], { to: `reply:${tap.replyToken}`, via: "reply", message: { type: "text", text: "the deep answer" } });
    assert.is(cache.get(entry.id)?.state, "DELIVERED");
    // The same button tapped from another chat gives nothing away.
    const elsewhere = linePostbackEvent(data, { type: "user", userId: "Uanother" });
    await h.post(body(elsewhere));
    await waitFor("the refusal", () => h.api.calls.length === 4);
    assert.is(h.api.messages()[3].message.text, "That answer is no longer available.");
    h.api.calls.pop();
    // A duplicate delivery of the tap is dropped.
    await h.post(body(tap));
    assert.is(h.api.calls.length, 3);
    // A fast answer never shows a button.
    const quick = lineTextEvent("quick", { type: "user", userId: USER });
    await h.post(body(quick));
    h.clock.advance(1_000);
    await h.adapter.send(USER, { text: "fast", reply: h.received[1].reply });
    h.clock.advance(60_000);
    assert.is(cache.list().length, 1);
    assert.is(h.api.messages()[3].message.text, "fast");
  } finally {
    await h.close();
  }
});

test("slow answers: /stop sends a PENDING answer to ERROR; a restart resolves an orphan to the interrupted text", async () => {
  const api = await startFakeLineApi();
  const home = mkdtempSync(join(tmpdir(), "line-adapter-"));
  const env = { LINE_SLOW_RESPONSE_THRESHOLD: "2", LINE_INTERRUPTED_TEXT: "Interrupted, sorry." };
  try {
    const h = await harness({ env, home, api });
    const first = lineTextEvent("one", { type: "user", userId: USER });
    await h.post(body(first));
    h.clock.advance(2_000);
    const cache = h.adapter.postbacks;
    assert.ok(cache);
    const cancelled = await waitFor("the first entry", () => cache.list()[0]);
    await waitFor("its button", () => api.calls.length === 1);
    await h.post(body(lineTextEvent("/stop", { type: "user", userId: USER })));
    assert.equal([cache.get(cancelled.id)?.state, cache.get(cancelled.id)?.text], ["ERROR", "Interrupted, sorry."]);
    // A second slow question, then the daemon goes away with it PENDING.
    await h.post(body(lineTextEvent("two", { type: "user", userId: USER })));
    h.clock.advance(2_000);
    const orphan = await waitFor("the second entry", () => cache.list().find((e) => e.id !== cancelled.id));
    await waitFor("its button", () => api.calls.length === 2);
    assert.is(orphan.state, "PENDING");
    await h.close();
    const again = await harness({ env, home, api });
    try {
      const reopened = again.adapter.postbacks;
      assert.equal([reopened?.get(orphan.id)?.state, reopened?.get(orphan.id)?.text], ["ERROR", "Interrupted, sorry."]);
      await again.post(body(linePostbackEvent(`agent-answer:${orphan.id}`, { type: "user", userId: USER })));
      await waitFor("the interrupted text", () => api.calls.length === 3);
      assert.is(api.messages()[2].message.text, "Interrupted, sorry.");
    } finally {
      await again.close();
    }
  } finally {
    await api.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test("allowlists come from LINE_ALLOWED_USERS / _GROUPS / _ROOMS and the config, and LINE_ALLOW_ALL_USERS", () => {
  const env = {
    LINE_CHANNEL_SECRET: "s",
    LINE_CHANNEL_ACCESS_TOKEN: "t",
    LINE_ALLOWED_USERS: "U1, U2",
    LINE_ALLOWED_GROUPS: "C1",
    LINE_ALLOWED_ROOMS: "R1 R2",
  };
  assert.equal(lineAccess({ allow_users: ["U3"] }, env), { users: ["U1", "U2", "U3"], groups: ["C1"], rooms: ["R1", "R2"], allowAll: false });
  assert.is(lineAccess({}, { ...env, LINE_ALLOW_ALL_USERS: "true" }).allowAll, true);
  assert.is(lineAccess({ allow_all_users: true }, {}).allowAll, true);
});

test("the channel's identity: a digest of its secret (never the secret), null unless both credentials are set", () => {
  const both = { LINE_CHANNEL_SECRET: "the-secret", LINE_CHANNEL_ACCESS_TOKEN: "t" };
  const id = lineFactory.identity({}, both);
  assert.match(id ?? "", /^channel [0-9a-f]{12}$/);
  assert.not.match(id ?? "", /the-secret/);
  assert.is(lineFactory.identity({}, { ...both, LINE_CHANNEL_ACCESS_TOKEN: "another token" }), id, "the same channel");
  assert.is(lineFactory.identity({}, { LINE_CHANNEL_SECRET: "the-secret" }), null);
  assert.is(lineFactory.identity({}, {}), null);
});

test.run();

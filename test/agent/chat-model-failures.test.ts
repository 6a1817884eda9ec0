import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, tempHome } from "../helpers/cli.js";
import { chatHome } from "./helpers.js";

test("a 429 with retry-after is retried and the turn succeeds", async () => {
  const h = await chatHome({
    script: [
      { status: 429, retryAfter: 0.2 },
      { text: "after the wait", headers: { "x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "400" } },
    ],
  });
  try {
    const t0 = Date.now();
    const r = await h.chat(["-q", "hi"]);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.trim(), "after the wait");
    assert.is(h.fake.requests.length, 2);
    assert.ok(h.fake.requests[1]!.at - h.fake.requests[0]!.at >= 180, "waited for retry-after");
    assert.ok(Date.now() - t0 < 15_000);
    // /gquota shows what the headers said.
    const q = await h.chat([], { input: "/gquota\n/exit\n" });
    assert.match(q.stdout, /tokens\s+\[#+\.+\] 600\/1000 used/);
  } finally {
    await h.dispose();
  }
});

test("rate limiting that outlasts the retries exits with the rate-limited code 75", async () => {
  const h = await chatHome({ script: [{ status: 429, retryAfter: 0 }], loop: true }, "  max_retries: 1\n");
  try {
    const r = await h.chat(["-q", "hi"]);
    assert.is(r.code, 75, r.stderr);
    assert.match(r.stderr, /rate limit/i);
  } finally {
    await h.dispose();
  }
});

test("a stream that sends nothing past the read timeout fails with a clear error", async () => {
  const h = await chatHome({ script: [{ stall: true, silent: true }], loop: true });
  try {
    // The stale timeout is long: only the read timeout (the wait for the first chunk) can end this.
    const env = { AGENT_STREAM_READ_TIMEOUT: "0.4", AGENT_API_TIMEOUT: "0.4", AGENT_STREAM_STALE_TIMEOUT: "60", AGENT_MODEL_MAX_RETRIES: "1" };
    const r = await h.chat(["-q", "hi"], { env });
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /sent nothing for 0\.4 s \(read timeout; raise AGENT_STREAM_READ_TIMEOUT/);
    assert.is(h.fake.requests.length, 2, "one retry");
  } finally {
    await h.dispose();
  }
});

test("a stream that starts, then goes silent past the stale timeout fails with a clear error", async () => {
  const h = await chatHome({ script: [{ stall: true, text: "thinking" }], loop: true });
  try {
    // The read timeout is long (and raised for this loopback fake): only the stale timeout can end this.
    const env = { AGENT_STREAM_READ_TIMEOUT: "60", AGENT_API_TIMEOUT: "60", AGENT_STREAM_STALE_TIMEOUT: "0.4", AGENT_MODEL_MAX_RETRIES: "1" };
    const t0 = Date.now();
    const r = await h.chat(["-q", "hi"], { env });
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /started, then went silent for 0\.4 s \(stale stream; raise AGENT_STREAM_STALE_TIMEOUT\)/);
    assert.is(h.fake.requests.length, 2, "one retry");
    assert.ok(Date.now() - t0 < 20_000, "well before the read timeout");
  } finally {
    await h.dispose();
  }
});

test("a 500 and a dropped stream are retried", async () => {
  const h = await chatHome({ script: [{ status: 500 }, { drop: true, text: "half" }, { text: "whole answer" }] });
  try {
    const r = await h.chat(["-q", "hi"]);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.trim(), "whole answer");
    assert.is(h.fake.requests.length, 3);
  } finally {
    await h.dispose();
  }
});

test("with no provider configured a turn fails with how to configure one, and the rest still works", async () => {
  const { home, cleanup } = tempHome("ac");
  const env = { AGENT_GATEWAY_PORT: "0", OPENAI_API_KEY: "" };
  try {
    const r = await runCli(["chat", "-q", "hello"], { home, env });
    assert.is(r.code, 1);
    assert.match(r.stderr, /no model provider is configured/);
    assert.match(r.stderr, /Run `agent setup` for a guided set-up/);
    assert.match(r.stderr, /config\.yaml/);
    assert.match(r.stderr, /providers:\n\s+openai:\n\s+base_url: /);
    assert.match(r.stderr, /OPENAI_API_KEY=sk-/);
    const list = await runCli(["chat", "--list", "--json"], { home, env });
    assert.is(list.code, 0, list.stderr);
    assert.equal(JSON.parse(list.stdout), { sessions: [] });
    const status = await runCli(["daemon", "status", "--json"], { home, env });
    assert.is(status.code, 0);
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test.run();

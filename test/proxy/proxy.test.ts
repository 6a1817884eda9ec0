// `agent proxy` (docs/proxy.md) against a real daemon: the official openai client calls the
// proxy, a fake upstream on loopback records what reaches it.
import OpenAI from "openai";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PROXY_PATHS } from "../../shared/protocol/proxy.js";
import { STREAM_WORDS } from "./fake-upstream.js";
import { CLIENT_KEY, ENV_KEY, type ProxyHome, proxyHome } from "./helpers.js";

let h: ProxyHome;
let base: string;
let client: OpenAI;

test.before(async () => {
  // A second provider points at a port nothing listens on (the 502 case).
  h = await proxyHome("", "  dead:\n    base_url: http://127.0.0.1:9/v1\n    model: m1\nproxy:\n  upstream_timeout: 0.5\n  max_body_bytes: 65536\n");
  const s = await h.startProxy();
  assert.ok(s.running);
  base = s.url!;
  client = new OpenAI({ baseURL: base, apiKey: CLIENT_KEY, maxRetries: 0 });
});

test.after(async () => {
  await h?.dispose();
});

test("the four allowed paths are forwarded, with the provider's key and never the caller's bearer", async () => {
  const models = await client.models.list();
  assert.equal(
    models.data.map((m) => m.id),
    ["m1"],
  );
  const reply = await client.chat.completions.create({ model: "m1", messages: [{ role: "user", content: "hi" }] });
  assert.is(reply.choices[0]!.message.content, "hello");
  const emb = await client.embeddings.create({ model: "m1", input: "x", encoding_format: "float" });
  assert.equal(emb.data[0]!.embedding, [0.1, 0.2]);
  const legacy = await client.completions.create({ model: "m1", prompt: "x" });
  assert.ok(legacy.id);
  const paths = h.upstream.received.map((r) => `${r.method} ${r.path}`);
  assert.equal(paths, ["GET /v1/models", "POST /v1/chat/completions", "POST /v1/embeddings", "POST /v1/completions"]);
  for (const r of h.upstream.received) {
    assert.is(r.headers.authorization, `Bearer ${ENV_KEY}`);
    assert.not.ok(JSON.stringify(r.headers).includes(CLIENT_KEY), "the caller's bearer never reaches upstream");
  }
});

test("any other path is 404 with a message listing the allowed paths, and nothing goes upstream", async () => {
  const before = h.upstream.received.length;
  for (const path of ["/v1/files", "/admin", "/v1/chat/completions/../../secrets"]) {
    const r = await fetch(`${base.replace(/\/v1$/, "")}${path}`, { headers: { authorization: `Bearer ${CLIENT_KEY}` } });
    assert.is(r.status, 404, path);
    const body = (await r.json()) as { error: { message: string; type: string } };
    for (const allowed of PROXY_PATHS) assert.ok(body.error.message.includes(allowed), body.error.message);
  }
  assert.is(h.upstream.received.length, before);
});

test("a stream passes through chunk by chunk: each chunk reaches the caller before the upstream sends the next", async () => {
  const stream = await client.chat.completions.create({ model: "gated", messages: [{ role: "user", content: "hi" }], stream: true });
  const got: string[] = [];
  for await (const chunk of stream) {
    const text = chunk.choices[0]?.delta.content;
    if (!text) continue;
    got.push(text);
    // The upstream holds the next chunk until the caller has this one: a buffering proxy would hang here.
    h.upstream.release();
  }
  assert.equal(got, STREAM_WORDS);
});

test("a caller that goes away aborts the upstream request", async () => {
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model: "gated", messages: [{ role: "user", content: "hi" }], stream: true },
    { signal: controller.signal },
  );
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta.content) break; // first chunk, then leave (the SDK aborts the request)
  }
  controller.abort();
  await h.upstream.aborted();
});

test("a slow upstream gets 504, an unreachable one 502, both in OpenAI's error JSON", async () => {
  const slow = await client.chat.completions.create({ model: "slow", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
  assert.instance(slow, OpenAI.APIError);
  assert.is(slow.status, 504);
  assert.match(slow.message, /no response within 0.5 s/);
  const dead = await h.startProxy(["--provider", "dead"]);
  const deadClient = new OpenAI({ baseURL: dead.url!, apiKey: CLIENT_KEY, maxRetries: 0 });
  const unreachable = await deadClient.models.list().catch((e) => e);
  assert.instance(unreachable, OpenAI.APIError);
  assert.is(unreachable.status, 502);
  assert.match(unreachable.message, /could not be reached: ECONNREFUSED/);
  const back = await h.startProxy();
  base = back.url!;
  client = new OpenAI({ baseURL: base, apiKey: CLIENT_KEY, maxRetries: 0 });
});

test("a cross-origin browser request and a foreign Host are refused; a body over the limit gets 413", async () => {
  const url = `${base}/chat/completions`;
  const body = JSON.stringify({ model: "m1", messages: [] });
  const before = h.upstream.received.length;
  const cross = await fetch(url, { method: "POST", body, headers: { origin: "https://evil.example", "content-type": "application/json" } });
  assert.is(cross.status, 403);
  assert.match(((await cross.json()) as { error: { message: string } }).error.message, /origin https:\/\/evil\.example may not call/);
  const big = await fetch(url, { method: "POST", body: "x".repeat(70_000), headers: { "content-type": "application/json" } });
  assert.is(big.status, 413);
  assert.is(h.upstream.received.length, before);
});

test("status and providers; a non-loopback host without proxy.token is refused before listening", async () => {
  const status = JSON.parse((await h.cli(["proxy", "status", "--json"])).stdout);
  assert.is(status.running, true);
  assert.is(status.provider, "acme");
  assert.is(status.method, "api_key");
  assert.not.ok(JSON.stringify(status).includes(ENV_KEY));
  const providers = JSON.parse((await h.cli(["proxy", "providers", "--json"])).stdout);
  assert.equal(
    providers.providers.map((p: { name: string; method: string; default: boolean }) => [p.name, p.method, p.default]),
    [
      ["acme", "api_key", true],
      ["dead", "none", false],
    ],
  );
  const open = await h.cli(["proxy", "start", "--host", "0.0.0.0", "--port", "0"]);
  assert.is.not(open.code, 0);
  assert.match(open.stderr, /proxy\.host is 0\.0\.0\.0.*proxy\.token/);
});

test.run();

// The proxy against hostile requests (raw HTTP, nothing normalised by a client): path tricks
// never reach a non-allowed upstream path, a foreign Origin or Host is refused before anything
// is forwarded, a wrong key is 401, a huge body is 413, and no key reaches the daemon's logs.
import { readdirSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLIENT_KEY, ENV_KEY, type ProxyHome, proxyHome } from "./helpers.js";

const PROXY_KEY = "proxy-key-must-not-leak-0123";
let h: ProxyHome;
let port: number;

function raw(path: string, headers: Record<string, string> = {}, body?: string, method = body === undefined ? "GET" : "POST") {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers: { authorization: `Bearer ${PROXY_KEY}`, ...headers } }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test.before(async () => {
  h = await proxyHome("", `proxy:\n  token: ${PROXY_KEY}\n  max_body_bytes: 4096\n`);
  const s = await h.startProxy();
  port = s.port!;
});

test.after(async () => {
  await h?.dispose();
});

test("path tricks are 404 and nothing goes upstream", async () => {
  for (const path of [
    "/v1/chat/completions/../../admin",
    "/v1/models/../files",
    "/v1/%2e%2e/files",
    "/v1/chat%2fcompletions",
    "//v1/models",
    "/v1//models",
    "/v1/models/",
    "/V1/models",
    "/v1/models%00",
    "http://evil.example/v1/models",
    "/v1/files?x=/v1/models",
  ]) {
    const r = await raw(path);
    assert.is(r.status, 404, `${path}: ${r.body}`);
  }
  assert.is(h.upstream.received.length, 0, JSON.stringify(h.upstream.received.map((r) => r.path)));
});

test("a query string stays on the allowed path", async () => {
  const r = await raw("/v1/models?x=../../admin&y=%2e%2e");
  assert.is(r.status, 200, r.body);
  const last = h.upstream.received.at(-1)!;
  assert.ok(last.path.startsWith("/v1/models?"), last.path);
  assert.is(last.headers.authorization, `Bearer ${ENV_KEY}`);
});

test("a foreign Origin, a rebinding Host, a wrong or missing key: refused, nothing forwarded", async () => {
  const before = h.upstream.received.length;
  assert.is((await raw("/v1/models", { origin: "https://evil.example" })).status, 403);
  assert.is((await raw("/v1/models", { host: "evil.example" })).status, 403);
  assert.is((await raw("/v1/models", { host: "evil.example:80", origin: "http://evil.example:80" })).status, 403);
  assert.is((await raw("/v1/models", { "sec-fetch-site": "cross-site" })).status, 403);
  assert.is((await raw("/v1/models", { authorization: `Bearer ${CLIENT_KEY}` })).status, 401);
  assert.is((await raw("/v1/models", { authorization: "" })).status, 401);
  const pre = await raw("/v1/chat/completions", { origin: "https://evil.example", "access-control-request-method": "POST" }, undefined, "OPTIONS");
  assert.is(pre.status, 403);
  assert.is(h.upstream.received.length, before);
});

test("a body over the limit is 413 (declared or streamed), nothing forwarded", async () => {
  const before = h.upstream.received.length;
  const big = "x".repeat(10_000);
  assert.is((await raw("/v1/chat/completions", { "content-type": "application/json" }, big)).status, 413);
  assert.is((await raw("/v1/chat/completions", { "transfer-encoding": "chunked" }, big)).status, 413);
  assert.is(h.upstream.received.length, before);
});

test("no key reaches a log file", async () => {
  const dir = join(h.home, "logs");
  const text = readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
  for (const secret of [PROXY_KEY, ENV_KEY, CLIENT_KEY]) assert.not.ok(text.includes(secret), secret);
});

test.run();

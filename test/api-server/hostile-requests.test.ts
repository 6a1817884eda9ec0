// The API server against hostile requests (raw HTTP): a rebinding Host, a cross-site browser
// request, a foreign preflight, a wrong key, huge and malformed bodies, odd X-Session-Id values.
// Each is refused with an OpenAI error before any turn runs, and no key reaches the logs.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "../agent/helpers.js";

const KEY = "api-server-key-must-not-leak-0123";
let h: Awaited<ReturnType<typeof chatHome>>;
let port: number;

function raw(path: string, headers: Record<string, string> = {}, body?: string, method = body === undefined ? "GET" : "POST") {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers: { authorization: `Bearer ${KEY}`, ...headers } }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const turn = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: "agent", messages: [{ role: "user", content: "hi" }], ...extra });

test.before(async () => {
  h = await chatHome({}, "api_server:\n  port: 0\n  max_body_bytes: 4096\n");
  writeFileSync(join(h.home, ".env"), `API_SERVER_KEY=${KEY}\n`, { mode: 0o600 });
  const r = await h.cli(["api-server", "start", "--port", "0", "--json"]);
  assert.is(r.code, 0, r.stderr);
  port = JSON.parse(r.stdout).port;
});

test.after(async () => {
  await h?.dispose();
});

test("Host, Origin, preflight and key rules: refused, no turn", async () => {
  const before = h.fake.requests.length;
  const post = { "content-type": "application/json" };
  assert.is((await raw("/v1/chat/completions", { ...post, host: "evil.example" }, turn())).status, 403);
  assert.is((await raw("/v1/chat/completions", { ...post, origin: "https://evil.example" }, turn())).status, 403);
  assert.is((await raw("/v1/chat/completions", { ...post, "sec-fetch-site": "cross-site" }, turn())).status, 403);
  const pre = await raw("/v1/chat/completions", { origin: "https://evil.example", "access-control-request-method": "POST" }, undefined, "OPTIONS");
  assert.is(pre.status, 403);
  const wrong = await raw("/v1/chat/completions", { ...post, authorization: "Bearer nope" }, turn());
  assert.is(wrong.status, 401);
  assert.not.ok(wrong.body.includes(KEY));
  assert.is((await raw("/v1/models", { authorization: "" })).status, 401);
  assert.is((await raw("/v1/models", { authorization: `Basic ${KEY}` })).status, 401);
  assert.is(h.fake.requests.length, before);
});

test("huge, chunked, malformed bodies: 413 / 400, no turn", async () => {
  const before = h.fake.requests.length;
  const big = turn({ pad: "x".repeat(10_000) });
  assert.is((await raw("/v1/chat/completions", {}, big)).status, 413);
  assert.is((await raw("/v1/chat/completions", { "transfer-encoding": "chunked" }, big)).status, 413);
  for (const body of ["", "{", "null", "[]", '{"messages":{}}', '{"messages":[{"role":"user","content":{"a":1}}]}', '{"model":1,"messages":[]}']) {
    const r = await raw("/v1/chat/completions", { "content-type": "application/json" }, body);
    assert.is(r.status, 400, `${body}: ${r.body}`);
    assert.ok((JSON.parse(r.body) as { error: { message: string } }).error.message, r.body);
  }
  assert.is(h.fake.requests.length, before);
});

test("an X-Session-Id that is not a session id is a 400, no turn", async () => {
  const before = h.fake.requests.length;
  for (const id of ["../../etc/passwd", "a/b", "x".repeat(200), "a b"]) {
    const r = await raw("/v1/chat/completions", { "content-type": "application/json", "x-session-id": id }, turn());
    assert.is(r.status, 400, `${id}: ${r.status} ${r.body}`);
  }
  assert.is(h.fake.requests.length, before);
});

test("no key reaches a log file", async () => {
  const dir = join(h.home, "logs");
  const text = readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
  assert.not.ok(text.includes(KEY));
});

test.run();

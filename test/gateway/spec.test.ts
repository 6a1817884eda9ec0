// Every endpoint of the actor gateway (README "Actor gateway") and every error it answers with,
// over plain HTTP against a real daemon.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { decode as cborDecode, encode as cborEncode } from "cbor-x";
import { decodeResponseError } from "../../daemon/gateway/bare.js";
import { createServer } from "node:net";
import { runCli, tempHome, waitFor } from "../helpers/cli.js";
import { call, putActor, startDaemon, type TestDaemon } from "./daemon.js";

const TOKEN = "s3cret-inspector-token";
let d: TestDaemon;
let prod: TestDaemon | undefined;
let counterId = "";

test.before(async () => {
  d = await startDaemon({ env: { AGENT_INSPECTOR_TOKEN: TOKEN }, config: 'gateway:\n  max_body_bytes: 65536\n  cors_origins: ["http://localhost:3000"]\n' });
  const r = await putActor(d.url, { name: "counter", key: "spec" });
  counterId = r.json.actor.actor_id;
});
test.after(async () => {
  await d?.dispose();
  await prod?.dispose();
});

async function req(path: string, init: RequestInit & { json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  const r = await fetch(`${d.url}${path}`, { ...init, headers, body });
  const text = await r.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, headers: r.headers, text, json };
}

function isError(r: { status: number; json: any }, status: number, group: string, code: string) {
  assert.is(r.status, status, JSON.stringify(r.json));
  assert.is(r.json.group, group, JSON.stringify(r.json));
  assert.is(r.json.code, code, JSON.stringify(r.json));
  assert.type(r.json.message, "string");
}

test("GET /metadata lists the registered actor names", async () => {
  const r = await req("/metadata");
  assert.is(r.status, 200);
  assert.is(r.json.runtime, "agent");
  assert.ok(r.json.actorNames.counter);
  assert.ok(r.json.actorNames.worker);
  assert.equal(r.json.runner, { kind: { normal: {} } });
});

test("PUT /actors creates an actor and answers its record", async () => {
  const a = await putActor(d.url, { name: "counter", key: "put-1" });
  assert.is(a.status, 200);
  assert.is(a.json.created, true);
  const rec = a.json.actor;
  for (const f of ["actor_id", "name", "key", "namespace_id", "runner_name_selector"]) assert.type(rec[f], "string");
  assert.type(rec.create_ts, "number");
  assert.is(rec.namespace_id, "default");
});

test("PUT /actors with a key in use answers the existing actor, created false", async () => {
  const rec = (await putActor(d.url, { name: "counter", key: "put-2" })).json.actor;
  const b = await putActor(d.url, { name: "counter", key: "put-2", crash_policy: "destroy" });
  assert.is(b.json.created, false);
  assert.is(b.json.actor.actor_id, rec.actor_id);
});

test("PUT /actors in another namespace creates a separate actor for the same key", async () => {
  const rec = (await putActor(d.url, { name: "counter", key: "put-3" })).json.actor;
  const c = await putActor(d.url, { name: "counter", key: "put-3" }, "?namespace=other");
  assert.is(c.json.created, true);
  assert.is(c.json.actor.namespace_id, "other");
  assert.is.not(c.json.actor.actor_id, rec.actor_id);
});

test("PUT /actors with an unregistered actor name is 400 actor.name_not_found", async () => {
  isError(await putActor(d.url, { name: "nope", key: "x" }), 400, "actor", "name_not_found");
});

test("PUT /actors with an unknown crash_policy is 400 api.bad_request", async () => {
  isError(await putActor(d.url, { name: "counter", key: "x", crash_policy: "explode" }), 400, "api", "bad_request");
});

test("PUT /actors without a key is 400 api.bad_request", async () => {
  isError(await putActor(d.url, { name: "counter" }), 400, "api", "bad_request");
});

test("PUT /actors with a name that is not a string is 400 api.bad_request", async () => {
  isError(await putActor(d.url, { name: 5, key: "x" }), 400, "api", "bad_request");
});

test("PUT /actors takes a key of 128 characters and refuses 129 with actor.key_too_large", async () => {
  isError(await putActor(d.url, { name: "counter", key: "x".repeat(129) }), 400, "actor", "key_too_large");
  assert.is((await putActor(d.url, { name: "counter", key: "y".repeat(128) })).status, 200);
});

test("PUT /actors with an input that is not a base64 string is 400 api.bad_request", async () => {
  isError(await putActor(d.url, { name: "counter", key: "x", input: "not base64!!" }), 400, "api", "bad_request");
  isError(await putActor(d.url, { name: "counter", key: "x", input: 12 }), 400, "api", "bad_request");
});

test("PUT /actors with a body that is not a JSON object is 400 api.bad_request", async () => {
  isError(await req("/actors", { method: "PUT", body: "{oops", headers: { "content-type": "application/json" } }), 400, "api", "bad_request");
  isError(await req("/actors", { method: "PUT", json: [1, 2] }), 400, "api", "bad_request");
});

test("PUT /actors input is base64 CBOR handed to createState", async () => {
  const input = Buffer.from(cborEncode({ start: 41 })).toString("base64");
  const r = await putActor(d.url, { name: "counter", key: "with-input", input });
  assert.is(r.status, 200);
  const out = await call(d.url, r.json.actor.actor_id, "increment", [1]);
  assert.equal(out, { status: 200, json: { output: 42 } });
});

test("50 concurrent PUTs of one key create one actor", async () => {
  const results = await Promise.all(Array.from({ length: 50 }, () => putActor(d.url, { name: "counter", key: "race" })));
  assert.ok(results.every((r) => r.status === 200));
  assert.is(results.filter((r) => r.json.created).length, 1);
  assert.is(new Set(results.map((r) => r.json.actor.actor_id)).size, 1);
});

const post = (body: Record<string, unknown>) => req("/actors", { method: "POST", json: { runner_name_selector: "default", crash_policy: "sleep", ...body } });

test("POST /actors creates an actor", async () => {
  const a = await post({ name: "counter", key: "post-1" });
  assert.is(a.status, 200);
  assert.type(a.json.actor.actor_id, "string");
});

test("POST /actors with a key in use is 400 actor.duplicate_key naming the existing actor", async () => {
  const a = await post({ name: "counter", key: "post-2" });
  const dup = await post({ name: "counter", key: "post-2" });
  isError(dup, 400, "actor", "duplicate_key");
  assert.is(dup.json.metadata.existing_actor_id, a.json.actor.actor_id);
});

test("POST /actors without a key (absent or null) creates an actor with a random key each time", async () => {
  const n1 = await post({ name: "counter" });
  const n2 = await post({ name: "counter", key: null });
  assert.is(n1.status, 200);
  assert.is(n2.status, 200);
  assert.is.not(n1.json.actor.key, n2.json.actor.key);
});

test("POST /actors with an unknown crash_policy is 400 api.bad_request", async () => {
  isError(await post({ name: "counter", crash_policy: "nope" }), 400, "api", "bad_request");
});

test("GET /actors?actor_ids lists the known ids and drops unknown ones", async () => {
  const byId = await req(`/actors?actor_ids=${counterId},unknownid123`);
  assert.is(byId.status, 200);
  assert.is(byId.json.actors.length, 1);
  assert.is(byId.json.actors[0].actor_id, counterId);
});

test("GET /actors?name lists that name's actors newest first", async () => {
  const x1 = await putActor(d.url, { name: "plain", key: "l1" });
  // Two creates can share a millisecond: let the clock pass the first one's create_ts.
  await waitFor("the clock to pass the first actor's create_ts", () => Date.now() > x1.json.actor.create_ts);
  const x2 = await putActor(d.url, { name: "plain", key: "l2" });
  const byName = await req("/actors?name=plain");
  assert.equal(
    byName.json.actors.map((a: any) => a.actor_id),
    [x2.json.actor.actor_id, x1.json.actor.actor_id],
  );
});

test("GET /actors?name&key lists the actor with that key, in the given namespace only", async () => {
  const x1 = await putActor(d.url, { name: "worker", key: "l1" });
  await putActor(d.url, { name: "worker", key: "l2" });
  const byKey = await req("/actors?name=worker&key=l1");
  assert.equal(
    byKey.json.actors.map((a: any) => a.actor_id),
    [x1.json.actor.actor_id],
  );
  assert.equal((await req("/actors?name=worker&key=l1&namespace=other")).json.actors, []);
});

test("GET /actors needs name or actor_ids, not both, a key only with a name, and at most 32 ids", async () => {
  isError(await req("/actors"), 400, "api", "bad_request");
  isError(await req("/actors?key=l1"), 400, "api", "bad_request");
  isError(await req(`/actors?actor_ids=${counterId}&name=plain`), 400, "api", "bad_request");
  const many = Array.from({ length: 33 }, (_, i) => `id${i}`).join(",");
  isError(await req(`/actors?actor_ids=${many}`), 400, "api", "bad_request");
});

test("DELETE /actors/{id} destroys the actor: it is no longer listed or callable", async () => {
  const a = await putActor(d.url, { name: "plain", key: "doomed" });
  const id = a.json.actor.actor_id;
  const r = await req(`/actors/${id}`, { method: "DELETE" });
  assert.is(r.status, 200);
  assert.equal((await req(`/actors?actor_ids=${id}`)).json.actors, []);
  isError(await call(d.url, id, "hi"), 400, "actor", "not_found");
});

test("PUT /actors with a destroyed actor's key creates a new actor", async () => {
  const a = await putActor(d.url, { name: "plain", key: "reborn" });
  const id = a.json.actor.actor_id;
  await req(`/actors/${id}`, { method: "DELETE" });
  const again = await putActor(d.url, { name: "plain", key: "reborn" });
  assert.is(again.json.created, true);
  assert.is.not(again.json.actor.actor_id, id);
});

test("GET /actors/names without a namespace is 400 api.bad_request", async () => {
  isError(await req("/actors/names"), 400, "api", "bad_request");
});

test("GET /actors/names?namespace lists the registered names", async () => {
  const r = await req("/actors/names?namespace=default");
  assert.is(r.status, 200);
  assert.equal(r.json.names.counter, { metadata: {} });
});

test("GET /actors/{id}/kv/keys/{base64 key} answers the value in base64, or null for a missing key", async () => {
  assert.equal((await call(d.url, counterId, "kvPut", ["greeting", "hello"])).json, { output: true });
  const key = encodeURIComponent(Buffer.from("greeting").toString("base64"));
  const r = await req(`/actors/${counterId}/kv/keys/${key}`);
  assert.is(r.status, 200);
  assert.is(Buffer.from(r.json.value, "base64").toString(), "hello");
  const missing = await req(`/actors/${counterId}/kv/keys/${encodeURIComponent(Buffer.from("nope").toString("base64"))}`);
  assert.equal(missing.json, { value: null });
});

test("GET /actors/{id}/kv/keys with a key that is not URL-encoded base64 is a 400", async () => {
  isError(await req(`/actors/${counterId}/kv/keys/%%%`), 400, "request", "invalid");
  isError(await req(`/actors/${counterId}/kv/keys/abc`), 400, "api", "bad_request");
});

test("GET /actors/{id}/kv/keys of an unknown actor is 400 actor.not_found", async () => {
  const key = encodeURIComponent(Buffer.from("greeting").toString("base64"));
  isError(await req(`/actors/unknown123/kv/keys/${key}`), 400, "actor", "not_found");
});

test("GET /gateway/{id}/health answers ok in plain text", async () => {
  const h = await req(`/gateway/${counterId}/health`);
  assert.is(h.status, 200);
  assert.is(h.text, "ok");
  assert.match(h.headers.get("content-type")!, /^text\/plain/);
});

test("POST /gateway/{id}/action/{name} runs the action and answers its output", async () => {
  const a = await req(`/gateway/${counterId}/action/increment`, { method: "POST", json: { args: [2] } });
  assert.is(a.status, 200);
  assert.type(a.json.output, "number");
});

test("an action body that is not JSON or not exactly {args: [...]} is 400 request.invalid", async () => {
  isError(await req(`/gateway/${counterId}/action/increment`, { method: "POST", body: "{nope" }), 400, "request", "invalid");
  isError(await req(`/gateway/${counterId}/action/increment`, { method: "POST", json: {} }), 400, "request", "invalid");
  isError(await req(`/gateway/${counterId}/action/increment`, { method: "POST", json: { args: 1 } }), 400, "request", "invalid");
  isError(await req(`/gateway/${counterId}/action/increment`, { method: "POST", json: { args: [], extra: 1 } }), 400, "request", "invalid");
});

test("an unknown action is 400 action.not_found", async () => {
  isError(await req(`/gateway/${counterId}/action/nope`, { method: "POST", json: { args: [] } }), 400, "action", "not_found");
});

test("an action on an unknown actor is 400 actor.not_found", async () => {
  isError(await req(`/gateway/nosuchactor/action/get`, { method: "POST", json: { args: [] } }), 400, "actor", "not_found");
});

test("a public user error from an action reaches the caller whole, as a 400", async () => {
  const user = await req(`/gateway/${counterId}/action/fail`, { method: "POST", json: { args: [] } });
  isError(user, 400, "user", "bad_thing");
  assert.is(user.json.message, "it failed");
  assert.equal(user.json.metadata, { why: "because", n: 3 });
});

test("an internal error from an action is a 500 internal.error without its detail", async () => {
  const crash = await req(`/gateway/${counterId}/action/crash`, { method: "POST", json: { args: [] } });
  isError(crash, 500, "internal", "error");
  assert.not.match(crash.text, /secret/);
});

test("an unknown route is 404 route.not_found", async () => {
  isError(await req(`/gateway/${counterId}/nowhere`), 404, "route", "not_found");
  isError(await req(`/nowhere`), 404, "route", "not_found");
});

test("JSON compat tags for BigInt and Uint8Array, and escaped $ arrays", async () => {
  const r = await req(`/gateway/${counterId}/action/echo`, {
    method: "POST",
    json: {
      args: [
        ["$BigInt", "12345678901234567890"],
        ["$Uint8Array", "AQID"],
        ["$$x", 1],
      ],
    },
  });
  assert.is(r.status, 200);
  assert.equal(r.json, {
    output: [
      ["$BigInt", "12345678901234567890"],
      ["$Uint8Array", "AQID"],
      ["$$x", 1],
    ],
  });
});

test("an action body in CBOR is answered in CBOR", async () => {
  const c = await fetch(`${d.url}/gateway/${counterId}/action/echo`, {
    method: "POST",
    headers: { "x-rivet-encoding": "cbor" },
    body: cborEncode({ args: [1, "a"] }),
  });
  assert.is(c.status, 200);
  assert.equal(cborDecode(new Uint8Array(await c.arrayBuffer())), { output: [1, "a"] });
});

test("an error for a CBOR request is encoded in CBOR", async () => {
  const ce = await fetch(`${d.url}/gateway/${counterId}/action/nope`, {
    method: "POST",
    headers: { "x-rivet-encoding": "cbor" },
    body: cborEncode({ args: [] }),
  });
  assert.is(ce.status, 400);
  assert.equal(cborDecode(new Uint8Array(await ce.arrayBuffer())).code, "not_found");
});

test("an error for a BARE request is a BARE ResponseError with CBOR metadata", async () => {
  const be = await fetch(`${d.url}/gateway/${counterId}/action/fail`, {
    method: "POST",
    headers: { "x-rivet-encoding": "bare" },
    body: Buffer.concat([Buffer.from([3, 0, 1]), Buffer.from(cborEncode([]))]),
  });
  assert.is(be.status, 400);
  const err = decodeResponseError(new Uint8Array(await be.arrayBuffer()));
  assert.is(err.group, "user");
  assert.is(err.code, "bad_thing");
  assert.equal(cborDecode(err.metadata!), { why: "because", n: 3 });
});

test("an unknown x-rivet-encoding is 400 encoding.invalid", async () => {
  isError(
    await req(`/gateway/${counterId}/action/get`, { method: "POST", headers: { "x-rivet-encoding": "yaml" }, json: { args: [] } }),
    400,
    "encoding",
    "invalid",
  );
});

test("a truncated BARE body is a 400", async () => {
  const badBare = await fetch(`${d.url}/gateway/${counterId}/action/get`, { method: "POST", headers: { "x-rivet-encoding": "bare" }, body: Buffer.from([3]) });
  assert.is(badBare.status, 400);
});

test("request/ forwards a standard Request and returns the handler's Response unchanged", async () => {
  const r = await req(`/gateway/${counterId}/request/deep/path?q=1&r=2`, { method: "PUT", body: "payload", headers: { "x-test": "yes" } });
  assert.is(r.status, 201);
  assert.is(r.headers.get("x-from-actor"), "yes");
  assert.equal(r.json, { url: "http://actor/deep/path?q=1&r=2", method: "PUT", body: "payload", header: "yes" });
});

test("request/ with an empty path reaches the handler as the root URL", async () => {
  const g = await req(`/gateway/${counterId}/request/`, { method: "GET" });
  assert.is(g.json.url, "http://actor/");
});

test("request/ to an actor without onRequest is 404 handler.request_not_defined", async () => {
  const plain = await putActor(d.url, { name: "plain", key: "noreq" });
  isError(await req(`/gateway/${plain.json.actor.actor_id}/request/x`), 404, "handler", "request_not_defined");
});

test("request/ streams the handler's body through (server-sent events)", async () => {
  const r = await fetch(`${d.url}/gateway/${counterId}/request/stream`);
  assert.is(r.status, 200);
  assert.is(r.headers.get("content-type"), "text/event-stream");
  const reader = r.body!.getReader();
  let text = "";
  let reads = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    reads++;
    text += new TextDecoder().decode(value);
  }
  assert.is(text, "data: 0\n\ndata: 1\n\ndata: 2\n\n");
  assert.ok(reads >= 2, `arrived in ${reads} reads`);
});

test("queue send without wait is accepted and answers a status", async () => {
  const w = await putActor(d.url, { name: "worker", key: "q1" });
  const noWait = await req(`/gateway/${w.json.actor.actor_id}/queue/jobs`, { method: "POST", json: { body: { n: 1 } } });
  assert.is(noWait.status, 200);
  assert.ok(["completed", "timedOut"].includes(noWait.json.status));
});

test("queue send with wait answers the run loop's completion {status, response}", async () => {
  const w = await putActor(d.url, { name: "worker", key: "q2" });
  const waited = await req(`/gateway/${w.json.actor.actor_id}/queue/jobs`, { method: "POST", json: { body: { n: 2 }, wait: true, timeout: 5000 } });
  assert.equal(waited.json, { status: "completed", response: { got: { n: 2 }, name: "jobs" } });
});

test("queue send with a wait that is not a boolean or a negative timeout is 400 request.invalid", async () => {
  const w = await putActor(d.url, { name: "worker", key: "q3" });
  const id = w.json.actor.actor_id;
  isError(await req(`/gateway/${id}/queue/jobs`, { method: "POST", json: { body: 1, wait: "yes" } }), 400, "request", "invalid");
  isError(await req(`/gateway/${id}/queue/jobs`, { method: "POST", json: { body: 1, timeout: -1 } }), 400, "request", "invalid");
});

test("x-rivet-target and x-rivet-actor headers route an action and a health check to the actor", async () => {
  const routed = await req(`/action/get`, { method: "POST", json: { args: [] }, headers: { "x-rivet-target": "actor", "x-rivet-actor": counterId } });
  assert.is(routed.status, 200);
  assert.type(routed.json.output, "number");
  const health = await req(`/health`, { headers: { "x-rivet-target": "actor", "x-rivet-actor": counterId } });
  assert.is(health.text, "ok");
});

test("an actor id with an @token suffix, x-rivet-token and valid x-rivet-conn-params are accepted", async () => {
  const tok = await req(`/gateway/${counterId}@some-token/action/get`, {
    method: "POST",
    json: { args: [] },
    headers: { "x-rivet-token": "t", "x-rivet-conn-params": '{"user":"u"}' },
  });
  assert.is(tok.status, 200);
});

test("a malformed x-rivet-conn-params header is a 400 that names the header, not the body", async () => {
  const r = await req(`/gateway/${counterId}/action/get`, { method: "POST", json: { args: [] }, headers: { "x-rivet-conn-params": "{bad" } });
  isError(r, 400, "request", "invalid");
  assert.match(r.json.message, /x-rivet-conn-params/);
  assert.not.match(r.json.message, /^body/);
});

test("a body over gateway.max_body_bytes is 413 request.body_too_large and the actor still answers", async () => {
  const r = await req(`/gateway/${counterId}/action/echo`, {
    method: "POST",
    body: JSON.stringify({ args: ["x".repeat(70_000)] }),
    headers: { "content-type": "application/json" },
  });
  isError(r, 413, "request", "body_too_large");
  assert.is((await call(d.url, counterId, "get")).status, 200);
});

test("a CORS preflight is answered 204 allowing the origin, POST and the x-rivet headers", async () => {
  const pre = await fetch(`${d.url}/gateway/${counterId}/action/get`, {
    method: "OPTIONS",
    headers: { origin: "http://localhost:3000", "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-rivet-encoding" },
  });
  assert.is(pre.status, 204);
  assert.is(pre.headers.get("access-control-allow-origin"), "http://localhost:3000");
  assert.match(pre.headers.get("access-control-allow-methods")!, /POST/);
  assert.match(pre.headers.get("access-control-allow-headers")!, /x-rivet-encoding/);
});

test("answers and errors carry the CORS allow-origin header", async () => {
  const r = await req(`/gateway/${counterId}/action/get`, { method: "POST", json: { args: [] }, headers: { origin: "http://localhost:3000" } });
  assert.is(r.headers.get("access-control-allow-origin"), "http://localhost:3000");
  const e = await req(`/nowhere`, { headers: { origin: "http://localhost:3000" } });
  assert.is(e.headers.get("access-control-allow-origin"), "http://localhost:3000");
});

const auth = { authorization: `Bearer ${TOKEN}` };
/** A fresh counter's inspector base path (each inspector test changes its own actor's state). */
async function inspectorOf(key: string): Promise<{ id: string; base: string }> {
  const id = (await putActor(d.url, { name: "counter", key })).json.actor.actor_id as string;
  return { id, base: `/gateway/${id}/inspector` };
}

test("the inspector is 401 auth.unauthorized without a token, with a wrong one, or without the Bearer scheme", async () => {
  const base = `/gateway/${counterId}/inspector`;
  isError(await req(`${base}/state`), 401, "auth", "unauthorized");
  isError(await req(`${base}/state`, { headers: { authorization: "Bearer wrong" } }), 401, "auth", "unauthorized");
  isError(await req(`${base}/summary`, { headers: { authorization: TOKEN } }), 401, "auth", "unauthorized");
});

test("inspector GET state answers the actor's state", async () => {
  const { base } = await inspectorOf("insp-state");
  const state = await req(`${base}/state`, { headers: auth });
  assert.is(state.status, 200);
  assert.type(state.json.state.count, "number");
});

test("inspector PATCH state replaces the state that actions then see", async () => {
  const { id, base } = await inspectorOf("insp-patch");
  const patched = await req(`${base}/state`, { method: "PATCH", headers: auth, json: { state: { count: 1000, input: null } } });
  assert.equal(patched.json, { ok: true });
  assert.equal((await call(d.url, id, "get")).json, { output: 1000 });
});

test("inspector PATCH state without a state is 400 api.bad_request", async () => {
  const { base } = await inspectorOf("insp-nostate");
  isError(await req(`${base}/state`, { method: "PATCH", headers: auth, json: { nostate: 1 } }), 400, "api", "bad_request");
});

test("inspector connections answers a list", async () => {
  const { base } = await inspectorOf("insp-conns");
  const conns = await req(`${base}/connections`, { headers: auth });
  assert.ok(Array.isArray(conns.json.connections));
});

test("inspector rpcs lists the actor's actions", async () => {
  const { base } = await inspectorOf("insp-rpcs");
  const rpcs = await req(`${base}/rpcs`, { headers: auth });
  assert.ok(rpcs.json.rpcs.includes("increment"));
});

test("inspector action runs an action on the actor's state", async () => {
  const { base } = await inspectorOf("insp-action");
  await req(`${base}/state`, { method: "PATCH", headers: auth, json: { state: { count: 1000, input: null } } });
  const act = await req(`${base}/action/increment`, { method: "POST", headers: auth, json: { args: [5] } });
  assert.equal(act.json, { output: 1005 });
});

test("inspector queue answers size, maxSize, truncated and the messages", async () => {
  const { base } = await inspectorOf("insp-queue");
  const q = await req(`${base}/queue?limit=5`, { headers: auth });
  assert.type(q.json.size, "number");
  assert.type(q.json.maxSize, "number");
  assert.type(q.json.truncated, "boolean");
  assert.ok(Array.isArray(q.json.messages));
});

test("inspector queue with a limit that is not a number is 400 api.bad_request", async () => {
  const { base } = await inspectorOf("insp-queue-limit");
  isError(await req(`${base}/queue?limit=abc`, { headers: auth }), 400, "api", "bad_request");
});

test("inspector traces clamps a limit over the maximum and answers OTLP", async () => {
  const { base } = await inspectorOf("insp-traces");
  const traces = await req(`${base}/traces?limit=20000`, { headers: auth });
  assert.is(traces.status, 200);
  assert.is(traces.json.clamped, true);
  assert.ok(Array.isArray(traces.json.otlp.resourceSpans));
});

test("inspector workflow-history of an actor without a workflow is null", async () => {
  const { base } = await inspectorOf("insp-wh");
  const wh = await req(`${base}/workflow-history`, { headers: auth });
  assert.equal(wh.json, { history: null, isWorkflowEnabled: false });
});

test("inspector workflow/replay of an actor without a workflow is 400 workflow.not_enabled", async () => {
  const { base } = await inspectorOf("insp-replay");
  isError(await req(`${base}/workflow/replay`, { method: "POST", headers: auth }), 400, "workflow", "not_enabled");
});

test("inspector summary shows the current state, whether state is enabled and the queue size", async () => {
  const { base } = await inspectorOf("insp-summary");
  await req(`${base}/state`, { method: "PATCH", headers: auth, json: { state: { count: 1000, input: null } } });
  await req(`${base}/action/increment`, { method: "POST", headers: auth, json: { args: [5] } });
  const summary = await req(`${base}/summary`, { headers: auth });
  assert.is(summary.json.state.count, 1005);
  assert.type(summary.json.isStateEnabled, "boolean");
  assert.type(summary.json.queueSize, "number");
});

test("inspector in production without a configured token refuses everything", async () => {
  prod = await startDaemon({ env: { AGENT_ENV: "production", AGENT_INSPECTOR_TOKEN: "" } });
  const a = await putActor(prod.url, { name: "counter", key: "p" });
  const r = await fetch(`${prod.url}/gateway/${a.json.actor.actor_id}/inspector/state`, { headers: { authorization: "Bearer anything" } });
  assert.is(r.status, 401);
  assert.is(((await r.json()) as any).code, "unauthorized");
  // The rest of the gateway still works in production.
  assert.is((await call(prod.url, a.json.actor.actor_id, "get")).status, 200);
});

test("a gateway port in use stops the start with an error naming the port and AGENT_GATEWAY_PORT", async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
  const port = (blocker.address() as { port: number }).port;
  const { home, cleanup } = tempHome("gwp");
  try {
    const r = await runCli(["daemon", "start"], { home, env: { AGENT_GATEWAY_PORT: String(port) } });
    assert.is.not(r.code, 0);
    assert.match(r.stderr + r.stdout, new RegExp(`port ${port} is already in use`));
    assert.match(r.stderr + r.stdout, /AGENT_GATEWAY_PORT/);
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    blocker.close();
    cleanup();
  }
});

test("daemon status reports gateway_url and the gateway component", async () => {
  const r = await runCli(["daemon", "status", "--json"], { home: d.home, env: d.env });
  const info = JSON.parse(r.stdout);
  assert.is(info.gateway_url, d.url);
  assert.match(info.gateway_url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.is(info.components.gateway.status, "ok");
});

test.run();

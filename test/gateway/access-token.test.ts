// The gateway with a token (AGENT_GATEWAY_TOKEN): every call needs it, in any of the ways the
// unmodified RivetKit 2.2.1 client sends it, and with it the product's own session actors are
// reachable over HTTP.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import { waitFor } from "../helpers/wait.js";
import { accessHome, jsonAction, raw, type RawResponse } from "./access-helpers.js";

const TOKEN = "gw-t0ken-for-tests";
const BEARER = { authorization: `Bearer ${TOKEN}` };
let h: Awaited<ReturnType<typeof accessHome>>;
let counter = "";

test.before(async () => {
  h = await accessHome({ env: { AGENT_GATEWAY_TOKEN: TOKEN } });
  // User modules load asynchronously: wait until /metadata (with the token) lists them.
  await waitFor(
    "/metadata (with the token) to list the test actors",
    async () => (await raw(h.url, "/metadata", { headers: BEARER })).json?.actorNames?.counter,
  );
  const r = await raw(h.url, "/actors", {
    method: "PUT",
    headers: { ...BEARER, "content-type": "application/json" },
    body: JSON.stringify({ name: "counter", key: "tok", runner_name_selector: "default", crash_policy: "sleep" }),
  });
  counter = r.json.actor.actor_id;
});
test.after(async () => {
  await h?.dispose();
});

function unauthorized(r: RawResponse) {
  assert.is(r.status, 401, r.text);
  assert.is(`${r.json?.group}.${r.json?.code}`, "auth.unauthorized", r.text);
  assert.not.match(r.text, new RegExp(TOKEN));
}

for (const encoding of ["json", "bare"] as const) {
  test(`the unmodified RivetKit client with the token drives user actors and reaches a session (${encoding})`, async () => {
    const client = createClient<any>({ endpoint: h.url, token: TOKEN, encoding } as any) as any;
    try {
      const c = client.counter.getOrCreate([`rk-${encoding}`]);
      assert.is(await c.increment(2), 2);
      const response = await c.fetch("/p?x=1", { method: "POST", body: "hi" });
      assert.is(response.status, 201);
      const reply = await client.worker.getOrCreate([`w-${encoding}`]).send("jobs", { n: 1 }, { wait: true, timeout: 5000 });
      assert.equal(reply, { status: "completed", response: { got: { n: 1 }, name: "jobs" } });
      const session = client.session.getForId(h.sessionActor);
      const messages = await session.messages(0, 10);
      assert.is(messages[0].role, "user");
      assert.is(messages[0].content, "hello");
    } finally {
      await client.dispose?.();
    }
  });
}

test("the unmodified RivetKit client without the token (or with a wrong one) is refused", async () => {
  // Without disableMetadataLookup the client retries a refused /metadata forever (its own
  // behaviour); this way the refusal reaches the caller.
  for (const token of [undefined, "wrong"]) {
    const client = createClient<any>({ endpoint: h.url, ...(token ? { token } : {}), disableMetadataLookup: true, encoding: "json" } as any) as any;
    try {
      await client.counter.getOrCreate(["nope"]).increment(1);
      assert.unreachable("should be refused");
    } catch (error: any) {
      assert.is(`${error.group}.${error.code}`, "auth.unauthorized", String(error));
    } finally {
      await client.dispose?.();
    }
  }
  const r = await raw(h.url, `/actors?name=counter&key=nope`, { headers: BEARER });
  assert.equal(r.json.actors, []);
});

test("the token is accepted as Authorization: Bearer, x-rivet-token and <id>@<token>", async () => {
  assert.is((await raw(h.url, `/gateway/${counter}/action/get`, { ...jsonAction(), headers: { ...BEARER, "content-type": "application/json" } })).status, 200);
  assert.is(
    (await raw(h.url, `/gateway/${counter}/action/get`, { ...jsonAction(), headers: { "x-rivet-token": TOKEN, "content-type": "application/json" } })).status,
    200,
  );
  const r = await raw(h.url, `/gateway/${counter}@${encodeURIComponent(TOKEN)}/action/get`, jsonAction());
  assert.is(r.status, 200, r.text);
  assert.is(r.json.output, 0);
  assert.is(
    (
      await raw(h.url, "/action/get", {
        ...jsonAction(),
        headers: { "x-rivet-target": "actor", "x-rivet-actor": counter, "x-rivet-token": TOKEN, "content-type": "application/json" },
      })
    ).status,
    200,
  );
});

test("a missing or wrong token gets 401 on every management and gateway call, and nothing runs", async () => {
  const wrong: Array<Record<string, string>> = [
    {},
    { authorization: "Bearer wrong" },
    { authorization: `Bearer ${TOKEN}x` },
    { "x-rivet-token": TOKEN.slice(1) },
    { authorization: TOKEN },
  ];
  for (const headers of wrong) {
    unauthorized(await raw(h.url, `/gateway/${counter}/action/increment`, { ...jsonAction([1]), headers: { ...headers, "content-type": "application/json" } }));
  }
  unauthorized(await raw(h.url, `/gateway/${counter}@wrong/action/increment`, jsonAction([1])));
  for (const [method, path] of [
    ["GET", "/metadata"],
    ["GET", "/actors?name=counter"],
    ["GET", "/actors/names?namespace=default"],
    ["PUT", "/actors"],
    ["DELETE", `/actors/${counter}`],
    ["GET", `/actors/${counter}/kv/keys/YQ==`],
    ["POST", `/gateway/${counter}/queue/jobs`],
    ["GET", `/gateway/${counter}/request/x`],
    ["GET", `/gateway/${counter}/health`],
    ["GET", `/gateway/${counter}/inspector/state`],
    ["GET", `/gateway/${h.sessionActor}/inspector/summary`],
    ["GET", "/nowhere"],
  ]) {
    unauthorized(await raw(h.url, path, { method }));
  }
  unauthorized(await raw(h.url, "/health", { headers: { "x-rivet-target": "actor", "x-rivet-actor": counter } }));
  assert.is(
    (await raw(h.url, `/gateway/${counter}/action/get`, { ...jsonAction(), headers: { ...BEARER, "content-type": "application/json" } })).json.output,
    0,
  );
});

test("the service's /health stays open without the token", async () => {
  const r = await raw(h.url, "/health");
  assert.is(r.status, 200);
  assert.is(r.json.status, "ok");
});

test("with the token, session actors are listed and their inspector opens", async () => {
  const listed = await raw(h.url, "/actors?name=session", { headers: BEARER });
  assert.ok(listed.json.actors.some((a: any) => a.actor_id === h.sessionActor));
  assert.ok((await raw(h.url, "/metadata", { headers: BEARER })).json.actorNames.session);
  const summary = await raw(h.url, `/gateway/${h.sessionActor}/inspector/summary`, { headers: BEARER });
  assert.is(summary.status, 200, summary.text);
  assert.ok(summary.json.isWorkflowEnabled);
});

test("a foreign Origin is refused even with the right token", async () => {
  const r = await raw(h.url, `/gateway/${counter}/action/increment`, {
    ...jsonAction([1]),
    headers: { ...BEARER, origin: "https://evil.example", "content-type": "application/json" },
  });
  assert.is(r.status, 403);
  assert.is(r.json.code, "forbidden_origin");
});

test("daemon status says a token is set and never shows it", async () => {
  const json = await h.cli(["daemon", "status", "--json"]);
  assert.is(JSON.parse(json.stdout).gateway_token_set, true);
  const text = await h.cli(["daemon", "status"]);
  assert.match(text.stdout, /\(token set\)/);
  assert.not.match(json.stdout + text.stdout, new RegExp(TOKEN));
});

test.run();

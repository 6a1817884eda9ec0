// The gateway's access rules without a token (the default): foreign Origins and Hosts are refused
// before anything runs, listed origins get their CORS grant, and the product's own `session`
// actors do not exist over HTTP while the CLI keeps reaching them over the socket.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { waitForActors } from "./daemon.js";
import { accessHome, jsonAction, raw, type RawResponse } from "./access-helpers.js";

const LISTED = "http://app.example:8080";
const FOREIGN = "https://evil.example";
let h: Awaited<ReturnType<typeof accessHome>>;
let counter = "";

test.before(async () => {
  h = await accessHome({
    extraConfig: `gateway:\n  cors_origins: ["${LISTED}"]\n  allowed_hosts: ["agent.internal"]\n`,
    // A user module claiming the built-in name, loaded before the agent feature registers it.
    modules: { "shadow.mjs": "export const session = { actions: { messages: () => ['shadowed'] } };\nexport const other = { actions: { hi: () => 'hi' } };\n" },
  });
  await waitForActors(h.url, ["counter"]);
  const r = await raw(h.url, "/actors", {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "counter", key: "access", runner_name_selector: "default", crash_policy: "sleep" }),
  });
  counter = r.json.actor.actor_id;
  await raw(h.url, `/gateway/${counter}/action/increment`, jsonAction([5]));
});
test.after(async () => {
  await h?.dispose();
});

function refused(r: RawResponse, status: number, code: string) {
  assert.is(r.status, status, r.text);
  assert.is(`${r.json?.group}.${r.json?.code}`, code, r.text);
  assert.type(r.json.message, "string");
  assert.is(r.headers["access-control-allow-origin"], undefined, "no CORS grant on a refusal");
}

async function counterValue(): Promise<number> {
  return (await raw(h.url, `/gateway/${counter}/action/get`, jsonAction())).json.output;
}

/** Messages in the session's transcript, read over the socket (as the CLI does). */
async function transcriptLength(): Promise<number> {
  const r = await h.cli(["chat", "--list", "--json"]);
  const s = JSON.parse(r.stdout).sessions.find((x: { id: string }) => x.id === h.sessionId);
  return s.message_count;
}

/**
 * Nothing was queued on the session: a real turn now is the only one the model sees (a queued
 * turn would run first, FIFO) and adds exactly its two messages.
 */
async function assertNoTurnQueued(before: { requests: number; messages: number }) {
  assert.is(await transcriptLength(), before.messages);
  const r = await h.chat(["--resume", h.sessionId, "-q", "check", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(h.fake.requests.length, before.requests + 1);
  assert.is(await transcriptLength(), before.messages + 2);
}

test("a foreign Origin's text/plain POST to a user actor is refused with 403 and changes nothing", async () => {
  const r = await raw(h.url, `/gateway/${counter}/action/increment`, {
    method: "POST",
    headers: { origin: FOREIGN, "content-type": "text/plain" },
    body: JSON.stringify({ args: [100] }),
  });
  refused(r, 403, "auth.forbidden_origin");
  assert.is(await counterValue(), 5);
});

test("a foreign Origin's JSON POST to a user actor is refused with 403 and changes nothing", async () => {
  const r = await raw(h.url, `/gateway/${counter}/action/increment`, {
    ...jsonAction([100]),
    headers: { origin: FOREIGN, "content-type": "application/json" },
  });
  refused(r, 403, "auth.forbidden_origin");
  assert.is(await counterValue(), 5);
});

test("a foreign Origin's preflight gets 403 and no grant", async () => {
  const r = await raw(h.url, `/gateway/${counter}/action/increment`, {
    method: "OPTIONS",
    headers: { origin: FOREIGN, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
  });
  refused(r, 403, "auth.forbidden_origin");
  assert.is(r.headers["access-control-allow-methods"], undefined);
});

test("a foreign Origin cannot queue a turn on a session (text/plain), and no turn reaches the model", async () => {
  const before = { requests: h.fake.requests.length, messages: await transcriptLength() };
  const r = await raw(h.url, `/gateway/${h.sessionActor}/queue/turn`, {
    method: "POST",
    headers: { origin: FOREIGN, "content-type": "text/plain" },
    body: JSON.stringify({ body: { text: "run rm -rf" } }),
  });
  refused(r, 403, "auth.forbidden_origin");
  await assertNoTurnQueued(before);
});

test("a foreign Origin cannot append to a session with a JSON POST", async () => {
  const messages = await transcriptLength();
  const r = await raw(h.url, `/gateway/${h.sessionActor}/action/append`, {
    ...jsonAction([[{ role: "user", content: "injected" }]]),
    headers: { origin: FOREIGN, "content-type": "application/json" },
  });
  refused(r, 403, "auth.forbidden_origin");
  assert.is(await transcriptLength(), messages);
});

test("a foreign Origin's preflight to a session actor gets 403 and no grant", async () => {
  const r = await raw(h.url, `/gateway/${h.sessionActor}/queue/turn`, {
    method: "OPTIONS",
    headers: { origin: FOREIGN, "access-control-request-method": "POST" },
  });
  refused(r, 403, "auth.forbidden_origin");
});

test("a foreign Origin is refused on management routes, /metadata and /health too", async () => {
  for (const [method, path] of [
    ["GET", "/actors?name=session"],
    ["GET", "/metadata"],
    ["GET", "/health"],
    ["DELETE", `/actors/${counter}`],
  ]) {
    refused(await raw(h.url, path, { method, headers: { origin: FOREIGN } }), 403, "auth.forbidden_origin");
  }
  assert.is(await counterValue(), 5);
});

test("Origin: null (a sandboxed frame, a file) is a foreign origin", async () => {
  refused(
    await raw(h.url, `/gateway/${counter}/action/increment`, { ...jsonAction([1]), headers: { origin: "null", "content-type": "application/json" } }),
    403,
    "auth.forbidden_origin",
  );
});

test("a cross-site browser request without Origin (an <img>, a navigation) is refused", async () => {
  refused(await raw(h.url, `/gateway/${counter}/request/x`, { headers: { "sec-fetch-site": "cross-site" } }), 403, "auth.forbidden_origin");
  const own = await raw(h.url, `/gateway/${counter}/health`, { headers: { "sec-fetch-site": "none" } });
  assert.is(own.status, 200);
});

test("a localhost page on another port is a foreign origin", async () => {
  refused(
    await raw(h.url, `/gateway/${counter}/action/get`, { ...jsonAction(), headers: { origin: "http://localhost:3000", "content-type": "application/json" } }),
    403,
    "auth.forbidden_origin",
  );
});

test("a listed origin is served with its own grant (credentials, never *)", async () => {
  const pre = await raw(h.url, `/gateway/${counter}/action/increment`, {
    method: "OPTIONS",
    headers: { origin: LISTED, "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-rivet-encoding" },
  });
  assert.is(pre.status, 204);
  assert.is(pre.headers["access-control-allow-origin"], LISTED);
  assert.is(pre.headers["access-control-allow-credentials"], "true");
  assert.match(String(pre.headers["access-control-allow-methods"]), /POST/);
  const r = await raw(h.url, `/gateway/${counter}/action/increment`, { ...jsonAction([1]), headers: { origin: LISTED, "content-type": "application/json" } });
  assert.is(r.status, 200, r.text);
  assert.is(r.json.output, 6);
  assert.is(r.headers["access-control-allow-origin"], LISTED);
  assert.is(r.headers.vary, "Origin");
});

test("the gateway's own origin is served without CORS headers", async () => {
  const own = new URL(h.url);
  const r = await raw(h.url, `/gateway/${counter}/action/get`, {
    ...jsonAction(),
    headers: { origin: `http://${own.host}`, "content-type": "application/json" },
  });
  assert.is(r.status, 200, r.text);
  assert.is(r.headers["access-control-allow-origin"], undefined);
});

test("a foreign Host (DNS rebinding) is refused with 403 before anything runs", async () => {
  const port = new URL(h.url).port;
  const r = await raw(h.url, `/gateway/${counter}/action/increment`, {
    ...jsonAction([100]),
    headers: { host: `evil.example:${port}`, "content-type": "application/json" },
  });
  refused(r, 403, "auth.forbidden_host");
  refused(await raw(h.url, "/health", { headers: { host: "evil.example" } }), 403, "auth.forbidden_host");
  assert.is(await counterValue(), 6);
});

test("loopback Host names on any port and listed hosts are served", async () => {
  for (const host of ["localhost:1", "127.0.0.1", "[::1]:9999", "LOCALHOST", "agent.internal", "agent.internal:6420"]) {
    const r = await raw(h.url, "/health", { headers: { host } });
    assert.is(r.status, 200, `${host}: ${r.text}`);
  }
});

test("without the token, session actors cannot be listed or named", async () => {
  assert.equal((await raw(h.url, "/actors?name=session")).json, { actors: [] });
  assert.equal(
    (await raw(h.url, `/actors?actor_ids=${h.sessionActor},${counter}`)).json.actors.map((a: any) => a.actor_id),
    [counter],
  );
  assert.equal((await raw(h.url, `/actors?name=session&key=${h.sessionId}`)).json, { actors: [] });
  const names = (await raw(h.url, "/actors/names?namespace=default")).json.names;
  assert.ok(names.counter);
  assert.not.ok("session" in names);
  const metadata = (await raw(h.url, "/metadata")).json;
  assert.ok(metadata.actorNames.counter);
  assert.not.ok("session" in metadata.actorNames);
});

test("without the token, a session's actions, queue, KV, requests and inspector answer as if it did not exist", async () => {
  const before = { requests: h.fake.requests.length, messages: await transcriptLength() };
  const id = h.sessionActor;
  refused(await raw(h.url, `/gateway/${id}/action/messages`, jsonAction([0, 10])), 400, "actor.not_found");
  refused(
    await raw(h.url, `/gateway/${id}/queue/turn`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body: { text: "hi" } }),
    }),
    400,
    "actor.not_found",
  );
  refused(await raw(h.url, `/gateway/${id}/inspector/summary`), 400, "actor.not_found");
  refused(
    await raw(h.url, `/gateway/${id}/inspector/state`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ state: {} }),
    }),
    400,
    "actor.not_found",
  );
  refused(await raw(h.url, `/gateway/${id}/request/anything`), 400, "actor.not_found");
  refused(await raw(h.url, `/gateway/${id}/health`), 400, "actor.not_found");
  refused(await raw(h.url, `/actors/${id}/kv/keys/${Buffer.from("meta").toString("base64")}`), 400, "actor.not_found");
  refused(await raw(h.url, `/actors/${id}`, { method: "DELETE" }), 400, "actor.not_found");
  refused(await raw(h.url, "/", { headers: { "x-rivet-target": "actor", "x-rivet-actor": id } }), 404, "route.not_found");
  refused(
    await raw(h.url, "/action/messages", {
      ...jsonAction([0, 10]),
      headers: { "x-rivet-target": "actor", "x-rivet-actor": id, "content-type": "application/json" },
    }),
    400,
    "actor.not_found",
  );
  // The same answers as an id that never existed.
  refused(await raw(h.url, `/gateway/nosuchactor1234/action/messages`, jsonAction([0, 10])), 400, "actor.not_found");
  await assertNoTurnQueued(before);
});

test("without the token, session actors cannot be created", async () => {
  for (const method of ["PUT", "POST"]) {
    const r = await raw(h.url, "/actors", {
      method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "session", key: "web", runner_name_selector: "default", crash_policy: "sleep" }),
    });
    refused(r, 400, "actor.name_not_found");
  }
  const listed = JSON.parse((await h.cli(["actors", "list", "--name", "session", "--json"])).stdout).actors;
  assert.is(listed.length, 1);
});

test("a user module cannot take the built-in session name", async () => {
  const r = JSON.parse((await h.cli(["actors", "list", "--json"])).stdout);
  const shadow = r.modules.find((m: { file: string }) => m.file.endsWith("shadow.mjs"));
  assert.match(shadow.error, /session is a built-in actor name/);
  assert.equal(shadow.actors, ["other"]);
  // The built-in is still the session actor (its actions are its feature's: refused as built-in, not run by the shadow).
  const got = await h.cli(["actors", "call", h.sessionActor, "messages", "0", "10", "--json"]);
  assert.is(got.code, 1, got.stderr);
  assert.match(got.stderr, /built-in session actor/);
  assert.not.match(got.stdout + got.stderr, /shadowed/);
});

test("the CLI keeps reaching the session over the socket", async () => {
  const messages = await transcriptLength();
  const r = await h.chat(["--resume", h.sessionId, "-q", "again", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(JSON.parse(r.stdout).session_id, h.sessionId);
  assert.is(await transcriptLength(), messages + 2);
});

test("daemon status says no gateway token is set", async () => {
  assert.is(h.status.gateway_token_set, false);
  const text = await h.cli(["daemon", "status"]);
  assert.match(text.stdout, /gateway\s+http:\/\/127\.0\.0\.1:\d+ \(no token\)/);
});

test.run();

// Raw onWebSocket sockets under load (a client that does not read, a client that floods a busy
// actor), and what an actor's own handlers get of the gateway's access rules (no token; no
// WebSocket from a page that only "*" admits). A real daemon, user modules in its runner.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import { WebSocket } from "ws";
import { launchDaemon, runCli, tempHome, waitFor } from "../helpers/cli.js";

const MODULE = `
import { existsSync } from "node:fs";
const flag = new URL("../go.flag", import.meta.url);
export const flood = {
  state: { closed: null, sent: 0 },
  actions: { result: (c) => c.state },
  // Sends 1 MiB per timer turn for as long as the socket is open.
  onWebSocket: (c, ws) => {
    const chunk = "x".repeat(64 * 1024);
    ws.addEventListener("close", (e) => { c.state.closed = e.code; });
    ws.addEventListener("message", () => {
      const pump = () => {
        if (ws.readyState !== 1) return;
        for (let i = 0; i < 16; i++) ws.send(chunk);
        c.state.sent += 16;
        setTimeout(pump, 1);
      };
      pump();
    });
  },
};
export const sink = {
  actions: {},
  // The first message keeps the worker busy until the test drops a flag file (at most 6 s).
  onWebSocket: (c, ws) => {
    let got = 0;
    ws.addEventListener("message", (e) => {
      if (got++ === 0) { const until = Date.now() + 6000; while (!existsSync(flag) && Date.now() < until) {} }
      if (e.data === "count?") ws.send("got " + got);
    });
  },
};
export const echo = {
  actions: {},
  onRequest: (c, req) => Response.json({ auth: req.headers.get("authorization"), token: req.headers.get("x-rivet-token"), url: req.url }),
  onWebSocket: (c, ws, { request }) => {
    ws.send(JSON.stringify({ auth: request.headers.get("authorization"), token: request.headers.get("x-rivet-token"), url: request.url }));
  },
};
`;

const TOKEN = "gateway-token-never-for-actors";

let home = "";
let cleanup = () => {};
let url = "";
const env = { AGENT_GATEWAY_PORT: "0", AGENT_GATEWAY_TOKEN: TOKEN };
const auth = { authorization: `Bearer ${TOKEN}` };

test.before(async () => {
  ({ home, cleanup } = tempHome("wslimits"));
  mkdirSync(join(home, "actors"));
  writeFileSync(join(home, "actors", "limits.mjs"), MODULE);
  writeFileSync(join(home, "config.yaml"), 'gateway:\n  cors_origins: ["*", "https://app.example"]\n');
  ({ url } = await launchDaemon(home, env));
});
test.after(async () => {
  await runCli(["daemon", "stop"], { home, env });
  cleanup();
});

async function put(name: string, key: string): Promise<string> {
  const r = await fetch(`${url}/actors`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...auth },
    body: JSON.stringify({ name, key, runner_name_selector: "default", crash_policy: "sleep" }),
  });
  return ((await r.json()) as any).actor.actor_id;
}

async function result(id: string): Promise<any> {
  const r = await fetch(`${url}/gateway/${id}/action/result`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth },
    body: '{"args":[]}',
  });
  return ((await r.json()) as any).output;
}

function open(id: string, path: string, headers: Record<string, string> = auth): Promise<WebSocket> {
  const ws = new WebSocket(`${url.replace("http", "ws")}/gateway/${id}/websocket/${path}`, { headers });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

test("a client that does not read is closed with 1013 once 8 MiB wait for it, and the handler's sends stop", async () => {
  const id = await put("flood", "slow");
  const ws = await open(id, "x");
  let received = 0;
  ws.on("message", (d: Buffer) => {
    received += d.length;
  });
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  ws.pause();
  ws.send("go");
  const state = await waitFor("the handler to see its socket close", async () => {
    const s = await result(id);
    return s.closed !== null && s;
  });
  assert.is(state.closed, 1013);
  ws.resume();
  assert.is(await closed, 1013, "the client reads the close frame after what was buffered");
  // What reached the client: at most the 8 MiB bound plus what the kernel's buffers took, while
  // the handler went on sending far more until it heard of the close (then it stopped).
  const sent = (await result(id)).sent * 64 * 1024;
  assert.ok(received < 24 * 1024 * 1024, `${received} bytes reached the client`);
  assert.ok(received < sent, `${received} < ${sent}`);
  assert.is((await result(id)).sent * 64 * 1024, sent, "the handler stopped sending");
});

test("a client flooding a busy actor is no longer read from, then every message arrives", async () => {
  const id = await put("sink", "busy");
  const ws = await open(id, "x");
  const replies: string[] = [];
  ws.on("message", (d: Buffer) => replies.push(d.toString()));
  const chunk = Buffer.alloc(128 * 1024, 1);
  const n = 400;
  for (let i = 0; i < n; i++) ws.send(chunk);
  // The daemon reads until its bound, then stops: the rest stays in the client's buffer.
  let last = -1;
  let still = 0;
  await waitFor(
    "the client's buffer to stop draining",
    () => {
      const now = ws.bufferedAmount;
      still = now === last ? still + 1 : 0;
      last = now;
      return still >= 10;
    },
    5_000,
  );
  assert.ok(ws.bufferedAmount > 16 * 1024 * 1024, `${ws.bufferedAmount} bytes still with the client`);
  writeFileSync(join(home, "go.flag"), "");
  ws.send("count?");
  await waitFor("every message to reach the actor", () => replies.includes(`got ${n + 1}`), 30_000);
  assert.ok(existsSync(join(home, "go.flag")));
  ws.close();
});

test("onRequest does not see the gateway token, whether sent as Authorization or x-rivet-token; an app's own Authorization stays", async () => {
  const id = await put("echo", "http");
  const viaBearer = await fetch(`${url}/gateway/${id}/request/who`, { headers: auth });
  assert.equal(await viaBearer.json(), { auth: null, token: null, url: "http://actor/who" });
  const viaHeader = await fetch(`${url}/gateway/${id}/request/who`, { headers: { "x-rivet-token": TOKEN, authorization: "Bearer app-session-1" } });
  assert.equal(await viaHeader.json(), { auth: "Bearer app-session-1", token: null, url: "http://actor/who" });
  // Header routing (x-rivet-target: actor, the path relative to the actor) reaches the same onRequest.
  const routed = await fetch(`${url}/request/who`, { headers: { ...auth, "x-rivet-target": "actor", "x-rivet-actor": id } });
  assert.equal(await routed.json(), { auth: null, token: null, url: "http://actor/who" });
  const routedHeader = await fetch(`${url}/request/who`, { headers: { "x-rivet-token": TOKEN, "x-rivet-target": "actor", "x-rivet-actor": id } });
  assert.equal(await routedHeader.json(), { auth: null, token: null, url: "http://actor/who" });
});

test("the RivetKit client's fetch and webSocket reach the actor without the gateway token", async () => {
  const client = createClient<any>({ endpoint: url, token: TOKEN } as any) as any;
  try {
    const id = await put("echo", "client");
    const handle = client.echo.getForId(id);
    const r = await handle.fetch("/who");
    assert.equal(await r.json(), { auth: null, token: null, url: "http://actor/who" });
    const ws = await handle.webSocket("/sock");
    const first = await new Promise<string>((resolve) => ws.addEventListener("message", (e: any) => resolve(String(e.data)), { once: true }));
    const seen = JSON.parse(first);
    assert.is(seen.auth, null);
    assert.is(seen.token, null);
    assert.not.match(seen.url, TOKEN);
    ws.close();
  } finally {
    await client.dispose();
  }
});

async function upgradeStatus(id: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace("http", "ws")}/gateway/${id}/websocket/x`, { headers });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("open", () => {
      resolve(101);
      ws.close();
    });
    ws.once("error", () => undefined);
  });
}

test('with "*" in cors_origins a page may call over HTTP without credentials, but opens a WebSocket only from an exactly listed origin', async () => {
  const id = await put("echo", "cors");
  const http = await fetch(`${url}/gateway/${id}/request/who`, { headers: { ...auth, origin: "https://any.example" } });
  assert.is(http.status, 200);
  assert.is(http.headers.get("access-control-allow-origin"), "*");
  assert.is(http.headers.get("access-control-allow-credentials"), null);
  assert.is(await upgradeStatus(id, { ...auth, origin: "https://any.example" }), 403);
  assert.is(await upgradeStatus(id, { ...auth, origin: "https://app.example" }), 101);
  assert.is(await upgradeStatus(id, auth), 101, "a client without Origin (Node, curl) is not a page");
});

test.run();

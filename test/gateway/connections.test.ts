// Live connections: the unmodified RivetKit 2.2.1 client's handle.connect() in each encoding,
// raw onWebSocket sockets, the access rules on upgrades, and a reconnect after a daemon restart.
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import { WebSocket } from "ws";
import { launchDaemon, runCli, tempHome, waitFor } from "../helpers/cli.js";

const ROOM = `
export const room = {
  state: { said: 0, connects: 0, disconnects: 0 },
  onBeforeConnect: (c, params) => {
    if (params?.name === "mallory") throw Object.assign(new Error("not welcome here"), { public: true, code: "forbidden" });
  },
  createConnState: (c, params) => ({ name: params?.name ?? "anon" }),
  onConnect: (c, conn) => { c.state.connects++; },
  onDisconnect: (c, conn) => { c.state.disconnects++; },
  actions: {
    say: (c, text) => { c.state.said++; c.broadcast("message", c.conn?.state.name ?? "http", text); return c.state.said; },
    whoami: (c) => (c.conn ? { name: c.conn.state.name, params: c.conn.params } : null),
    direct: (c, text) => { for (const conn of c.conns.values()) conn.send("direct", text); return c.conns.size; },
    counts: (c) => ({ connects: c.state.connects, disconnects: c.state.disconnects, live: c.conns.size }),
  },
  options: { sleepTimeout: 400 },
};
export const raw = {
  state: { opened: 0 },
  actions: { opened: (c) => c.state.opened },
  onWebSocket: (c, ws, { request }) => {
    c.state.opened++;
    ws.addEventListener("message", (e) => ws.send("echo:" + e.data));
    ws.send("hello " + new URL(request.url).pathname);
  },
};
`;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

let home = "";
let cleanup = () => {};
let url = "";
let port = 0;
test.before(async () => {
  ({ home, cleanup } = tempHome("conn"));
  mkdirSync(join(home, "actors"));
  writeFileSync(join(home, "actors", "room.mjs"), ROOM);
  port = await freePort();
  ({ url } = await launchDaemon(home, { AGENT_GATEWAY_PORT: String(port) }));
});
test.after(async () => {
  await runCli(["daemon", "stop"], { home, env: { AGENT_GATEWAY_PORT: String(port) } });
  cleanup();
});

async function put(name: string, key: string): Promise<string> {
  const r = await fetch(`${url}/actors`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, key, runner_name_selector: "default", crash_policy: "sleep" }),
  });
  return ((await r.json()) as any).actor.actor_id;
}

async function record(id: string): Promise<any> {
  return ((await (await fetch(`${url}/actors?actor_ids=${id}`)).json()) as any).actors[0];
}

async function inspectorConnections(id: string): Promise<any[]> {
  return ((await (await fetch(`${url}/gateway/${id}/inspector/connections`)).json()) as any).connections.filter((c: any) => c.type === "websocket");
}

for (const encoding of ["json", "cbor", "bare"] as const) {
  const name = (behaviour: string) => `connect() over ${encoding}: ${behaviour}`;

  test(name("an action over the connection answers and sees its connection's params and state"), async () => {
    const client = createClient<any>({ endpoint: url, encoding } as any) as any;
    try {
      const conn = client.room.getOrCreate([`who-${encoding}`], { params: { name: "ann" } }).connect();
      assert.equal(await conn.whoami(), { name: "ann", params: { name: "ann" } });
      await conn.dispose();
    } finally {
      await client.dispose();
    }
  });

  test(name("an event from c.broadcast and one from conn.send reach conn.on"), async () => {
    const client = createClient<any>({ endpoint: url, encoding } as any) as any;
    try {
      const conn = client.room.getOrCreate([`events-${encoding}`], { params: { name: "bob" } }).connect();
      const got: unknown[] = [];
      conn.on("message", (...args: unknown[]) => got.push(["message", ...args]));
      conn.on("direct", (...args: unknown[]) => got.push(["direct", ...args]));
      assert.is(await conn.say("hi"), 1);
      assert.is(await conn.direct("just you"), 1);
      await waitFor("both events", () => got.length === 2, 5000);
      assert.equal(got, [
        ["message", "bob", "hi"],
        ["direct", "just you"],
      ]);
      await conn.dispose();
    } finally {
      await client.dispose();
    }
  });

  test(name("onConnect and onDisconnect run, and the inspector lists the connection, then no longer"), async () => {
    const client = createClient<any>({ endpoint: url, encoding } as any) as any;
    try {
      const handle = client.room.getOrCreate([`hooks-${encoding}`]);
      const conn = handle.connect();
      assert.equal(await conn.counts(), { connects: 1, disconnects: 0, live: 1 });
      const id = await handle.resolve();
      const listed = await inspectorConnections(id);
      assert.is(listed.length, 1);
      assert.equal(listed[0].details.state, { name: "anon" });
      await conn.dispose();
      // Read through the inspector: a stateless call is itself a connection for its length (as RivetKit's).
      const hooks = async () => {
        const { connects, disconnects } = ((await (await fetch(`${url}/gateway/${id}/inspector/state`)).json()) as any).state;
        return { connects, disconnects };
      };
      await waitFor("onDisconnect", async () => (await hooks()).disconnects === 1, 5000);
      assert.equal(await hooks(), { connects: 1, disconnects: 1 });
      assert.equal(await inspectorConnections(id), []);
      assert.equal(await handle.counts(), { connects: 2, disconnects: 1, live: 1 }, "the stateless call's own connection");
      assert.equal(await hooks(), { connects: 2, disconnects: 2 });
    } finally {
      await client.dispose();
    }
  });
}

test("a throw from onBeforeConnect refuses the connection with the actor's error", async () => {
  const client = createClient<any>({ endpoint: url, encoding: "json" } as any) as any;
  try {
    const conn = client.room.getOrCreate(["refused"], { params: { name: "mallory" } }).connect();
    const errors: any[] = [];
    conn.onError((e: any) => errors.push(e));
    await waitFor("the refusal", () => errors.length > 0, 5000);
    assert.is(errors[0].code, "forbidden");
    assert.match(errors[0].message, /not welcome here/);
    await conn.dispose();
  } finally {
    await client.dispose();
  }
});

test("a connected actor does not idle-sleep while a sibling without a connection does", async () => {
  const client = createClient<any>({ endpoint: url, encoding: "cbor" } as any) as any;
  try {
    const handle = client.room.getOrCreate(["awake"]);
    const conn = handle.connect();
    await conn.counts();
    const connected = await handle.resolve();
    const sibling = await put("room", "asleep");
    await fetch(`${url}/gateway/${sibling}/action/counts`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[]}' });
    await waitFor("the sibling to sleep", async () => (await record(sibling)).sleep_ts !== null, 10_000);
    const rec = await record(connected);
    assert.is(rec.sleep_ts, null);
    assert.ok(rec.connectable_ts);
    await conn.dispose();
  } finally {
    await client.dispose();
  }
});

test("a raw WebSocket reaches the actor's onWebSocket with its path, both ways", async () => {
  const id = await put("raw", "ws");
  const ws = new WebSocket(`${url.replace("http", "ws")}/gateway/${id}/websocket/some/path?x=1`);
  const got: string[] = [];
  ws.on("message", (d) => got.push(d.toString()));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  ws.send("ping");
  await waitFor("two messages", () => got.length === 2, 5000);
  assert.equal(got, ["hello /some/path", "echo:ping"]);
  ws.close();
});

async function refusedStatus(target: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(target, { headers });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("open", () => reject(new Error("the upgrade was accepted")));
    ws.once("error", () => undefined);
  });
}

test("an upgrade from an unlisted Origin or with a foreign Host is refused before the actor runs", async () => {
  const id = await put("raw", "guarded");
  const target = `${url.replace("http", "ws")}/gateway/${id}/websocket/x`;
  assert.is(await refusedStatus(target, { Origin: "https://evil.example" }), 403);
  assert.is(await refusedStatus(target, { Host: "evil.example" }), 403);
  const opened = await fetch(`${url}/gateway/${id}/action/opened`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[]}' });
  assert.is(((await opened.json()) as any).output, 0);
});

test("an upgrade to an unknown actor is refused with 400 actor.not_found", async () => {
  assert.is(await refusedStatus(`${url.replace("http", "ws")}/gateway/nosuchactor00000/connect`, {}), 400);
});

test("connection params with a malformed percent-encoding are refused with 400, not an internal error", async () => {
  const id = await put("raw", "badparams");
  const status = await new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(`${url.replace("http", "ws")}/gateway/${id}/connect`, ["rivet", "rivet_encoding.json", "rivet_conn_params.%E0%A4%A"]);
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("open", () => reject(new Error("the upgrade was accepted")));
    ws.once("error", () => undefined);
  });
  assert.is(status, 400);
});

test("with a gateway token, an upgrade without it is refused 401 and the client that sends it connects", async () => {
  const t = tempHome("conntok");
  mkdirSync(join(t.home, "actors"));
  writeFileSync(join(t.home, "actors", "room.mjs"), ROOM);
  const env = { AGENT_GATEWAY_TOKEN: "s3cret-token-for-the-test", AGENT_GATEWAY_PORT: "0" };
  const d = await launchDaemon(t.home, env);
  try {
    const r = await fetch(`${d.url}/actors`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: `Bearer ${env.AGENT_GATEWAY_TOKEN}` },
      body: JSON.stringify({ name: "room", key: "tok", runner_name_selector: "default", crash_policy: "sleep" }),
    });
    const id = ((await r.json()) as any).actor.actor_id;
    assert.is(await refusedStatus(`${d.url.replace("http", "ws")}/gateway/${id}/connect`, {}), 401);
    const client = createClient<any>({ endpoint: d.url, token: env.AGENT_GATEWAY_TOKEN, encoding: "json" } as any) as any;
    try {
      const conn = client.room.getForId(id).connect();
      assert.equal(await conn.counts(), { connects: 1, disconnects: 0, live: 1 });
      await conn.dispose();
    } finally {
      await client.dispose();
    }
  } finally {
    await runCli(["daemon", "stop"], { home: t.home, env });
    t.cleanup();
  }
});

test("the client reconnects by itself after a daemon restart, and its connection works again", async () => {
  const env = { AGENT_GATEWAY_PORT: String(port) };
  const client = createClient<any>({ endpoint: url, encoding: "bare" } as any) as any;
  try {
    const handle = client.room.getOrCreate(["restart"], { params: { name: "cat" } });
    const conn = handle.connect();
    const got: unknown[] = [];
    conn.on("message", (...args: unknown[]) => got.push(args));
    assert.is(await conn.say("before"), 1);
    const stopped = await runCli(["daemon", "stop"], { home, env });
    assert.is(stopped.code, 0, stopped.stderr);
    await launchDaemon(home, env);
    const n = await waitFor(
      "an action over the reconnected connection",
      async () => {
        try {
          return await conn.say("after");
        } catch {
          return null;
        }
      },
      20_000,
    );
    assert.ok(n >= 2, "the state survived the restart");
    await waitFor("the event after the restart", () => got.some((a: any) => a[1] === "after"), 5000);
    assert.ok((await inspectorConnections(await handle.resolve())).length >= 1);
    await conn.dispose();
  } finally {
    await client.dispose();
  }
});

test.run();

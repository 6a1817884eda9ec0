// Connections when the actor stops under them (sleep, destroy, a crash, its runner dying) and
// connection state changed by the actor's code, seen by the inspector: the unmodified RivetKit
// 2.2.1 client against a real daemon whose user module runs in the runner.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import { WebSocket } from "ws";
import { launchDaemon, runCli, tempHome, waitFor } from "../helpers/cli.js";

// onDisconnect leaves a line in $AGENT_HOME/marks.log (written synchronously by the worker), so a
// test sees it even when the actor's state and KV are gone (destroy).
const ROOM = `
import { appendFileSync } from "node:fs";
const mark = (what) => appendFileSync(new URL("../marks.log", import.meta.url), what + "\\n");
export const room = {
  state: { disconnects: 0 },
  createConnState: (c, params) => ({ name: params?.name ?? "anon", visits: 0 }),
  onConnect: (c, conn) => { conn.state.greeted = "by onConnect"; },
  onDisconnect: (c, conn) => { c.state.disconnects++; mark(c.key.join("") + ":" + conn.state.name); },
  actions: {
    visit: (c) => ++c.conn.state.visits,
    nap: (c) => { c.sleep(); return true; },
    boom: (c) => { setTimeout(() => { throw new Error("boom from a timer"); }, 0); return true; },
    quit: (c) => { setTimeout(() => process.exit(3), 0); return true; },
    counts: (c) => ({ disconnects: c.state.disconnects }),
  },
};
`;

let home = "";
let cleanup = () => {};
let url = "";
const env = { AGENT_GATEWAY_PORT: "0" };

test.before(async () => {
  ({ home, cleanup } = tempHome("connlife"));
  mkdirSync(join(home, "actors"));
  writeFileSync(join(home, "actors", "room.mjs"), ROOM);
  ({ url } = await launchDaemon(home, env));
});
test.after(async () => {
  await runCli(["daemon", "stop"], { home, env });
  cleanup();
});

const marks = (): string[] => {
  try {
    return readFileSync(join(home, "marks.log"), "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
};

async function put(key: string, crashPolicy = "sleep"): Promise<string> {
  const r = await fetch(`${url}/actors`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "room", key, runner_name_selector: "default", crash_policy: crashPolicy }),
  });
  return ((await r.json()) as any).actor.actor_id;
}

async function action(id: string, name: string): Promise<any> {
  const r = await fetch(`${url}/gateway/${id}/action/${name}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[]}' });
  return ((await r.json()) as any).output;
}

/** A connection whose close events (code, reason) are recorded, once it answers. */
async function connected(client: any, id: string, name: string) {
  const conn = client.room.getForId(id, { params: { name } }).connect();
  let closes = 0;
  let opens = 0;
  conn.onOpen(() => opens++);
  conn.onClose(() => closes++);
  conn.onError(() => undefined);
  assert.is(await conn.visit(), 1);
  return { conn, closes: () => closes, opens: () => opens };
}

test("a sleep closes the connection cleanly after onDisconnect ran, and the client reconnects by itself", async () => {
  const client = createClient<any>({ endpoint: url, encoding: "json" } as any) as any;
  try {
    const id = await put("s");
    const { conn, closes, opens } = await connected(client, id, "ann");
    // A bare socket speaking the same protocol shows the close frame the client gets.
    const bare = new WebSocket(`${url.replace("http", "ws")}/gateway/${id}/connect`, ["rivet", "rivet_encoding.json"]);
    const frames: string[] = [];
    bare.on("message", (d) => frames.push(d.toString()));
    const bareClosed = new Promise<[number, string]>((resolve) => bare.once("close", (code, reason) => resolve([code, reason.toString()])));
    await waitFor("the bare socket's Init", () => frames.some((f) => f.includes("Init")), 10_000);
    assert.ok(await action(id, "nap"));
    await waitFor("the client to see the close", () => closes() >= 1, 10_000);
    assert.equal(await bareClosed, [1012, "actor.stopped"], "a clean close with a reason, not a lost connection");
    await waitFor("onDisconnect's mark", () => marks().includes("s:ann"), 10_000);
    // The client reconnects (waking the actor): its connection answers again, with a new conn state.
    await waitFor("the client to reconnect", () => opens() >= 2, 15_000);
    assert.is(await conn.visit(), 1);
    assert.ok((await action(id, "counts")).disconnects >= 1, "onDisconnect's state change was saved with the sleep");
    await conn.dispose();
  } finally {
    await client.dispose();
  }
});

test("a destroy runs onDisconnect for each live connection and the clients see the close", async () => {
  const client = createClient<any>({ endpoint: url, encoding: "cbor" } as any) as any;
  try {
    const id = await put("d");
    const a = await connected(client, id, "bob");
    const b = await connected(client, id, "cy");
    const r = await fetch(`${url}/actors/${id}`, { method: "DELETE" });
    assert.is(r.status, 200);
    await waitFor("both clients to see the close", () => a.closes() >= 1 && b.closes() >= 1, 10_000);
    await waitFor("onDisconnect for both", () => marks().includes("d:bob") && marks().includes("d:cy"), 10_000);
    await a.conn.dispose();
    await b.conn.dispose();
  } finally {
    await client.dispose();
  }
});

test("a crash from a throw in a timer runs onDisconnect (the runner's worker is alive)", async () => {
  const client = createClient<any>({ endpoint: url, encoding: "bare" } as any) as any;
  try {
    const id = await put("c");
    const { conn, closes } = await connected(client, id, "dee");
    assert.ok(await action(id, "boom"));
    await waitFor("the client to see the close", () => closes() >= 1, 10_000);
    await waitFor("onDisconnect's mark", () => marks().includes("c:dee"), 10_000);
    await conn.dispose();
  } finally {
    await client.dispose();
  }
});

test("when the runner's worker dies, onDisconnect cannot run: the client sees the close and reconnects once the runner is back", async () => {
  const client = createClient<any>({ endpoint: url, encoding: "json" } as any) as any;
  try {
    const id = await put("x", "restart");
    const { conn, closes, opens } = await connected(client, id, "eve");
    assert.ok(await action(id, "quit"));
    await waitFor("the client to see the close", () => closes() >= 1, 10_000);
    await waitFor("the client to reconnect", () => opens() >= 2, 20_000);
    assert.is(await conn.visit(), 1);
    assert.not.ok(marks().includes("x:eve"), "no onDisconnect ran for the connection the dead worker held");
    const logs = await runCli(["actors", "logs", id, "--json"], { home, env });
    assert.match(logs.stdout, "onDisconnect not run");
    await conn.dispose();
  } finally {
    await client.dispose();
  }
});

test("the inspector shows connection state as the actor's code changed it, in onConnect and in actions", async () => {
  const client = createClient<any>({ endpoint: url, encoding: "json" } as any) as any;
  try {
    const id = await put("i");
    const { conn } = await connected(client, id, "fay");
    assert.is(await conn.visit(), 2);
    const r = await fetch(`${url}/gateway/${id}/inspector/connections`);
    const listed = ((await r.json()) as any).connections.filter((c: any) => c.type === "websocket");
    assert.is(listed.length, 1);
    assert.equal(listed[0].details.state, { name: "fay", visits: 2, greeted: "by onConnect" });
    await conn.dispose();
  } finally {
    await client.dispose();
  }
});

test.run();

// Issue 37: behaviours checked against RivetKit 2.2.1's own source, driven by its unmodified
// client in json, cbor and bare against actors written as RivetKit's documentation writes them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import { WebSocket } from "ws";
import { waitFor } from "../helpers/wait.js";
import { startDaemon, type TestDaemon } from "./daemon.js";

// RivetKit's own error classes, imported by the actor module as RivetKit's docs do (`rivetkit/errors`).
const RIVETKIT_ERRORS = new URL("../../node_modules/rivetkit/dist/tsup/actor/errors.js", import.meta.url).href;

const ACTORS = `
import { Forbidden } from ${JSON.stringify(RIVETKIT_ERRORS)};
export const counter = {
  state: { count: 0 },
  actions: { get: (c) => c.state.count },
};
export const parity = {
  state: { count: 0 },
  options: { actionTimeout: 300 },
  actions: {
    nothing: () => undefined,
    slowAction: () => new Promise((r) => setTimeout(r, 2000)),
    customError: () => {
      throw Object.assign(new Error("custom thrown"), { public: true, group: "connection", code: "custom_error", metadata: { n: 1 } });
    },
    crash: () => {
      throw new Error("secret detail");
    },
    plainUserError: () => {
      throw Object.assign(new Error("plain thrown"), { public: true, code: "denied" });
    },
  },
};
export const stateless = {
  actions: {
    hi: () => "hi",
    readState: (c) => c.state,
    writeState: (c) => { c.state = { a: 1 }; return true; },
  },
};
export const guards = {
  actions: {
    nextTwice: async (c) => {
      const m = await c.queue.next({ completable: true, timeout: 2000 });
      try {
        await c.queue.next({ timeout: 10 });
      } finally {
        await m.complete("done");
      }
    },
    completeTwice: async (c) => {
      const m = await c.queue.next({ completable: true, timeout: 2000 });
      await m.complete("first");
      await m.complete("second");
    },
    plainNext: async (c) => {
      const m = await c.queue.next({ timeout: 2000 });
      const again = await c.queue.next({ timeout: 10 });
      await m.complete();
      return [m.body, again === undefined];
    },
  },
};
export const sleeper = {
  state: { outcome: null, iterEnded: 0 },
  actions: {
    report: (c) => ({ outcome: c.state.outcome, iterEnded: c.state.iterEnded }),
    goSleep: (c) => {
      c.sleep();
      return true;
    },
  },
  run: async (c) => {
    try {
      await c.queue.next({ names: ["never"] });
      c.state.outcome = "resolved";
    } catch (e) {
      c.state.outcome = e.code + ": " + e.message;
    }
    for await (const m of c.queue.iter({ names: ["never"] })) void m;
    c.state.iterEnded++;
  },
};
export const watcher = {
  state: { count: 0, changes: 0 },
  onStateChange: (c) => {
    c.state.changes++;
  },
  actions: {
    inc: (c) => {
      c.state.count++;
      return true;
    },
    read: (c) => ({ count: c.state.count, changes: c.state.changes }),
  },
};
export const failingRun = {
  state: { slept: 0 },
  actions: { report: (c) => c.state.slept },
  run: async () => {
    await new Promise((r) => setTimeout(r, 20));
    throw new Error("run failed");
  },
  onSleep: (c) => {
    c.state.slept++;
  },
};
const rawSockets = new Set();
export const rawSleeper = {
  state: { naps: 0 },
  actions: {
    nap: (c) => {
      c.sleep();
      return true;
    },
  },
  onWebSocket: (c, websocket) => {
    rawSockets.add(websocket);
    websocket.addEventListener("close", () => rawSockets.delete(websocket));
    websocket.send("hello");
  },
  onSleep: async (c) => {
    await new Promise((r) => setTimeout(r, 10));
    for (const ws of rawSockets) ws.send("goodbye");
  },
};
export const signals = {
  actions: {
    nextAborted: async (c) => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      try {
        await c.queue.next({ names: ["never"], signal: ac.signal });
        return "resolved";
      } catch (e) {
        return e.code + ": " + e.message;
      }
    },
    iterAborted: async (c) => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      let n = 0;
      for await (const m of c.queue.iter({ names: ["jobs"], signal: ac.signal })) n += m.body;
      return "ended " + n;
    },
    alreadyAborted: async (c) => {
      const ac = new AbortController();
      ac.abort();
      const m = await c.queue.next({ names: ["jobs"], signal: ac.signal });
      try {
        await c.queue.next({ names: ["jobs"], signal: ac.signal });
        return [m.body, "resolved"];
      } catch (e) {
        return [m.body, e.code];
      }
    },
  },
};
export const store = {
  actions: {
    shapes: async (c) => {
      await c.kv.put("user:2", "bob");
      await c.kv.put("user:1", "alice");
      await c.kv.put("user:3", new Uint8Array([1, 2, 3]));
      await c.kv.put("other", "x");
      const text = await c.kv.get("user:1");
      const bytes = await c.kv.get("user:3", { type: "binary" });
      const missing = await c.kv.get("nope");
      const listed = await c.kv.list("user:");
      const binaryKeys = (await c.kv.list("user:", { keyType: "binary", limit: 1 })).map(([k]) => k instanceof Uint8Array);
      const reversed = (await c.kv.list("user:", { reverse: true, limit: 2 })).map(([k]) => k);
      const range = await c.kv.listRange("user:1", "user:3");
      await c.kv.putBatch([["a", "1"], ["b", "2"]]);
      const batch = await c.kv.getBatch(["a", "b", "c"]);
      await c.kv.deleteRange("user:1", "user:3");
      const after = (await c.kv.list("")).map(([k]) => k);
      await c.kv.deleteBatch(["a", "b"]);
      return {
        text,
        bytes: [...bytes],
        missing,
        listed: listed.slice(0, 2),
        binaryKeys,
        reversed,
        range,
        batch,
        after,
        left: (await c.kv.list("")).map(([k]) => k),
      };
    },
  },
};
export const redelivery = {
  actions: {
    take: async (c) => (await c.queue.next({ names: ["jobs"], completable: true, timeout: 1000 }))?.body,
    takeAndComplete: async (c) => {
      const m = await c.queue.next({ names: ["jobs"], completable: true, timeout: 1000 });
      await m.complete();
      return m.body;
    },
    takePlain: async (c) => (await c.queue.next({ names: ["jobs"], timeout: 10 }))?.body ?? null,
  },
};
export const slowSocket = {
  state: { handled: 0, closed: 0 },
  options: { sleepTimeout: 100 },
  actions: { report: (c) => ({ handled: c.state.handled, closed: c.state.closed }) },
  onWebSocket: (c, websocket) => {
    websocket.addEventListener("message", async () => {
      c.sleep();
      await new Promise((r) => setTimeout(r, 300));
      c.state.handled++;
      websocket.send("done");
    });
    websocket.addEventListener("close", async () => {
      await new Promise((r) => setTimeout(r, 400));
      c.state.closed++;
    });
  },
};
export const lateClose = {
  state: { messages: [], closed: 0 },
  onConnect: () => new Promise((r) => setTimeout(r, 300)),
  actions: { report: (c) => c.state },
  onWebSocket: (c, websocket) => {
    websocket.addEventListener("message", (e) => {
      c.state.messages = [...c.state.messages, String(e.data)];
    });
    websocket.addEventListener("close", () => {
      c.state.closed++;
    });
  },
};
export const doomed = {
  state: { destroyed: false, started: false },
  onDestroy: (c) => {
    c.state.destroyed = true;
  },
  actions: {
    selfDestruct: (c) => {
      c.destroy();
      return "bye";
    },
    get: (c) => c.state.destroyed,
    slowRead: async (c) => {
      c.state.started = true;
      await c.saveState();
      await new Promise((r) => setTimeout(r, 300));
      return c.state.destroyed;
    },
  },
};
// Row 20 (start case): c.destroy() from onCreate / onWake, as RivetKit's docs write a lifecycle
// hook; what the hooks saw is kept in the module (the actor's own state goes with it).
const doomSeen = [];
export const bornDoomed = {
  state: { log: [] },
  onCreate: (c) => {
    doomSeen.push(["create", c.actorId]);
    c.state.log.push("create");
    c.destroy();
    c.state.log.push("after");
  },
  onWake: (c) => {
    c.state.log.push("wake");
  },
  onDestroy: (c) => {
    doomSeen.push(["destroy", c.actorId, [...c.state.log]]);
  },
  actions: { get: (c) => c.state.log },
};
export const wakeDoomed = {
  state: { log: [], armed: false },
  onWake: (c) => {
    c.state.log.push("wake");
    if (c.state.armed) {
      c.destroy();
      c.state.log.push("after");
    }
  },
  onDestroy: (c) => {
    doomSeen.push(["destroy", c.actorId, [...c.state.log]]);
  },
  actions: {
    get: (c) => c.state.log,
    arm: (c) => {
      c.state.armed = true;
      c.sleep();
      return true;
    },
  },
};
export const doomProbe = { actions: { seen: () => doomSeen.splice(0) } };
const method = (c) => (c.request ? c.request.method : "none");
export const doorman = {
  state: { log: [] },
  onBeforeConnect: (c, params) => {
    c.state.log.push("before " + (params?.name ?? "-") + " " + method(c));
    if (params?.name === "mallory") throw new Forbidden();
  },
  createConnState: (c, params) => ({ name: params?.name ?? null, how: method(c) }),
  onConnect: (c, conn) => {
    c.state.log.push("connect " + conn.state.name + " " + (c.conn === conn));
  },
  onDisconnect: (c, conn) => {
    c.state.log.push("disconnect " + conn.state.name + " " + (c.conn === conn));
  },
  actions: {
    whoami: (c) => c.conn?.state ?? null,
  },
  onRequest: (c, request) => new Response(c.conn.state.name + " " + (c.request === request)),
  onWebSocket: (c, websocket) => {
    websocket.send("hi " + c.conn.state.name + " " + new URL(c.request.url).pathname);
  },
};
export const guarded = {
  state: { requests: 0 },
  onBeforeConnect: (c, params) => {
    if (params?.name === "mallory") throw Object.assign(new Error("not welcome here"), { public: true, code: "forbidden" });
  },
  actions: { requests: (c) => c.state.requests },
  onRequest: (c) => {
    c.state.requests++;
    return new Response("ok");
  },
};
`;

let d: TestDaemon;
test.before(async () => {
  d = await startDaemon({ actors: ACTORS });
});

async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  assert.unreachable("should throw");
}

for (const encoding of ["json", "cbor", "bare"] as const) {
  let client: any;
  const name = (behaviour: string) => `RivetKit parity over ${encoding}: ${behaviour}`;
  test.before(() => {
    client = createClient<any>({ endpoint: d.url, encoding } as any) as any;
  });
  test.after(async () => {
    await client?.dispose?.();
  });

  test(name("row 1: an action returning nothing answers over a connection (no hang)"), async () => {
    const conn = client.parity.getOrCreate([`nothing-${encoding}`]).connect();
    try {
      const out = await Promise.race([conn.nothing(), new Promise((_, reject) => setTimeout(() => reject(new Error("hung")), 3000))]);
      // As from RivetKit's own server: JSON drops the undefined `output`, cbor/bare carry undefined.
      assert.is(out, undefined);
    } finally {
      await conn.dispose();
    }
  });

  test(name("row 5: a timed-out action says RivetKit's 'Action timed out' with action.timed_out"), async () => {
    const e = await rejection(client.parity.getOrCreate([`timeout-${encoding}`]).slowAction());
    assert.is(`${e.group}.${e.code}`, "action.timed_out");
    assert.match(String(e.message), /^Action timed out/);
  });

  test(name("row 6: a public error keeps the thrower's group and code"), async () => {
    const h = client.parity.getOrCreate([`group-${encoding}`]);
    const e = await rejection(h.customError());
    assert.is(`${e.group}.${e.code}`, "connection.custom_error");
    assert.is(e.message, "custom thrown");
    assert.equal(e.metadata, { n: 1 });
    const plain = await rejection(h.plainUserError());
    assert.is(`${plain.group}.${plain.code}`, "user.denied");
    const conn = h.connect();
    try {
      const overConn = await rejection(conn.customError());
      assert.is(`${overConn.group}.${overConn.code}`, "connection.custom_error");
    } finally {
      await conn.dispose();
    }
  });

  test(name("row 16: next() with a completable message outstanding, and a second complete(), throw RivetKit's queue errors"), async () => {
    const h = client.guards.getOrCreate([`guards-${encoding}`]);
    await h.send("jobs", 1);
    const e1 = await rejection(h.nextTwice());
    assert.is(`${e1.group}.${e1.code}`, "queue.previous_message_not_completed");
    await h.send("jobs", 2);
    const e2 = await rejection(h.completeTwice());
    assert.is(`${e2.group}.${e2.code}`, "queue.already_completed");
    // A message received without `completable` does not hold the next receive back.
    await h.send("jobs", 3);
    assert.equal(await h.plainNext(), [3, true]);
  });

  test(name("row 13: queue.next() waiting when the actor stops rejects with actor.aborted; iter() ends"), async () => {
    const h = client.sleeper.getOrCreate([`sleeper-${encoding}`]);
    assert.equal(await h.report(), { outcome: null, iterEnded: 0 });
    await h.goSleep();
    // The next call wakes it again; the first run's outcome was saved at sleep.
    const r = await waitFor("the run loop's outcome", async () => {
      const x = await h.report();
      return x.outcome !== null ? x : null;
    });
    assert.is(r.outcome, "actor.aborted: Actor aborted.");
  });

  test(name("row 9: a write inside onStateChange is not a change for the next (read-only) action"), async () => {
    const h = client.watcher.getOrCreate([`watcher-${encoding}`]);
    await h.inc();
    const first = await h.read();
    assert.equal(await h.read(), first);
    assert.equal(await h.read(), { count: 1, changes: 1 });
  });

  test(name("row 7 (kept on purpose): an internal error is the spec's internal.error with a generic message"), async () => {
    const e = await rejection(client.parity.getOrCreate([`internal-${encoding}`]).crash());
    assert.is(`${e.group}.${e.code}`, "internal.error");
    assert.not.match(String(e.message), /secret/);
  });

  test(name("row 17: a run() that throws stops the actor with onSleep"), async () => {
    const h = client.failingRun.getOrCreate([`failing-${encoding}`]);
    await h.report();
    await waitFor("onSleep after run() threw", async () => (await h.report()) >= 1, 5000);
  });

  test(name("rows 2 and 4: a stateless action call runs the connection hooks around it, with c.request and c.conn"), async () => {
    const alice = client.doorman.getOrCreate([`stateless-${encoding}`], { params: { name: "alice" } });
    const id = await alice.resolve();
    assert.equal(await alice.whoami(), { name: "alice", how: "POST" });
    assert.equal(await doormanLog(id), ["before alice POST", "connect alice true", "disconnect alice true"]);
    const e = await rejection(client.doorman.getOrCreate([`stateless-${encoding}`], { params: { name: "mallory" } }).whoami());
    assert.is(`${e.group}.${e.code}`, "auth.forbidden");
    // Over a connection: the upgrade is the request; onDisconnect when it closes.
    const conn = client.doorman.getOrCreate([`stateless-${encoding}`], { params: { name: "bob" } }).connect();
    try {
      assert.equal(await conn.whoami(), { name: "bob", how: "GET" });
    } finally {
      await conn.dispose();
    }
    await waitFor("onDisconnect of the connection", async () => (await doormanLog(id)).length === 7, 5000);
    assert.equal((await doormanLog(id)).slice(3), ["before mallory POST", "before bob GET", "connect bob true", "disconnect bob true"]);
  });

  test(name("row 10: c.state on an actor without state throws actor.state_not_enabled"), async () => {
    const h = client.stateless.getOrCreate([`nostate-${encoding}`]);
    assert.is(await h.hi(), "hi");
    for (const e of [await rejection(h.readState()), await rejection(h.writeState())]) {
      assert.is(`${e.group}.${e.code}`, "actor.state_not_enabled");
      assert.match(String(e.message), /^State not enabled/);
    }
  });
}

test("row 11: c.kv is RivetKit's: text for text, [key, value] pairs, listRange, deleteRange and batches", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    assert.equal(await client.store.getOrCreate(["kv"]).shapes(), {
      text: "alice",
      bytes: [1, 2, 3],
      missing: null,
      listed: [
        ["user:1", "alice"],
        ["user:2", "bob"],
      ],
      binaryKeys: [true],
      reversed: ["user:3", "user:2"],
      range: [
        ["user:1", "alice"],
        ["user:2", "bob"],
      ],
      batch: ["1", "2", null],
      after: ["a", "b", "other", "user:3"],
      left: ["other", "user:3"],
    });
  } finally {
    await client.dispose();
  }
});

test("row 15: a completable message received and never completed is handed out again to a later call's next()", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const h = client.redelivery.getOrCreate(["redelivery"]);
    await h.send("jobs", 1);
    assert.is(await h.take(), 1);
    assert.is(await h.take(), 1, "not completed: delivered again (each call's queue guard is its own, as RivetKit's)");
    assert.is(await h.takeAndComplete(), 1);
    assert.is(await h.takePlain(), null, "completed: gone");
    // A message received without `completable` is handed out once (RivetKit removes it at receive).
    await h.send("jobs", 2);
    assert.is(await h.takePlain(), 2);
    assert.is(await h.takePlain(), null);
  } finally {
    await client.dispose();
  }
});

test("row 19: an async raw-WebSocket message or close handler still running keeps the actor awake", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const h = client.slowSocket.getOrCreate(["slow"]);
    const id = await h.resolve();
    const ws = new WebSocket(`${d.url.replace("http", "ws")}/gateway/${id}/websocket/`);
    const got: string[] = [];
    let closed = false;
    ws.on("message", (m) => got.push(m.toString()));
    ws.on("close", () => {
      closed = true;
    });
    await new Promise((resolve) => ws.once("open", resolve));
    // The handler asks for sleep, then works on: the sleep waits for it, so its send arrives and its change is kept.
    ws.send("go");
    await waitFor("the socket to close at sleep", () => closed, 5000);
    assert.equal(got, ["done"]);
    assert.equal(await h.report(), { handled: 1, closed: 0 });
    // The close handler runs on past the idle timeout (100 ms): the actor sleeps after it, not during it.
    const again = new WebSocket(`${d.url.replace("http", "ws")}/gateway/${id}/websocket/`);
    await new Promise((resolve) => again.once("open", resolve));
    again.close();
    await waitFor("the close handler's change", async () => (await h.report()).closed === 1, 5000);
  } finally {
    await client.dispose();
  }
});

test("row 19: a raw WebSocket the client closes while the connection hooks still run: onWebSocket runs, hears what was sent, then the close", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const h = client.lateClose.getOrCreate(["late"]);
    const id = await h.resolve();
    const ws = new WebSocket(`${d.url.replace("http", "ws")}/gateway/${id}/websocket/`);
    await new Promise((resolve) => ws.once("open", resolve));
    // onConnect takes 300 ms: the message and the close both arrive before onWebSocket runs.
    ws.send("first");
    ws.close();
    await waitFor("the close handler's change", async () => (await h.report()).closed === 1, 5000);
    assert.equal(await h.report(), { messages: ["first"], closed: 1 });
  } finally {
    await client.dispose();
  }
});

test("row 20: after the answer of an action that called c.destroy() the actor is gone; a call still running sees onDestroy's change", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    for (let i = 0; i < 10; i++) {
      const h = client.doomed.getOrCreate([`doomed-${i}`]);
      const id = await h.resolve();
      const call = (name: string) =>
        fetch(`${d.url}/gateway/${id}/action/${name}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[]}' });
      assert.is(((await (await call("selfDestruct")).json()) as any).output, "bye");
      const next = (await (await call("get")).json()) as any;
      assert.is(`${next.group}.${next.code}`, "actor.not_found", `round ${i}: ${JSON.stringify(next)}`);
    }
    const h = client.doomed.getOrCreate(["doomed-slow"]);
    const id = await h.resolve();
    const slow = h.slowRead();
    await waitFor("the slow call to start", async () => {
      const r = (await (await fetch(`${d.url}/gateway/${id}/inspector/state`)).json()) as any;
      return r.state?.started === true;
    });
    assert.is(await h.selfDestruct(), "bye");
    assert.is(await slow, true);
  } finally {
    await client.dispose();
  }
});

// RivetKit 2.2.1 (file-system driver, its own client): c.destroy() during start lets the start
// finish (onWake runs even after a c.destroy() in onCreate), then destroys the actor; onDestroy
// sees every change the hooks made, those after c.destroy() too. The calls waiting for that start
// never reach the actor: they get actor.not_found, and a getOrCreate handle's call retries once
// by creating a fresh actor (which destroys itself again when onCreate does).
test("row 20: c.destroy() from onCreate or onWake: start finishes, onDestroy sees the hooks' changes, waiting calls get actor.not_found", async () => {
  for (const encoding of ["json", "cbor", "bare"] as const) {
    const client = createClient<any>({ endpoint: d.url, encoding } as any) as any;
    try {
      const probe = client.doomProbe.getOrCreate(["probe"]);
      await probe.seen();
      // onCreate: the first call fails after two creations (the client's retry), each destroyed.
      const born = client.bornDoomed.getOrCreate([`born-${encoding}`]);
      const e = await rejection(born.get());
      assert.is(`${e.group}.${e.code}`, "actor.not_found", encoding);
      const seen = (await probe.seen()) as any[];
      const created = seen.filter((s) => s[0] === "create").map((s) => s[1]);
      assert.is(created.length, 2, JSON.stringify(seen));
      assert.equal(
        seen.filter((s) => s[0] === "destroy"),
        created.map((id) => ["destroy", id, ["create", "after", "wake"]]),
      );
      assert.is(`${(await rejection(client.bornDoomed.get([`born-${encoding}`]).resolve())).code}`, "not_found");
      // onWake: the call that woke it gets actor.not_found; onDestroy ran first and saw the hook's changes.
      const h = client.wakeDoomed.getOrCreate([`wake-${encoding}`]);
      assert.equal(await h.get(), ["wake"]);
      const id = await h.resolve();
      assert.is(await h.arm(), true);
      await waitFor("the actor to sleep", async () => (await actorRecord(id)).sleep_ts !== null, 5000);
      const woken = await rejection(client.wakeDoomed.getForId(id).get());
      assert.is(`${woken.group}.${woken.code}`, "actor.not_found", encoding);
      assert.equal(await probe.seen(), [["destroy", id, ["wake", "wake", "after"]]]);
      assert.is(await actorRecord(id), undefined);
      // A getOrCreate handle's next call makes a fresh actor for the key.
      assert.equal(await h.get(), ["wake"]);
    } finally {
      await client.dispose();
    }
  }
});

async function actorRecord(id: string): Promise<any> {
  return ((await (await fetch(`${d.url}/actors?actor_ids=${id}`)).json()) as any).actors[0];
}

test("row 14: the signal of queue.next() and iter() is honoured (actor.aborted; iter ends), a waiting message still comes first", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const h = client.signals.getOrCreate(["signals"]);
    assert.is(await h.nextAborted(), "actor.aborted: Actor aborted.");
    await h.send("jobs", 2);
    await h.send("jobs", 3);
    assert.is(await h.iterAborted(), "ended 5");
    await h.send("jobs", 7);
    assert.equal(await h.alreadyAborted(), [7, "actor.aborted"]);
  } finally {
    await client.dispose();
  }
});

async function doormanLog(id: string): Promise<string[]> {
  const r = (await (await fetch(`${d.url}/gateway/${id}/inspector/state`)).json()) as { state: { log: string[] } };
  return r.state.log;
}

test("row 3: a raw request or raw WebSocket refused by onBeforeConnect's Forbidden is a 403 / a close with auth.forbidden", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const mallory = client.doorman.getOrCreate(["refuse-raw"], { params: { name: "mallory" } });
    const id = await mallory.resolve();
    const refused = await mallory.fetch("/x");
    assert.is(refused.status, 403);
    const body = (await refused.json()) as any;
    assert.is(`${body.group}.${body.code}`, "auth.forbidden");
    assert.is(body.message, "Forbidden");
    const ws = await mallory.webSocket("/sock");
    const got: string[] = [];
    ws.addEventListener("message", (e: any) => got.push(String(e.data)));
    const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
      ws.addEventListener("close", (e: any) => resolve({ code: e.code, reason: e.reason })),
    );
    assert.equal(closed, { code: 1011, reason: "auth.forbidden" });
    assert.equal(got, [], "onWebSocket did not run");
    assert.equal(await doormanLog(id), ["before mallory GET", "before mallory GET"]);
  } finally {
    await client.dispose();
  }
});

test("rows 2 and 4: raw requests and raw WebSockets are connections: hooks around them, c.request and c.conn", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const alice = client.doorman.getOrCreate(["raw-conn"], { params: { name: "alice" } });
    const id = await alice.resolve();
    assert.is(await (await alice.fetch("/x")).text(), "alice true");
    assert.equal(await doormanLog(id), ["before alice GET", "connect alice true", "disconnect alice true"]);
    const ws = await alice.webSocket("/sock");
    const got: string[] = [];
    ws.addEventListener("message", (e: any) => got.push(String(e.data)));
    await waitFor("the greeting", () => got.length > 0, 5000);
    assert.equal(got, ["hi alice /sock"]);
    ws.close();
    await waitFor("onDisconnect of the raw socket", async () => (await doormanLog(id)).length === 6, 5000);
    assert.equal((await doormanLog(id)).slice(3), ["before alice GET", "connect alice true", "disconnect alice true"]);
  } finally {
    await client.dispose();
  }
});

test("row 12: GET inspector/state answers isStateEnabled, with no state when it is false", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const withState = await client.parity.getOrCreate(["inspect"]).resolve();
    const without = await client.stateless.getOrCreate(["inspect"]).resolve();
    const a = await (await fetch(`${d.url}/gateway/${withState}/inspector/state`)).json();
    assert.equal(a, { state: { count: 0 }, isStateEnabled: true });
    const b = await (await fetch(`${d.url}/gateway/${without}/inspector/state`)).json();
    assert.equal(b, { isStateEnabled: false });
  } finally {
    await client.dispose();
  }
});

test("row 3 (raw HTTP): a plain public error from onBeforeConnect refuses the request with 400, as RivetKit's UserError", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const h = client.guarded.getOrCreate(["raw-http"]);
    const id = await h.resolve();
    const ok = await fetch(`${d.url}/gateway/${id}/request/x`, { headers: { "x-rivet-conn-params": JSON.stringify({ name: "alice" }) } });
    assert.is(await ok.text(), "ok");
    const refused = await fetch(`${d.url}/gateway/${id}/request/x`, { headers: { "x-rivet-conn-params": JSON.stringify({ name: "mallory" }) } });
    assert.is(refused.status, 400);
    const body = (await refused.json()) as any;
    assert.is(`${body.group}.${body.code}`, "user.forbidden");
    assert.is(await h.requests(), 1);
  } finally {
    await client.dispose();
  }
});

test("row 18: what onSleep sends on a raw WebSocket arrives before the socket closes", async () => {
  const client = createClient<any>({ endpoint: d.url, encoding: "json" } as any) as any;
  try {
    const h = client.rawSleeper.getOrCreate(["raw"]);
    const id = await h.resolve();
    const ws = new WebSocket(`${d.url.replace("http", "ws")}/gateway/${id}/websocket/`);
    const got: string[] = [];
    let closed = false;
    ws.on("message", (m) => got.push(m.toString()));
    ws.on("close", () => {
      closed = true;
    });
    await waitFor("the hello", () => got.includes("hello"), 5000);
    await h.nap();
    await waitFor("the socket to close", () => closed, 5000);
    assert.equal(got, ["hello", "goodbye"]);
  } finally {
    await client.dispose();
  }
});

test.after(async () => {
  await d?.dispose();
});

test.run();

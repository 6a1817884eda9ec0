import { existsSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ActorContext, ActorDefinition } from "../../daemon/actors/types.js";
import { req, tempRuntime, waitFor } from "./helpers.js";
import { actorFilePath, actorTraceFile } from "../../daemon/actors/storage/actor-storage.js";

const hooks: string[] = [];
let runFails = false;

const lifecycle: ActorDefinition = {
  state: { n: 0 },
  onCreate: () => void hooks.push("create"),
  onWake: () => void hooks.push("wake"),
  onSleep: () => void hooks.push("sleep"),
  onDestroy: () => void hooks.push("destroy"),
  run: async (c) => {
    if (runFails) throw new Error("run blew up");
    await new Promise((r) => c.abortSignal.addEventListener("abort", r));
  },
  actions: { bump: (c) => ++c.state.n, get: (c) => c.state.n },
  options: { sleepTimeout: 5_000 },
};

test("hooks run in order: create, wake, sleep, wake, destroy", async () => {
  hooks.length = 0;
  runFails = false;
  const h = await tempRuntime({ lifecycle });
  try {
    const a = await h.rt.create(req("lifecycle", "h"));
    await h.rt.sleep(a.actor_id);
    await h.rt.action(a.actor_id, "bump", []);
    await h.rt.destroy(a.actor_id);
    assert.equal(hooks, ["create", "wake", "sleep", "wake", "destroy"]);
  } finally {
    await h.dispose();
  }
});

test("restart policy restarts a crashed actor with growing backoff and the crash-loop breaker puts it to sleep with an error", async () => {
  runFails = true;
  const starts: number[] = [];
  const h = await tempRuntime({ lifecycle }, { crash: { backoffBaseMs: 40, backoffMaxMs: 5000 } });
  const stop = h.rt.onChange((e) => {
    if (e.type === "record" && e.record!.connectable_ts !== null && e.record!.sleep_ts === null) starts.push(Date.now());
  });
  try {
    const a = await h.rt.create(req("lifecycle", "r", { crash_policy: "restart" }));
    const rec = await waitFor(
      "crash-loop breaker",
      () => {
        const r = h.rt.get(a.actor_id)!;
        return r.error && r.sleep_ts !== null ? r : null;
      },
      5000,
    );
    assert.is((rec.error as { crashes: number }).crashes, 5);
    stop();
    // Backoff doubles: 40, 80, 160, 320 ms between the five starts.
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    assert.is(starts.length, 5, `starts: ${starts.length}`);
    assert.ok(gaps[3]! >= 300 && gaps[3]! > gaps[0]!, `gaps ${gaps.join(", ")}`);
    assert.match((rec.error as { message: string }).message, /run blew up/);
    assert.is(rec.connectable_ts, null);
    // It wakes on the next request, and a good start clears the error.
    runFails = false;
    assert.is(await h.rt.action(a.actor_id, "bump", []), 1);
    assert.is(h.rt.get(a.actor_id)!.error, null);
  } finally {
    runFails = false;
    await h.dispose();
  }
});

test("restart policy keeps the acknowledged state across a crash", async () => {
  runFails = false;
  let crashNow: (() => void) | null = null;
  const flaky: ActorDefinition = {
    state: { n: 0 },
    run: (c) =>
      new Promise((_, reject) => {
        crashNow = () => reject(new Error("crash"));
        c.abortSignal.addEventListener("abort", () => reject(new Error("aborted")));
      }),
    actions: { bump: (c) => ++c.state.n },
  };
  const h = await tempRuntime({ flaky });
  try {
    const a = await h.rt.create(req("flaky", "k", { crash_policy: "restart" }));
    await h.rt.action(a.actor_id, "bump", []);
    await h.rt.action(a.actor_id, "bump", []);
    const first = crashNow!;
    first();
    await waitFor("restart", () => crashNow !== first && h.rt.get(a.actor_id)!.connectable_ts !== null, 3000);
    assert.is(await h.rt.action(a.actor_id, "bump", []), 3);
  } finally {
    await h.dispose();
  }
});

test("sleep policy marks a crashed actor sleeping with an error; it wakes on the next call", async () => {
  runFails = true;
  const h = await tempRuntime({ lifecycle });
  try {
    const a = await h.rt.create(req("lifecycle", "s", { crash_policy: "sleep" }));
    await waitFor("sleep after crash", () => h.rt.get(a.actor_id)!.sleep_ts !== null, 3000);
    assert.ok(h.rt.get(a.actor_id)!.error);
    runFails = false;
    assert.is(await h.rt.action(a.actor_id, "get", []), 0);
  } finally {
    runFails = false;
    await h.dispose();
  }
});

test("destroy policy destroys a crashed actor", async () => {
  runFails = true;
  const h = await tempRuntime({ lifecycle });
  try {
    const a = await h.rt.create(req("lifecycle", "d", { crash_policy: "destroy" }));
    await waitFor("destroy after crash", () => h.rt.get(a.actor_id)!.destroy_ts !== null, 3000);
    assert.equal(h.rt.list({ namespace: "default", name: "lifecycle" }), []);
  } finally {
    runFails = false;
    await h.dispose();
  }
});

test("an actor that was running is woken again after a runtime restart", async () => {
  runFails = false;
  hooks.length = 0;
  const h = await tempRuntime({ lifecycle });
  try {
    const a = await h.rt.create(req("lifecycle", "boot"));
    await h.restart();
    await waitFor("wake on boot", () => hooks.filter((x) => x === "wake").length === 2, 3000);
    assert.ok(h.rt.get(a.actor_id)!.connectable_ts);
  } finally {
    await h.dispose();
  }
});

test("an actor's traces survive its sleep and a graceful runtime restart, and go with its destroy", async () => {
  runFails = false;
  const h = await tempRuntime({ lifecycle });
  try {
    const a = await h.rt.create(req("lifecycle", "traced"));
    await h.rt.action(a.actor_id, "bump", []);
    const names = async () => {
      const { otlp } = (await h.rt.inspector(a.actor_id).traces({ startMs: 0, endMs: Date.now(), limit: 1000 })) as any;
      return (otlp.resourceSpans[0].scopeSpans[0].spans as Array<{ name: string; spanId: string }>).map((s) => s.name);
    };
    const before = await names();
    assert.ok(before.includes("action bump"), before.join(", "));
    await h.restart();
    const after = await names();
    for (const n of before) assert.ok(after.includes(n), `${n} kept after the restart: ${after.join(", ")}`);
    assert.ok(after.includes("hook onSleep"), "the sleep at the stop is recorded too");
    await h.rt.destroy(a.actor_id);
    assert.not.ok(existsSync(actorTraceFile(h.dir, a.actor_id)), "the saved traces are removed with the actor");
  } finally {
    await h.dispose();
  }
});

test("schedule.after runs the action later and survives a runtime restart", async () => {
  const ticks: number[] = [];
  const marks: string[] = [];
  const sched: ActorDefinition = {
    state: { fired: 0 },
    actions: {
      later: async (c, ms: number) => {
        await c.schedule.after(ms, "fire", 7);
      },
      fire: (c, v: number) => {
        c.state.fired += v;
        ticks.push(v);
      },
      get: (c) => c.state.fired,
      markLater: async (c, ms: number) => {
        await c.schedule.after(ms, "mark");
      },
      mark: () => void marks.push("mark"),
    },
    options: { sleepTimeout: 50 },
  };
  const h = await tempRuntime({ sched });
  try {
    const a = await h.rt.create(req("sched", "a"));
    await h.rt.action(a.actor_id, "later", [50]);
    await waitFor("scheduled call", () => ticks.length === 1, 3000);
    const b = await h.rt.create(req("sched", "b"));
    await h.rt.action(b.actor_id, "later", [400]);
    await h.restart();
    await waitFor("scheduled call after restart", () => ticks.length === 2, 3000);
    // A later call on the same actor's schedule has run, so a duplicate of the first one would have too.
    await h.rt.action(b.actor_id, "markLater", [50]);
    await waitFor("a later scheduled call on the same actor", () => marks.length === 1, 3000);
    assert.is(await h.rt.action(b.actor_id, "get", []), 7);
    assert.is(ticks.length, 2);
  } finally {
    await h.dispose();
  }
});

test("onRequest gets a standard Request and its Response is returned; no handler is an error", async () => {
  const web: ActorDefinition = {
    state: { hits: 0 },
    onRequest: async (c, request) => {
      c.state.hits++;
      return new Response(JSON.stringify({ path: new URL(request.url).pathname, body: await request.text(), hits: c.state.hits }), { status: 201 });
    },
    actions: {},
  };
  const plain: ActorDefinition = { actions: {} };
  const h = await tempRuntime({ web, plain });
  try {
    const a = await h.rt.create(req("web", "w"));
    const res = await h.rt.request(a.actor_id, new Request("http://actor/hello?x=1", { method: "POST", body: "hi" }));
    assert.is(res.status, 201);
    assert.equal(await res.json(), { path: "/hello", body: "hi", hits: 1 });
    const p = await h.rt.create(req("plain", "p"));
    const e = await h.rt.request(p.actor_id, new Request("http://actor/")).catch((x) => x);
    assert.is(e.code, "handler.request_not_defined");
  } finally {
    await h.dispose();
  }
});

test("user KV puts, gets, lists by prefix and is readable while the actor sleeps", async () => {
  const kvActor: ActorDefinition = {
    actions: {
      fill: async (c) => {
        for (let i = 0; i < 30; i++) await c.kv.put(`item:${String(i).padStart(2, "0")}`, `v${i}`);
        await c.kv.putJson("other", { a: 1 });
        await c.kv.delete("item:05");
      },
      list: async (c) => (await c.kv.list("item:")).map((e) => Buffer.from(e.key).toString()),
      json: (c) => c.kv.getJson("other"),
    },
  };
  const h = await tempRuntime({ kvActor });
  try {
    const a = await h.rt.create(req("kvActor", "k"));
    await h.rt.action(a.actor_id, "fill", []);
    const keys = (await h.rt.action(a.actor_id, "list", [])) as string[];
    assert.is(keys.length, 29);
    assert.is(keys[0], "item:00");
    assert.is(keys[28], "item:29");
    assert.not.ok(keys.includes("item:05"));
    assert.equal(await h.rt.action(a.actor_id, "json", []), { a: 1 });
    await h.rt.sleep(a.actor_id);
    assert.is(Buffer.from((await h.rt.kvGet(a.actor_id, Buffer.from("item:07")))!).toString(), "v7");
    assert.is(await h.rt.kvGet(a.actor_id, Buffer.from("missing")), null);
  } finally {
    await h.dispose();
  }
});

test("many concurrent actions on one actor are all persisted before they answer", async () => {
  const counter: ActorDefinition = { state: { n: 0 }, actions: { inc: (c) => ++c.state.n } };
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "c"));
    await Promise.all(Array.from({ length: 500 }, () => h.rt.action(a.actor_id, "inc", [])));
    const { readFileSync } = await import("node:fs");
    const onDisk = JSON.parse(readFileSync(actorFilePath(h.dir, a.actor_id), "utf8"));
    assert.equal(JSON.parse(onDisk.data.state), { n: 500 });
  } finally {
    await h.dispose();
  }
});

test("actors that ask to sleep together are put to sleep at most 64 at a time, and all of them sleep", async () => {
  let started = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const napper: ActorDefinition = {
    state: {},
    onSleep: () => {
      started++;
      return gate;
    },
    actions: { nap: (c) => c.sleep() },
  };
  const h = await tempRuntime({ napper });
  try {
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push((await h.rt.create(req("napper", `n${i}`))).actor_id);
    await Promise.all(ids.map((id) => h.rt.action(id, "nap", [])));
    await waitFor("64 sleeps started", () => started === 64);
    // A few more turns of the event loop: no further sleep starts while those 64 are held.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.is(started, 64);
    release();
    await waitFor("every actor asleep", () => ids.every((id) => h.rt.get(id)!.sleep_ts !== null), 10_000);
    assert.is(started, 200);
  } finally {
    release();
    await h.dispose();
  }
});

test("an actor's abort signal asked for only after it fell asleep is already aborted", async () => {
  let kept: ActorContext | undefined;
  const keeper: ActorDefinition = { state: {}, actions: { keep: (c) => void (kept = c) } };
  const h = await tempRuntime({ keeper });
  try {
    const a = await h.rt.create(req("keeper", "k"));
    await h.rt.action(a.actor_id, "keep", []);
    await h.rt.sleep(a.actor_id);
    assert.ok(kept!.abortSignal.aborted);
    assert.is((kept!.abortSignal.reason as Error).name, "ActorStopped");
  } finally {
    await h.dispose();
  }
});

test.run();

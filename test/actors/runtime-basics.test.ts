import { mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { AgentError } from "../../shared/errors.js";
import type { ActorDefinition } from "../../daemon/actors/types.js";
import { req, tempRuntime, waitFor } from "./helpers.js";
import { actorFilePath } from "../../daemon/actors/storage/actor-storage.js";
import { indexDir } from "../../daemon/actors/storage/layout.js";

const counter: ActorDefinition = {
  createState: (_c, input: { start?: number } | undefined) => ({ count: input?.start ?? 0 }),
  actions: {
    increment: (c, by = 1) => (c.state.count += by),
    get: (c) => c.state.count,
    key: (c) => c.key,
    fail: () => {
      const e = new Error("nope") as Error & { public: boolean; code: string; metadata: unknown };
      e.public = true;
      e.code = "bad_thing";
      e.metadata = { why: 1 };
      throw e;
    },
    boom: () => {
      throw new Error("secret detail");
    },
    slow: () => new Promise((r) => setTimeout(r, 500)),
  },
  options: { sleepTimeout: 100, actionTimeout: 100 },
};

async function code(p: Promise<unknown>): Promise<AgentError> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, AgentError);
    return e as AgentError;
  }
  throw new Error("expected a rejection");
}

test("an action changes state and the state survives a runtime restart", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "a", { input: { start: 5 } }));
    assert.is(await h.rt.action(a.actor_id, "increment", [2]), 7);
    await h.restart();
    assert.is(await h.rt.action(a.actor_id, "get", []), 7);
  } finally {
    await h.dispose();
  }
});

test("an action whose state write fails is not acknowledged, and its change is taken back", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "w"));
    const file = actorFilePath(h.dir, a.actor_id);
    // A directory where the temp file goes makes the next write fail (root ignores chmod).
    mkdirSync(`${file}.tmp`);
    const failed = await h.rt.action(a.actor_id, "increment", [3]).then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(failed, "the action answered although its state never reached the disk");
    assert.is((failed as { code?: string }).code, "storage.write_failed");
    rmdirSync(`${file}.tmp`);
    // A call reported as failed changed nothing: no later write carries its count (issue 16).
    assert.is(await h.rt.action(a.actor_id, "get", []), 0);
    assert.is(await h.rt.action(a.actor_id, "increment", [1]), 1);
    const onDisk = JSON.parse(readFileSync(file, "utf8")) as { data: { state: string } };
    assert.match(onDisk.data.state, /"count":1/);
  } finally {
    await h.dispose();
  }
});

test("fifty concurrent getOrCreate calls of one key create one actor", async () => {
  const h = await tempRuntime({ counter });
  try {
    const results = await Promise.all(Array.from({ length: 50 }, () => h.rt.getOrCreate({ ...req("counter", "same"), key: "same" })));
    assert.is(new Set(results.map((r) => r.actor.actor_id)).size, 1);
    assert.is(results.filter((r) => r.created).length, 1);
    assert.is(h.rt.list({ namespace: "default", name: "counter" }).length, 1);
  } finally {
    await h.dispose();
  }
});

test("create with a live duplicate key fails with the existing actor id", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "k"));
    const e = await code(h.rt.create(req("counter", "k")));
    assert.is(e.code, "actor.duplicate_key");
    assert.is(e.metadata?.existing_actor_id, a.actor_id);
  } finally {
    await h.dispose();
  }
});

test("create validates the name, key size, input size and crash policy", async () => {
  const h = await tempRuntime({ counter });
  try {
    assert.is((await code(h.rt.create(req("nope", "k")))).code, "actor.name_not_found");
    assert.is((await code(h.rt.create(req("counter", "x".repeat(129))))).code, "actor.key_too_large");
    assert.is((await code(h.rt.create(req("counter", "i", { input: "x".repeat(4 * 1024 * 1024 + 1) })))).code, "actor.input_too_large");
    assert.is((await code(h.rt.create(req("counter", "p", { crash_policy: "explode" })))).code, "api.bad_request");
    const ok = await h.rt.create(req("counter", "y".repeat(128)));
    assert.ok(ok.actor_id);
  } finally {
    await h.dispose();
  }
});

test("the context key is the parsed list of key parts", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "org/a\\/b/\\0"));
    assert.equal(await h.rt.action(a.actor_id, "key", []), ["org", "a/b", ""]);
  } finally {
    await h.dispose();
  }
});

test("a public error thrown by an action reaches the caller as a user error with its code, message and metadata", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "e"));
    const user = await code(h.rt.action(a.actor_id, "fail", []));
    assert.is(user.code, "user.bad_thing");
    assert.is(user.message, "nope");
    assert.equal(user.metadata, { why: 1 });
  } finally {
    await h.dispose();
  }
});

test("any other error thrown by an action reaches the caller as internal.error without its detail", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "e"));
    const internal = await code(h.rt.action(a.actor_id, "boom", []));
    assert.is(internal.code, "internal.error");
    assert.not.match(internal.message, /secret/);
  } finally {
    await h.dispose();
  }
});

test("an unknown action name, an inherited property name included, is action.not_found", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "e"));
    assert.is((await code(h.rt.action(a.actor_id, "nothing", []))).code, "action.not_found");
    assert.is((await code(h.rt.action(a.actor_id, "constructor", []))).code, "action.not_found");
  } finally {
    await h.dispose();
  }
});

test("an action on an unknown actor id is actor.not_found", async () => {
  const h = await tempRuntime({ counter });
  try {
    assert.is((await code(h.rt.action("nosuchactor", "get", []))).code, "actor.not_found");
  } finally {
    await h.dispose();
  }
});

test("an action that runs past actionTimeout is action.timed_out", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "e"));
    assert.is((await code(h.rt.action(a.actor_id, "slow", []))).code, "action.timed_out");
  } finally {
    await h.dispose();
  }
});

test("an idle actor sleeps, sets sleep_ts, and wakes on the next call with its state", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "s"));
    await h.rt.action(a.actor_id, "increment", [3]);
    await waitFor("sleep", () => h.rt.get(a.actor_id)!.sleep_ts !== null, 3000);
    assert.is(h.rt.get(a.actor_id)!.connectable_ts, null);
    assert.is(await h.rt.action(a.actor_id, "get", []), 3);
    const r = h.rt.get(a.actor_id)!;
    assert.is(r.sleep_ts, null);
    assert.ok(r.connectable_ts);
  } finally {
    await h.dispose();
  }
});

test("lists exclude destroyed actors, drop unknown ids and list by name newest first", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "1"));
    // Two creates can share a millisecond: let the clock pass the first one's create_ts.
    await waitFor("the clock to pass the first actor's create_ts", () => Date.now() > a.create_ts);
    const b = await h.rt.create(req("counter", "2"));
    assert.equal(
      h.rt.list({ namespace: "default", name: "counter" }).map((r) => r.actor_id),
      [b.actor_id, a.actor_id],
    );
    await h.rt.destroy(a.actor_id);
    assert.equal(
      h.rt.list({ namespace: "default", name: "counter" }).map((r) => r.actor_id),
      [b.actor_id],
    );
    assert.equal(
      h.rt.list({ namespace: "default", actor_ids: [a.actor_id, b.actor_id, "unknown"] }).map((r) => r.actor_id),
      [b.actor_id],
    );
    assert.ok(h.rt.get(a.actor_id)!.destroy_ts);
    // The key of a destroyed actor can be used again, with a new id.
    const again = await h.rt.create(req("counter", "1"));
    assert.is.not(again.actor_id, a.actor_id);
    assert.is((await code(h.rt.action(a.actor_id, "get", []))).code, "actor.not_found");
  } finally {
    await h.dispose();
  }
});

test("a lost index is rebuilt from the actor files on start", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "kept"));
    await h.rt.action(a.actor_id, "increment", [4]);
    await h.rt.stop();
    const { rmSync } = await import("node:fs");
    rmSync(join(indexDir(h.dir), "index.json"));
    await h.restart();
    assert.equal(
      h.rt.list({ namespace: "default", name: "counter" }).map((r) => r.actor_id),
      [a.actor_id],
    );
    assert.is(await h.rt.action(a.actor_id, "get", []), 4);
    assert.is((await h.rt.getOrCreate({ ...req("counter", "kept"), key: "kept" })).created, false);
  } finally {
    await h.dispose();
  }
});

test("hooks see vars, onStateChange and broadcasts are reported, and c.sleep()/c.destroy() work from actions", async () => {
  const changes: unknown[] = [];
  const events: string[] = [];
  const rich: ActorDefinition = {
    state: { v: 0 },
    createVars: () => ({ hits: 0 }),
    onStateChange: (_c, s) => void changes.push(structuredClone(s)),
    actions: {
      set: (c, v: number) => {
        c.vars.hits++;
        c.state.v = v;
        c.broadcast("set", v);
        return c.vars.hits;
      },
      nap: (c) => c.sleep(),
      end: (c) => c.destroy(),
    },
  };
  const h = await tempRuntime({ rich });
  try {
    let destroyReported = false;
    h.rt.onChange((e) => {
      events.push(e.type === "broadcast" ? `broadcast:${e.event}:${JSON.stringify(e.args)}` : e.type);
      // The runtime reports a destroy once the actor's files are gone (destroy_ts is set before).
      if (e.type === "record" && e.record?.destroy_ts != null) destroyReported = true;
    });
    const a = await h.rt.create(req("rich", "r"));
    assert.is(await h.rt.action(a.actor_id, "set", [1]), 1);
    assert.is(await h.rt.action(a.actor_id, "set", [1]), 2);
    assert.equal(changes, [{ v: 1 }]);
    assert.ok(events.includes("broadcast:set:[1]"));
    await h.rt.action(a.actor_id, "nap", []);
    await waitFor("c.sleep()", () => h.rt.get(a.actor_id)!.sleep_ts !== null, 2000);
    // vars are not persisted: a wake makes them again.
    assert.is(await h.rt.action(a.actor_id, "set", [2]), 1);
    await h.rt.action(a.actor_id, "end", []);
    await waitFor("c.destroy() to be reported", () => destroyReported, 2000);
    assert.ok(h.rt.get(a.actor_id)!.destroy_ts !== null);
    const { existsSync } = await import("node:fs");
    assert.not.ok(existsSync(actorFilePath(h.dir, a.actor_id)));
  } finally {
    await h.dispose();
  }
});

test("a write inside onStateChange is part of its change: read-only actions do not fire it again (issue 37 row 9)", async () => {
  let fired = 0;
  const watcher: ActorDefinition = {
    state: { count: 0, changes: 0 },
    onStateChange: (c) => {
      fired++;
      c.state.changes++;
    },
    actions: {
      inc: (c) => void c.state.count++,
      read: (c) => ({ ...c.state }),
    },
  };
  const h = await tempRuntime({ watcher });
  try {
    const a = await h.rt.create(req("watcher", "w"));
    await h.rt.action(a.actor_id, "inc", []);
    assert.equal(await h.rt.action(a.actor_id, "read", []), { count: 1, changes: 1 });
    assert.equal(await h.rt.action(a.actor_id, "read", []), { count: 1, changes: 1 });
    assert.is(fired, 1);
    await h.restart();
    assert.equal(await h.rt.action(a.actor_id, "read", []), { count: 1, changes: 1 });
  } finally {
    await h.dispose();
  }
});

test("the inspector lists calls in flight as connections", async () => {
  let release: () => void = () => undefined;
  let running = false;
  const waiter: ActorDefinition = {
    actions: {
      wait: () =>
        new Promise<void>((r) => {
          running = true;
          release = r;
        }),
    },
  };
  const h = await tempRuntime({ waiter });
  try {
    const a = await h.rt.create(req("waiter", "w"));
    const p = h.rt.action(a.actor_id, "wait", [], { source: "gateway" });
    await waitFor("the action to be running", () => running);
    const conns = await h.rt.inspector(a.actor_id).connections();
    assert.is(conns.length, 1);
    assert.is(conns[0]!.type, "gateway");
    assert.equal(conns[0]!.details, { action: "wait" });
    release();
    await p;
    assert.equal(await h.rt.inspector(a.actor_id).connections(), []);
  } finally {
    await h.dispose();
  }
});

test("an actor for an unknown runner stays starting and cannot be called", async () => {
  const h = await tempRuntime({ counter });
  try {
    const a = await h.rt.create(req("counter", "remote", { runner_name_selector: "elsewhere" }));
    const { stateName } = await import("../../daemon/actors/runtime/runtime.js");
    assert.is(stateName(h.rt.get(a.actor_id)!), "starting");
    assert.is(h.rt.get(a.actor_id)!.start_ts, null);
    assert.is((await code(h.rt.action(a.actor_id, "get", []))).code, "actor.runner_unavailable");
  } finally {
    await h.dispose();
  }
});

test("noSleep keeps an idle actor awake", async () => {
  const awake: ActorDefinition = { state: {}, actions: { ping: () => "pong" }, options: { sleepTimeout: 30, noSleep: true } };
  const drowsy: ActorDefinition = { state: {}, actions: { ping: () => "pong" }, options: { sleepTimeout: 30 } };
  const h = await tempRuntime({ awake, drowsy });
  try {
    const a = await h.rt.create(req("awake", "n"));
    // The same idle timeout without noSleep, started later: once it has put its actor to sleep,
    // the noSleep actor's timeout has passed too.
    const b = await h.rt.create(req("drowsy", "d"));
    await waitFor("the actor without noSleep to go to sleep", () => h.rt.get(b.actor_id)!.sleep_ts !== null, 3000);
    assert.is(h.rt.get(a.actor_id)!.sleep_ts, null);
    assert.ok(h.rt.get(a.actor_id)!.connectable_ts);
  } finally {
    await h.dispose();
  }
});

test.run();

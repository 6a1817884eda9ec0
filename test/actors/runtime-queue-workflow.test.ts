import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ActorDefinition, QueueMessage } from "../../daemon/actors/types.js";
import { req, tempRuntime, waitFor } from "./helpers.js";

test("enqueue with wait gets the consumer's reply; a message is removed only on complete", async () => {
  const consumer: ActorDefinition = {
    state: { seen: [] as unknown[] },
    run: async (c) => {
      for await (const m of c.queue.iter({ name: "job" })) {
        c.state.seen.push(m.body);
        await c.saveState();
        await m.complete({ ok: m.id });
      }
    },
    actions: { seen: (c) => c.state.seen },
  };
  const h = await tempRuntime({ consumer });
  try {
    const a = await h.rt.create(req("consumer", "q"));
    const r = await h.rt.enqueue(a.actor_id, "job", { x: 1 }, { wait: true, timeoutMs: 2000 });
    assert.is(r.status, "completed");
    assert.equal(r.response, { ok: r.id });
    const r2 = await h.rt.enqueue(a.actor_id, "job", { x: 2 });
    assert.ok(r2.id > r.id);
    await waitFor("second message", async () => ((await h.rt.action(a.actor_id, "seen", [])) as unknown[]).length === 2, 2000);
    const q = await waitFor(
      "completion",
      async () => {
        const s = await h.rt.inspector(a.actor_id).queue(50);
        return s.size === 0 ? s : null;
      },
      2000,
    );
    assert.is(q.maxSize, 1000);
    // A message nobody consumes times out for a waiting sender and stays queued.
    const t = await h.rt.enqueue(a.actor_id, "other", 1, { wait: true, timeoutMs: 50 });
    assert.is(t.status, "timedOut");
    const q2 = await h.rt.inspector(a.actor_id).queue(0);
    assert.is(q2.size, 1);
    assert.is(q2.truncated, true);
    assert.equal(q2.messages, []);
  } finally {
    await h.dispose();
  }
});

test("the queue refuses a full queue and too large messages", async () => {
  const idle: ActorDefinition = { actions: {} };
  const h = await tempRuntime({ idle });
  try {
    const a = await h.rt.create(req("idle", "q"));
    const big = await h.rt.enqueue(a.actor_id, "m", "x".repeat(70 * 1024)).catch((e) => e);
    assert.is(big.code, "queue.message_too_large");
    await Promise.all(Array.from({ length: 1000 }, (_, i) => h.rt.enqueue(a.actor_id, "m", i)));
    const full = await h.rt.enqueue(a.actor_id, "m", 1).catch((e) => e);
    assert.is(full.code, "queue.full");
  } finally {
    await h.dispose();
  }
});

test("a message taken but not completed is delivered again after a restart (at-least-once)", async () => {
  const got: number[] = [];
  let completeIt = false;
  const worker: ActorDefinition = {
    run: async (c) => {
      for await (const m of c.queue.iter({ names: ["m"] })) {
        got.push(m.body as number);
        if (completeIt) await m.complete();
      }
    },
    actions: {},
  };
  const h = await tempRuntime({ worker });
  try {
    const a = await h.rt.create(req("worker", "w"));
    await h.rt.enqueue(a.actor_id, "m", 42);
    await waitFor("first delivery", () => got.length === 1, 2000);
    completeIt = true;
    await h.restart();
    await waitFor("redelivery", () => got.length === 2, 2000);
    assert.equal(got, [42, 42]);
    await waitFor("completion", async () => (await h.rt.inspector(a.actor_id).queue(10)).size === 0, 2000);
  } finally {
    await h.dispose();
  }
});

const runs: Record<string, number> = {};
let gate: (() => void) | null = null;
const flow: ActorDefinition = {
  state: { log: [] as string[] },
  workflow: async (w) => {
    const a = await w.step("first", () => {
      runs.first = (runs.first ?? 0) + 1;
      return 10;
    });
    await w.step("second", async () => {
      runs.second = (runs.second ?? 0) + 1;
      await new Promise<void>((r) => (gate = r));
      w.state.log.push("second");
    });
    await w.sleep(30);
    const m = (await w.queue.next({ name: "go" })) as QueueMessage;
    const b = await w.step("third", () => {
      runs.third = (runs.third ?? 0) + 1;
      return a + (m.body as number);
    });
    await m.complete(b);
    return b;
  },
  actions: { log: (c) => c.state.log },
};

test("a workflow resumes from its history after a restart without re-running finished steps", async () => {
  for (const k of Object.keys(runs)) delete runs[k];
  const h = await tempRuntime({ flow });
  try {
    const a = await h.rt.create(req("flow", "f"));
    await waitFor("second step started", () => gate !== null, 2000);
    gate!();
    // Restart while the workflow waits for its queue message: it resumes from the history.
    await waitFor("waiting on the queue", async () => ((await h.rt.inspector(a.actor_id).workflowHistory()).history as any).entries.length === 4, 2000);
    await h.restart();
    const r = await h.rt.enqueue(a.actor_id, "go", 5, { wait: true, timeoutMs: 3000 });
    assert.equal(r, { status: "completed", response: 15, id: r.id });
    await waitFor("workflow completed", async () => ((await h.rt.inspector(a.actor_id).workflowHistory()).history as any).status === "completed", 2000);
    assert.is(runs.first, 1);
    assert.is(runs.second, 1);
    assert.is(runs.third, 1);
    const wh = (await h.rt.inspector(a.actor_id).workflowHistory()) as { history: any; isWorkflowEnabled: boolean };
    assert.is(wh.isWorkflowEnabled, true);
    assert.is(wh.history.status, "completed");
    const kinds = wh.history.entries.map((e: any) => e.kind);
    assert.equal(kinds, ["step", "step", "sleep", "message", "step"]);
    for (const e of wh.history.entries) assert.is(wh.history.entryMetadata[e.id].status, "completed");
    assert.ok(wh.history.nameRegistry.includes("first"));
  } finally {
    gate = null;
    await h.dispose();
  }
});

test("replay from an entry discards its result and later ones and runs them again", async () => {
  let counted = 0;
  const replayable: ActorDefinition = {
    workflow: async (w) => {
      await w.step("a", () => "A");
      await w.step("b", () => ++counted);
      await w.step("c", () => "C");
    },
    actions: {},
  };
  const h = await tempRuntime({ replayable });
  try {
    const act = await h.rt.create(req("replayable", "r"));
    const ins = h.rt.inspector(act.actor_id);
    await waitFor("workflow done", async () => ((await ins.workflowHistory()).history as any).status === "completed", 2000);
    const hist = (await ins.workflowHistory()).history as any;
    const b = hist.entries.find((e: any) => e.name === "b");
    await ins.replay(b.id);
    await waitFor("replayed", async () => ((await ins.workflowHistory()).history as any).status === "completed", 2000);
    assert.is(counted, 2);
    const after = (await ins.workflowHistory()).history as any;
    assert.is(after.entryMetadata[after.entries.find((e: any) => e.name === "b").id].output, 2);
    await ins.replay();
    await waitFor("full replay", () => counted === 3, 2000);
  } finally {
    await h.dispose();
  }
});

test("replay of an actor without a workflow is workflow.not_enabled and its history is null", async () => {
  const plain: ActorDefinition = { actions: {} };
  const h = await tempRuntime({ plain });
  try {
    const a = await h.rt.create(req("plain", "p"));
    const e = await h.rt
      .inspector(a.actor_id)
      .replay()
      .catch((x) => x);
    assert.is(e.code, "workflow.not_enabled");
    assert.equal(await h.rt.inspector(a.actor_id).workflowHistory(), { history: null, isWorkflowEnabled: false });
  } finally {
    await h.dispose();
  }
});

test("a workflow loop resumes at its recorded iteration and keeps a bounded history", async () => {
  const seen: number[] = [];
  const looper: ActorDefinition = {
    state: { total: 0 },
    workflow: async (w) => {
      await w.loop("main", async (w) => {
        const m = await w.queue.next({ name: "n" });
        if (!m) return { continue: true };
        await w.step("add", () => {
          w.state.total += m.body as number;
          seen.push(m.body as number);
        });
        await m.complete(w.state.total);
        return { continue: true };
      });
    },
    actions: { total: (c) => c.state.total },
  };
  const h = await tempRuntime({ looper });
  try {
    const a = await h.rt.create(req("looper", "l"));
    for (let i = 1; i <= 30; i++) await h.rt.enqueue(a.actor_id, "n", i, { wait: true, timeoutMs: 2000 });
    await h.restart();
    const r = await h.rt.enqueue(a.actor_id, "n", 100, { wait: true, timeoutMs: 2000 });
    assert.is(r.response, 565);
    assert.is(seen.length, 31);
    const hist = (await h.rt.inspector(a.actor_id).workflowHistory()).history as any;
    assert.ok(hist.entries.length < 60, `history has ${hist.entries.length} entries`);
  } finally {
    await h.dispose();
  }
});

const inspected: ActorDefinition = { state: { n: 0 }, actions: { inc: (c) => ++c.state.n, get: (c) => c.state.n } };

/** A runtime with one `counter` actor (key "i") that has run `inc` once. */
async function inspectedActor() {
  const h = await tempRuntime({ counter: inspected });
  const a = await h.rt.create(req("counter", "i"));
  await h.rt.action(a.actor_id, "inc", []);
  return { h, a };
}
const spansOf = (t: { otlp: unknown }) => (t.otlp as any).resourceSpans[0].scopeSpans[0].spans;

test("inspector traces include the hooks run at the actor's creation", async () => {
  const { h, a } = await inspectedActor();
  try {
    const early = await h.rt.inspector(a.actor_id).traces({ startMs: 0, endMs: Date.now() + 1000, limit: 100 });
    assert.ok(spansOf(early).some((x: any) => x.name === "hook createState"));
  } finally {
    await h.dispose();
  }
});

test("inspector setState is what the next action sees, also after a runtime restart", async () => {
  const { h, a } = await inspectedActor();
  try {
    await h.rt.inspector(a.actor_id).setState({ n: 41 });
    await h.restart();
    assert.is(await h.rt.action(a.actor_id, "inc", []), 42);
  } finally {
    await h.dispose();
  }
});

test("inspector rpcs lists the actor's actions in definition order", async () => {
  const { h, a } = await inspectedActor();
  try {
    assert.equal(await h.rt.inspector(a.actor_id).rpcs(), ["inc", "get"]);
  } finally {
    await h.dispose();
  }
});

test("inspector summary shows the state and which features are enabled", async () => {
  const { h, a } = await inspectedActor();
  try {
    await h.rt.inspector(a.actor_id).setState({ n: 41 });
    await h.rt.action(a.actor_id, "inc", []);
    const s = await h.rt.inspector(a.actor_id).summary();
    assert.equal(s.state, { n: 42 });
    assert.is(s.isStateEnabled, true);
    assert.is(s.isWorkflowEnabled, false);
  } finally {
    await h.dispose();
  }
});

test("inspector connections is empty with no call in flight", async () => {
  const { h, a } = await inspectedActor();
  try {
    assert.equal(await h.rt.inspector(a.actor_id).connections(), []);
  } finally {
    await h.dispose();
  }
});

test("inspector traces are OTLP spans with hex ids, nanosecond times and the actor's attributes", async () => {
  const { h, a } = await inspectedActor();
  try {
    const spans = spansOf(await h.rt.inspector(a.actor_id).traces({ startMs: 0, endMs: Date.now() + 1000, limit: 20_000 }));
    const action = spans.find((x: any) => x.name === "action inc");
    assert.ok(action, JSON.stringify(spans.map((x: any) => x.name)));
    assert.match(action.traceId, /^[0-9a-f]{32}$/);
    assert.match(action.spanId, /^[0-9a-f]{16}$/);
    assert.match(action.startTimeUnixNano, /^\d+000000$/);
    const attrs = Object.fromEntries(action.attributes.map((x: any) => [x.key, x.value]));
    assert.equal(attrs["actor.id"], { stringValue: a.actor_id });
    assert.equal(attrs["actor.name"], { stringValue: "counter" });
    assert.equal(attrs["actor.key"], { stringValue: "i" });
  } finally {
    await h.dispose();
  }
});

test("inspector traces clamp a limit over the maximum and keep a smaller one", async () => {
  const { h, a } = await inspectedActor();
  try {
    const ins = h.rt.inspector(a.actor_id);
    const t = await ins.traces({ startMs: 0, endMs: Date.now() + 1000, limit: 20_000 });
    assert.is(t.clamped, true);
    const limited = await ins.traces({ startMs: 0, endMs: Date.now() + 1000, limit: 1 });
    assert.is(limited.clamped, false);
    assert.is(spansOf(limited).length, 1);
  } finally {
    await h.dispose();
  }
});

test.run();

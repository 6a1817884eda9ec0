// The cap on idle awake actors (daemon/actors/runtime/idle-awake-cap.ts): past it, the
// longest-awake idle actors sleep before their timeout (their state kept, a call wakes them),
// while an actor with a connection, a call in flight or `noSleep` stays awake, and below the cap
// every actor waits out its own timeout.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ActorDefinition } from "../../daemon/actors/types.js";
import { req, tempRuntime, waitFor } from "./helpers.js";

let release: () => void = () => undefined;
const held = () => new Promise<void>((r) => (release = r));

const counter: ActorDefinition = {
  state: { n: 0 },
  actions: {
    bump: (c) => ++c.state.n,
    get: (c) => c.state.n,
    hold: async () => held(),
    nap: (c) => {
      c.sleep();
      return ++c.state.n;
    },
  },
  options: { sleepTimeout: 60_000 },
};
const pinned: ActorDefinition = { state: {}, actions: { ping: () => "pong" }, options: { noSleep: true } };
const transport = { event: () => undefined, close: () => undefined };

test("over the cap the oldest idle actors sleep early, keeping their state; busy, connected and noSleep ones stay awake", async () => {
  const h = await tempRuntime({ counter, pinned }, { maxIdleAwake: 4 });
  try {
    const rt = h.rt;
    const special = [];
    // The three oldest wakes, each with a reason to stay awake.
    const connected = await rt.create(req("counter", "connected"));
    await rt.connect(connected.actor_id, null, transport);
    const busy = await rt.create(req("counter", "busy"));
    const call = rt.action(busy.actor_id, "hold", []);
    const noSleep = await rt.create(req("pinned", "pinned"));
    special.push(connected.actor_id, busy.actor_id, noSleep.actor_id);
    const plain = [];
    for (let i = 0; i < 12; i++) {
      const a = await rt.create(req("counter", `c${i}`));
      await rt.action(a.actor_id, "bump", []);
      plain.push(a.actor_id);
    }
    assert.is(rt.counts().awake, 15);
    // The cap is 4 idle actors: the three with a reason to stay do not count, and of the twelve
    // idle ones the four most recently woken stay.
    await waitFor("the idle actors down to the cap", () => (rt.counts().awake === 3 + 4 ? true : null), 15_000);
    for (const id of special) assert.is(rt.get(id)!.sleep_ts, null, `${id} stays awake`);
    for (const id of plain.slice(8)) assert.is(rt.get(id)!.sleep_ts, null, "one of the newest idle actors stays awake");
    for (const id of plain.slice(0, 8)) assert.type(rt.get(id)!.sleep_ts, "number", "an older idle actor sleeps early");
    // A call wakes a slept one with its state.
    assert.is(await rt.action(plain[0]!, "get", []), 1);
    release();
    await call;
  } finally {
    release();
    await h.dispose();
  }
});

test("at or below the cap no actor sleeps before its timeout; 0 turns the cap off", async () => {
  for (const [cap, count] of [
    [8, 8],
    [0, 12],
  ] as const) {
    const h = await tempRuntime({ counter }, { maxIdleAwake: cap });
    try {
      for (let i = 0; i < count; i++) await h.rt.create(req("counter", `k${i}`));
      // Longer than the minimum idle time and several checks.
      await new Promise((r) => setTimeout(r, 600));
      assert.is(h.rt.counts().awake, count, `cap ${cap}: all ${count} stay awake`);
    } finally {
      await h.dispose();
    }
  }
});

test("an actor chosen by the cap that asks to sleep itself (c.sleep()) before its sleep starts does sleep", async () => {
  const h = await tempRuntime({ counter }, { maxIdleAwake: 1 });
  try {
    const old = await h.rt.create(req("counter", "old"));
    await h.rt.create(req("counter", "new"));
    // Every sleep the cap asks for goes through the runtime's queue: hook it to call in between.
    const rt = h.rt as unknown as { enqueueSleep(id: string): void; idleCap: { max: number } };
    const original = rt.enqueueSleep.bind(rt);
    let raced: Promise<unknown> | null = null;
    let calling = false;
    rt.enqueueSleep = (id: string) => {
      original(id);
      if (id !== old.actor_id || calling) return;
      calling = true;
      // From here the cap would not choose it again: only its own c.sleep() can put it to sleep.
      rt.idleCap.max = 100;
      raced = h.rt.action(id, "nap", []);
    };
    await waitFor("the cap chose the old actor", () => raced, 10_000);
    assert.is(await raced, 1);
    await waitFor("the actor's own sleep", () => (h.rt.get(old.actor_id)!.sleep_ts !== null ? true : null), 10_000);
  } finally {
    await h.dispose();
  }
});

test.run();

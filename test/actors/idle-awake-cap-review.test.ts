// Review (rev4) of the cap on idle awake actors (daemon/actors/runtime/idle-awake-cap.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ActorDefinition } from "../../daemon/actors/types.js";
import { req, tempRuntime, waitFor } from "./helpers.js";

const counter: ActorDefinition = {
  state: { n: 0 },
  actions: { bump: (c) => ++c.state.n, get: (c) => c.state.n },
  options: { sleepTimeout: 60_000 },
};
const transport = { event: () => undefined, close: () => undefined };

test("the cap counts idle actors: connected ones do not push the only idle actor to sleep early", async () => {
  // AGENT_ACTORS_MAX_IDLE_AWAKE is "idle actors kept awake at most" (docs/environment.md,
  // docs/actors.md "Past 1,000 idle actors awake at once"): here 2 are allowed and 1 is idle.
  const h = await tempRuntime({ counter }, { maxIdleAwake: 2 });
  try {
    for (const k of ["conn1", "conn2"]) {
      const a = await h.rt.create(req("counter", k));
      await h.rt.connect(a.actor_id, null, transport);
    }
    const idle = await h.rt.create(req("counter", "idle"));
    // Past MIN_IDLE_MS (250) and several checks.
    await new Promise((r) => setTimeout(r, 700));
    assert.is(h.rt.get(idle.actor_id)!.sleep_ts, null, "the one idle actor (of a cap of 2) stays awake for its 60 s sleepTimeout");
  } finally {
    await h.dispose();
  }
});

test("an actor chosen by the cap that gets a call before its sleep starts is not put to sleep under that call", async () => {
  // The cap's timer asks for the sleep; the sleep starts in a later turn (setImmediate). A call
  // that arrives in between (an I/O callback: the poll phase runs between timers and check) is
  // served, and then the actor sleeps at once: the call's activity was not looked at again.
  const h = await tempRuntime({ counter }, { maxIdleAwake: 1 });
  try {
    const old = await h.rt.create(req("counter", "old"));
    await h.rt.create(req("counter", "new"));
    // Every sleep request (the cap's, an idle timer's, c.sleep()) goes through this queue.
    const queue = (h.rt as unknown as { sleepQueue: Set<string> }).sleepQueue;
    const add = queue.add.bind(queue);
    let raced: Promise<unknown> | null = null;
    queue.add = (id: string) => {
      add(id);
      // The call of a client arriving now, before the drain.
      if (id === old.actor_id && !raced) raced = h.rt.action(id, "bump", []);
      return queue;
    };
    await waitFor("the cap chose the old actor", () => raced, 10_000);
    assert.is(await raced, 1);
    await new Promise((r) => setTimeout(r, 50));
    assert.is(h.rt.get(old.actor_id)!.sleep_ts, null, "an actor that just served a call is not idle: it stays awake");
  } finally {
    await h.dispose();
  }
});

test.run();

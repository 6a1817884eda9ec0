import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome, waitFor } from "./daemon-helpers.js";
import { actorFilePath } from "../../daemon/actors/storage/actor-storage.js";

const MODULES = `
export const counter = {
  state: { n: 0 },
  actions: { inc: (c) => ++c.state.n, get: (c) => c.state.n },
  options: { sleepTimeout: 1500 },
};

// Takes each message; the first delivery of a message is held (never completed), so only a
// redelivery after a restart completes it.
export const holder = {
  state: { seen: [] },
  run: async (c) => {
    for await (const m of c.queue.iter()) {
      c.state.seen.push(m.body);
      await c.saveState();
      if (c.state.seen.length === 1) continue;
      await m.complete();
    }
  },
  actions: { seen: (c) => c.state.seen, size: (c) => c.queue.size },
};

export const timer = {
  state: { fired: 0 },
  actions: {
    later: async (c, ms) => { await c.schedule.after(ms, "fire"); },
    fire: (c) => { c.state.fired++; },
    fired: (c) => c.state.fired,
  },
  options: { sleepTimeout: 100 },
};

export const flow = {
  state: { ones: 0, twos: 0 },
  workflow: async (w) => {
    await w.step("one", () => { w.state.ones++; });
    await w.sleep(1500);
    await w.step("two", () => { w.state.twos++; });
  },
  actions: { counts: (c) => c.state },
};
`;

test("an actor sleeps when idle, wakes on a call, and keeps its state across a daemon restart", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const rec = await h.json(["actors", "create", "counter", "--key", "s"]);
    for (let i = 0; i < 3; i++) await h.json(["actors", "call", rec.actor_id, "inc"]);
    const slept = await waitFor(
      "idle sleep",
      async () => {
        const r = await h.json(["actors", "get", rec.actor_id]);
        return r.state === "sleeping" ? r : null;
      },
      5000,
    );
    assert.ok(slept.sleep_ts);
    assert.is(slept.connectable_ts, null);
    assert.is((await h.json(["actors", "call", rec.actor_id, "get"])).output, 3);
    assert.is((await h.json(["actors", "get", rec.actor_id])).state, "running");
    await h.stop();
    await h.start();
    assert.is((await h.json(["actors", "call", rec.actor_id, "inc"])).output, 4);
  } finally {
    await h.dispose();
  }
});

test("a queued message taken before kill -9 is delivered again after the restart (at-least-once)", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const rec = await h.json(["actors", "create", "holder", "--key", "q"]);
    const r = await fetch(`${h.url}/gateway/${rec.actor_id}/queue/job`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body: 41 }),
    });
    assert.is(r.status, 200, await r.clone().text());
    await waitFor("first delivery", async () => (await h.json(["actors", "call", rec.actor_id, "seen"])).output.length === 1, 5000);
    h.kill();
    await h.start();
    const seen = await waitFor(
      "redelivery",
      async () => {
        const s = (await h.json(["actors", "call", rec.actor_id, "seen"])).output;
        return s.length === 2 ? s : null;
      },
      8000,
    );
    assert.equal(seen, [41, 41]);
    await waitFor("completion", async () => (await h.json(["actors", "call", rec.actor_id, "size"])).output === 0, 5000);
  } finally {
    await h.dispose();
  }
});

test("schedule.after fires even when the daemon restarts in between, waking the sleeping actor", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const rec = await h.json(["actors", "create", "timer", "--key", "t"]);
    await h.json(["actors", "call", rec.actor_id, "later", "3000"]);
    await h.stop();
    await h.start();
    await waitFor("sleeping before the alarm", async () => (await h.json(["actors", "get", rec.actor_id])).state === "sleeping", 5000);
    // Read the actor's file (a call would wake it): the alarm wakes it and the action runs once.
    const file = actorFilePath(join(h.home, "data", "actors"), rec.actor_id);
    await waitFor("scheduled action", async () => JSON.parse(JSON.parse(readFileSync(file, "utf8")).data.state).fired === 1, 8000);
    assert.is((await h.json(["actors", "call", rec.actor_id, "fired"])).output, 1);
  } finally {
    await h.dispose();
  }
});

test("a workflow resumes from its history after kill -9 without re-running finished steps", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const rec = await h.json(["actors", "create", "flow", "--key", "f"]);
    await waitFor("step one", async () => (await h.json(["actors", "call", rec.actor_id, "counts"])).output.ones === 1, 5000);
    h.kill();
    await h.start();
    const counts = await waitFor(
      "step two after restart",
      async () => {
        const c = (await h.json(["actors", "call", rec.actor_id, "counts"])).output;
        return c.twos === 1 ? c : null;
      },
      8000,
    );
    assert.equal(counts, { ones: 1, twos: 1 });
  } finally {
    await h.dispose();
  }
});

test.run();

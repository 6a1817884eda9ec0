/**
 * The actor runtime reads the time from its clock (shared/clock.ts): `c.schedule.after` counts
 * from it and the alarm fires when it says so, so an hour-long schedule is tested without waiting.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ManualClock } from "../../shared/clock.js";
import type { ActorDefinition } from "../../daemon/actors/types.js";
import { req, tempRuntime, waitFor } from "./helpers.js";

const reminder: ActorDefinition = {
  createState: () => ({ fired: [] as string[] }),
  actions: {
    remind: async (c: any, label: string) => {
      await c.schedule.after(60 * 60_000, "fire", label);
      return true;
    },
    fire: (c: any, label: string) => {
      c.state.fired.push(label);
    },
    fired: (c: any) => c.state.fired,
  },
} as ActorDefinition;

test("schedule.after an hour fires when the runtime's clock has moved an hour, not before", async () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 27));
  const h = await tempRuntime({ reminder }, { clock });
  try {
    const a = await h.rt.create(req("reminder", "k"));
    await h.rt.action(a.actor_id, "remind", ["tea"]);
    clock.advance(59 * 60_000);
    await new Promise((r) => setImmediate(r));
    assert.equal(await h.rt.action(a.actor_id, "fired", []), [], "not due after 59 minutes");
    clock.advance(60_000);
    await waitFor("the scheduled call ran", async () => ((await h.rt.action(a.actor_id, "fired", [])) as string[]).length === 1, 5000);
    assert.equal(await h.rt.action(a.actor_id, "fired", []), ["tea"]);
  } finally {
    await h.dispose();
  }
});

test.run();

// The one clock interface (shared/clock.ts): the fake moves only when told and fires its timers
// in time order; a scaled clock runs ahead of and faster than its base, and refuses a bad rate.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cronTestClock } from "../../shared/config/env.js";
import { ManualClock, scaledClock, systemClock } from "../../shared/clock.js";

test("a manual clock fires due timers in time order, each seeing its own time, and not the cleared or later ones", () => {
  const clock = new ManualClock(1_000);
  const seen: Array<[string, number]> = [];
  clock.setTimeout(() => seen.push(["b", clock.now()]), 200);
  clock.setTimeout(() => seen.push(["a", clock.now()]), 100);
  const cleared = clock.setTimeout(() => seen.push(["cleared", clock.now()]), 150);
  clock.setTimeout(() => seen.push(["late", clock.now()]), 1_000);
  clock.clearTimeout(cleared);
  // A timer set by a timer fires within the same advance when it is due by then.
  clock.setTimeout(() => clock.setTimeout(() => seen.push(["chained", clock.now()]), 50), 120);
  clock.advance(300);
  assert.equal(seen, [
    ["a", 1_100],
    ["chained", 1_170],
    ["b", 1_200],
  ]);
  assert.is(clock.now(), 1_300);
  assert.is(clock.pending, 1);
  clock.advance(700);
  assert.equal(seen.at(-1), ["late", 2_000]);
  assert.is(clock.pending, 0);
});

test("a scaled clock starts offset ahead of its base and runs `rate` times as fast; its timers wait ms / rate of the base", () => {
  const base = new ManualClock(10_000);
  const clock = scaledClock({ offsetMs: 5_000, rate: 10 }, base);
  assert.is(clock.now(), 15_000);
  base.advance(100);
  assert.is(clock.now(), 16_000);
  let fired = 0;
  clock.setTimeout(() => (fired = clock.now()), 2_000);
  base.advance(199);
  assert.is(fired, 0);
  base.advance(1);
  assert.is(fired, 18_000);
  assert.is(scaledClock({}, base), base, "rate 1 and no offset is the base itself");
  assert.throws(() => scaledClock({ rate: 0 }), /positive number/);
  assert.throws(() => scaledClock({ rate: Number.NaN }), /positive number/);
});

test("the real clock's timers run on the real time", async () => {
  const started = Date.now();
  assert.ok(Math.abs(systemClock.now() - started) < 50);
  await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 20));
  assert.ok(Date.now() - started >= 19);
  let ran = false;
  systemClock.clearTimeout(systemClock.setTimeout(() => (ran = true), 1));
  // A later timer fires after the cleared one would have.
  await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 2));
  assert.is(ran, false);
});

test("the cron test knobs: a number is taken, anything else leaves the real clock", () => {
  assert.equal(cronTestClock({}), { offsetMs: 0, rate: 1 });
  assert.equal(cronTestClock({ AGENT_CRON_CLOCK_OFFSET_MS: "60000", AGENT_CRON_CLOCK_RATE: "10" }), { offsetMs: 60_000, rate: 10 });
  assert.equal(cronTestClock({ AGENT_CRON_CLOCK_OFFSET_MS: "soon", AGENT_CRON_CLOCK_RATE: "-2" }), { offsetMs: 0, rate: 1 });
});

test.run();

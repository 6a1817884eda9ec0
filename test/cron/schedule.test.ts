import { test } from "uvu";
import * as assert from "uvu/assert";
import { nextFire, parseSchedule, planDue } from "../../daemon/cron/schedule.js";
import { toAgentError } from "../../shared/errors.js";

const NOW = Date.parse("2026-11-22T12:00:00Z");
const MIN = 60_000;
const HOUR = 60 * MIN;

function refused(text: string, tz = "UTC"): string {
  try {
    parseSchedule(text, NOW, tz);
  } catch (error) {
    const e = toAgentError(error);
    assert.is(e.code, "cron.invalid_schedule");
    return e.message;
  }
  throw new Error(`${text} was accepted`);
}

test("every with minutes, hours, days, seconds and combined units is a fixed interval", () => {
  assert.equal(parseSchedule("every 30m", NOW, "UTC"), { kind: "every", ms: 30 * MIN });
  assert.equal(parseSchedule("every 2h", NOW, "UTC"), { kind: "every", ms: 2 * HOUR });
  assert.equal(parseSchedule("every 1d", NOW, "UTC"), { kind: "every", ms: 24 * HOUR });
  assert.equal(parseSchedule("every 5s", NOW, "UTC"), { kind: "every", ms: 5000 });
  assert.equal(parseSchedule("Every  1h30m", NOW, "UTC"), { kind: "every", ms: 90 * MIN });
});

test("a five-field cron expression is kept and fires in the configured time zone", () => {
  const s = parseSchedule("0 9 * * 1-5", NOW, "Europe/Berlin");
  assert.equal(s, { kind: "cron", expr: "0 9 * * 1-5" });
  // Sunday 22 Nov 2026 noon UTC: the next weekday 09:00 in Berlin (UTC+1 in winter) is Monday 08:00 UTC.
  assert.is(new Date(nextFire(s, NOW, "Europe/Berlin")!).toISOString(), "2026-11-23T08:00:00.000Z");
  assert.is(new Date(nextFire(s, NOW, "UTC")!).toISOString(), "2026-11-23T09:00:00.000Z");
  assert.equal(parseSchedule("*/15 * * * *", NOW, "UTC"), { kind: "cron", expr: "*/15 * * * *" });
});

test("an ISO time with Z or an offset is that moment, once", () => {
  assert.equal(parseSchedule("2026-12-01T09:00:00Z", NOW, "America/New_York"), { kind: "once", at: Date.parse("2026-12-01T09:00:00Z") });
  assert.equal(parseSchedule("2026-12-01T09:00+02:00", NOW, "UTC"), { kind: "once", at: Date.parse("2026-12-01T07:00:00Z") });
});

test("a naive ISO time is read in the configured time zone, daylight saving included", () => {
  // New York is UTC-5 in December and UTC-4 in July.
  assert.equal(parseSchedule("2026-12-01T09:00", NOW, "America/New_York"), { kind: "once", at: Date.parse("2026-12-01T14:00:00Z") });
  assert.equal(parseSchedule("2027-07-01 09:00:00", NOW, "America/New_York"), { kind: "once", at: Date.parse("2027-07-01T13:00:00Z") });
  assert.equal(parseSchedule("2026-12-01", NOW, "Asia/Tokyo"), { kind: "once", at: Date.parse("2026-11-30T15:00:00Z") });
});

test("a bare duration is one shot that long from now", () => {
  assert.equal(parseSchedule("45m", NOW, "UTC"), { kind: "once", at: NOW + 45 * MIN });
  assert.equal(parseSchedule("2h", NOW, "UTC"), { kind: "once", at: NOW + 2 * HOUR });
  assert.equal(parseSchedule("1d", NOW, "UTC"), { kind: "once", at: NOW + 24 * HOUR });
});

test("anything else is refused with the list of valid forms", () => {
  for (const bad of ["", "hourly", "every", "every day", "every 0m", "30", "45 minutes", "@daily", "0 0 9 * * *", "61 * * * *", "* * * *", "tomorrow 9am"]) {
    const message = refused(bad);
    assert.match(message, /valid forms: "every 30m"/, bad);
    assert.match(message, /five-field cron expression/, bad);
    assert.match(message, /ISO time/, bad);
    assert.match(message, /a duration such as "45m"/, bad);
  }
});

test("a one-shot in the past and an impossible date are refused", () => {
  assert.match(refused("2020-01-01T00:00Z"), /is in the past/);
  assert.match(refused("2026-02-30T09:00"), /not a real date/);
});

test("a fire time missed within the catch-up window runs once; earlier ones are skipped", () => {
  const s = { kind: "every" as const, ms: 10 * MIN };
  // Due at 0; now is 33 min later: 10 and 20 were missed too, 30 is 3 min late (window 5 min).
  const plan = planDue(s, 0, 33 * MIN, "UTC");
  assert.equal(plan, { latest: 30 * MIN, missedBefore: 3, next: 40 * MIN, windowMs: 5 * MIN });
});

test("the catch-up window is half the period, clamped to 2 minutes and 2 hours", () => {
  assert.is(planDue({ kind: "every", ms: 1000 }, 0, 0, "UTC").windowMs, 2 * MIN);
  assert.is(planDue({ kind: "every", ms: 30 * MIN }, 0, 0, "UTC").windowMs, 15 * MIN);
  assert.is(planDue({ kind: "every", ms: 24 * HOUR }, 0, 0, "UTC").windowMs, 2 * HOUR);
  const hourly = planDue({ kind: "cron", expr: "0 * * * *" }, Date.parse("2026-11-22T10:00:00Z"), Date.parse("2026-11-22T12:20:00Z"), "UTC");
  assert.is(new Date(hourly.latest).toISOString(), "2026-11-22T12:00:00.000Z");
  assert.is(hourly.missedBefore, 2);
  assert.is(new Date(hourly.next!).toISOString(), "2026-11-22T13:00:00.000Z");
  assert.is(hourly.windowMs, 30 * MIN);
});

test.run();

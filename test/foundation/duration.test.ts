// The one duration parser (shared/duration.ts): the grammar every caller shares, and the
// narrower forms a cron schedule asks for through its options.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseSchedule } from "../../daemon/cron/schedule.js";
import { parseDurationMs, parseDurationSeconds } from "../../shared/duration.js";

test("units, combinations, spaces, case and bare seconds", () => {
  const cases: Array<[string, number | null]> = [
    ["90", 90],
    ["90s", 90],
    ["30m", 1800],
    ["2h", 7200],
    ["1d", 86_400],
    ["1h30m", 5400],
    ["1h 30m", 5400],
    [" 2H ", 7200],
    ["1.5h", 5400],
    ["0.5", 0.5],
    ["0", null],
    ["0s", null],
    ["", null],
    ["soon", null],
    ["10x", null],
    ["h", null],
    ["-5m", null],
    ["1h30", null],
    ["99999999999999999d", null],
  ];
  for (const [text, seconds] of cases) assert.is(parseDurationSeconds(text), seconds, JSON.stringify(text));
});

test("options narrow the grammar: no bare number, whole numbers, zero allowed", () => {
  const cron = { bareSeconds: false, fractions: false, zero: true };
  assert.is(parseDurationMs("30", cron), null);
  assert.is(parseDurationMs("1.5h", cron), null);
  assert.is(parseDurationMs("0m", cron), 0);
  assert.is(parseDurationMs("1h30m", cron), 5_400_000);
});

test("a cron schedule reads its interval with the same parser", () => {
  const now = Date.UTC(2026, 0, 1);
  assert.equal(parseSchedule("every 1h 30m", now, "UTC"), { kind: "every", ms: 5_400_000 });
  assert.equal(parseSchedule("every 2H", now, "UTC"), { kind: "every", ms: 7_200_000 });
  assert.equal(parseSchedule("45m", now, "UTC"), { kind: "once", at: now + 2_700_000 });
  for (const bad of ["every 1.5h", "30", "every 0m"]) assert.throws(() => parseSchedule(bad, now, "UTC"), undefined, bad);
});

test.run();

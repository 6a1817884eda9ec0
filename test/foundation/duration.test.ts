// The one duration parser (shared/duration.ts) read by every place a person types a duration:
// kanban's --max-runtime and plan files, and cron's "every <duration>" and bare-duration one-shots.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseSchedule } from "../../daemon/cron/schedule.js";
import { parseDurationSeconds } from "../../shared/duration.js";

const NOW = Date.UTC(2026, 0, 1);

test("the parser reads seconds, units and sums, and refuses what is not a positive duration", () => {
  assert.is(parseDurationSeconds("90"), 90);
  assert.is(parseDurationSeconds("1h30m"), 5400);
  assert.is(parseDurationSeconds("1.5h"), 5400);
  for (const bad of ["", "0", "0s", "1x", "h", "1h 2", "-5m"]) assert.is(parseDurationSeconds(bad), null, bad);
});

test("a cron schedule's durations go through the same parser: what kanban accepts, cron reads alike", () => {
  for (const text of ["90s", "30m", "2h", "1d", "1h30m", "1.5h", "1H30M"]) {
    const seconds = parseDurationSeconds(text.toLowerCase())!;
    assert.equal(parseSchedule(`every ${text}`, NOW, "UTC"), { kind: "every", ms: seconds * 1000 }, text);
    assert.equal(parseSchedule(text, NOW, "UTC"), { kind: "once", at: NOW + seconds * 1000 }, text);
  }
});

test("a schedule's duration names its unit, and is at least a second", () => {
  assert.throws(() => parseSchedule("every 30", NOW, "UTC"), /has no interval after "every"/);
  assert.throws(() => parseSchedule("30", NOW, "UTC"), /valid forms/);
  assert.throws(() => parseSchedule("every 0.5s", NOW, "UTC"), /too short/);
});

test.run();

// The connection table behind both caps (daemon/limits/connection-cap.ts), on a fake clock:
// the order connections are dropped in, what is never dropped, and the idle sweep.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConnectionCap } from "../../daemon/limits/connection-cap.js";
import { ManualClock } from "../../shared/clock.js";

function table(max: number) {
  const clock = new ManualClock(10_000);
  const dropped: string[] = [];
  const cap = new ConnectionCap<string>(max, (k, why) => dropped.push(`${k}:${why}`), clock);
  return { cap, dropped, tick: (ms: number) => clock.advance(ms) };
}

test("at the cap the oldest idle connection goes; a busy one never does", () => {
  const { cap, dropped, tick } = table(3);
  for (const k of ["a", "b", "c"]) {
    assert.ok(cap.admit(k));
    tick(2000);
  }
  cap.begin("a"); // a call in flight on the oldest
  assert.ok(cap.admit("d"));
  assert.equal(dropped, ["b:cap"]);
  cap.end("a"); // a is now the most recently active
  tick(2000);
  assert.ok(cap.admit("e"));
  assert.equal(dropped, ["b:cap", "c:cap"]);
  assert.is(cap.size, 3);
});

test("lower ranks go first (a connection that never initialized before a client's before a TUI's)", () => {
  const { cap, dropped, tick } = table(3);
  cap.admit("tui", 2);
  tick(2000);
  cap.admit("cli", 1);
  tick(2000);
  cap.admit("fresh", 0);
  tick(2000);
  cap.admit("x", 0);
  cap.admit("y", 0);
  assert.equal(dropped, ["fresh:cap", "cli:cap"]);
});

test("a connection younger than a second is dropped only when nothing older is idle", () => {
  const { cap, dropped, tick } = table(2);
  cap.admit("old", 1);
  tick(5000);
  cap.admit("new", 0); // a CLI that has not sent initialize yet
  tick(10);
  cap.admit("flood1", 0);
  assert.equal(dropped, ["old:cap"]);
  tick(10);
  cap.admit("flood2", 0);
  assert.equal(dropped, ["old:cap", "new:cap"]);
});

test("in a fast flood, young clients that already initialized go before a new one still initializing (a CLI)", () => {
  const { cap, dropped, tick } = table(3);
  cap.admit("tui", 2);
  tick(5000);
  cap.admit("cli", 0); // connected, initialize not answered yet
  cap.admit("f1", 0);
  cap.setRank("f1", 1);
  tick(10);
  cap.admit("f2", 0);
  cap.setRank("f2", 1);
  assert.equal(dropped, ["f1:cap"]);
  tick(10);
  cap.admit("f3", 0);
  assert.equal(dropped, ["f1:cap", "f2:cap"]);
  assert.ok(!dropped.includes("cli:cap") && !dropped.includes("tui:cap"));
});

test("with every connection busy the new one is refused and counted", () => {
  const { cap, dropped } = table(2);
  cap.admit("a");
  cap.admit("b");
  cap.begin("a");
  cap.begin("b");
  assert.not.ok(cap.admit("c"));
  assert.equal(dropped, []);
  assert.is(cap.dropped.refused, 1);
});

test("the idle sweep drops connections idle too long, not busy or pinned (WebSocket) ones", () => {
  const { cap, dropped, tick } = table(10);
  cap.admit("idle");
  cap.admit("busy");
  cap.admit("ws");
  cap.pin("ws");
  cap.begin("busy");
  tick(6000);
  cap.admit("recent");
  assert.is(cap.sweep(5000), 1);
  assert.equal(dropped, ["idle:idle"]);
  cap.end("busy");
  tick(6000);
  cap.sweep(5000);
  assert.equal(dropped.sort(), ["busy:idle", "idle:idle", "recent:idle"]);
  assert.is(cap.size, 1);
});

test.run();

test("the cap's drops are logged once per 10 s, with the listener's name and the counts so far", () => {
  const { cap, tick } = table(1);
  const warnings: [string, unknown][] = [];
  const log = { warn: (message: string, fields?: unknown) => void warnings.push([message, fields]) };
  cap.admit("a");
  tick(2000);
  cap.admit("b"); // a goes
  cap.warnReached(log, "socket");
  tick(9000);
  cap.begin("b");
  assert.not.ok(cap.admit("c"), "refused: b is busy");
  cap.warnReached(log, "socket");
  assert.is(warnings.length, 1, "a second drop within 10 s is not logged");
  assert.equal(warnings[0], ["socket connection cap reached: the oldest idle connections are closed", { max_connections: 1, dropped: 1, refused: 0 }]);
  tick(1000);
  cap.warnReached(log, "gateway");
  assert.equal(warnings[1], ["gateway connection cap reached: the oldest idle connections are closed", { max_connections: 1, dropped: 1, refused: 1 }]);
});

// `agent kanban dispatch --failure-limit N` applies N to the runs it starts: a worker that exits
// non-zero N times blocks its task with gave_up, though kanban.failure_limit (5 here) would retry.
// The dispatcher's own ticks would start the retries themselves (without the flag's limit), so
// between the runs the assignee profile has no usable model: its task then waits, ready. The
// tick a run's end asks for is awaited (the daemon logs each tick at debug) before the model is
// made usable again, so only the CLI's dispatch can start the next run.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type Behaviour, eventTypes, type KanbanHome, kanbanHome, waitFor } from "./dispatch-helpers.js";

let h: KanbanHome;

/** The kanban log's lines. */
function logLines(): string[] {
  const file = join(h.home, "logs", "kanban.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n") : [];
}

test.before(async () => {
  h = await kanbanHome({ dispatch_interval_seconds: 3600, failure_limit: 5 }, "logs:\n  level: debug\n");
});

test.after(async () => {
  await h.dispose();
});

test("a worker that exits non-zero as many times as --failure-limit blocks its task with gave_up", async () => {
  const created = await h.cli(["profile", "create", "flaky", "--no-alias", "--json"]);
  assert.is(created.code, 0, created.stderr);
  const profileConfig = join(h.home, "profiles", "flaky", "config.yaml");
  const usable = (on: boolean) => writeFileSync(profileConfig, on ? "# the home's model\n" : 'model:\n  base_url: ""\n');
  usable(false);
  const marks = join(h.home, "marks");
  mkdirSync(marks, { recursive: true });
  const started = join(marks, "started");
  const release = join(marks, "release");
  // Step 0 waits for the test (so the profile is made unusable before the run ends), then the
  // model answers 500: with model.max_retries 0 the worker exits non-zero.
  const failsWhenReleased: Behaviour = (step) =>
    step === 0
      ? { toolCalls: [{ name: "terminal", arguments: { command: `touch ${started}; while [ ! -f ${release} ]; do sleep 0.1; done` } }] }
      : { status: 500, message: "the model is down" };
  const task = await h.task("fails twice", [failsWhenReleased], { assignee: "flaky" });
  const waiting = await h.cli(["kanban", "dispatch", "--dry-run", "--json"]);
  assert.match(JSON.parse(waiting.stdout).skipped.find((s: { task_id: string }) => s.task_id === task.id)?.reason ?? "", /no model/);

  for (const n of [1, 2]) {
    rmSync(started, { force: true });
    rmSync(release, { force: true });
    usable(true);
    const r = await h.cli(["kanban", "dispatch", "--failure-limit", "2", "--json"]);
    assert.is(r.code, 0, r.stderr);
    assert.ok(
      JSON.parse(r.stdout).spawned.some((s: { task_id: string }) => s.task_id === task.id),
      r.stdout,
    );
    await waitFor(`run ${n}'s tool running`, () => existsSync(started), 30_000);
    usable(false);
    writeFileSync(release, "");
    await h.waitTask(`run ${n} ended`, task.id, (t) => t.runs.length === n && t.runs[n - 1]!.ended_at !== null && t.consecutive_failures === n);
    // The dispatcher's own tick after the run's end, which found no model, is over.
    await waitFor(`the tick after run ${n}`, () => {
      const lines = logLines();
      const ended = lines.findLastIndex((l) => l.includes("worker ended"));
      return ended >= 0 && lines.slice(ended + 1).some((l) => l.includes("dispatch tick done"));
    });
  }
  const t = await h.waitTask("blocked", task.id, (x) => x.status === "blocked");
  assert.is(t.runs.length, 2);
  assert.ok(
    t.runs.every((r) => r.outcome === "crashed" && /exit code [1-9]/.test(r.detail ?? "")),
    JSON.stringify(t.runs),
  );
  assert.ok(eventTypes(t).includes("retry"), "the first failure retried");
  const gaveUp = t.events.find((e) => e.type === "gave_up");
  assert.ok(gaveUp, JSON.stringify(eventTypes(t)));
  assert.is(gaveUp!.data?.limit, 2);
  assert.match(t.reason ?? "", /gave up after 2 failure\(s\)/);
});

test.run();

// A worker's claim lasts kanban.claim_ttl_seconds past its last heartbeat: a worker that goes
// silent for longer is stopped (its group SIGTERMed, then SIGKILLed) and the run counts as timed_out.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { groupAlive, hangs, type KanbanHome, kanbanHome, waitFor } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome({ claim_ttl_seconds: 2, dispatch_interval_seconds: 0.3 });
});

test.after(async () => {
  await h.dispose();
});

test("a worker that sends no heartbeat within kanban.claim_ttl_seconds is stopped and its run counts as timed_out", async () => {
  const created = await h.task("silent", [hangs], { maxRetries: 1 });
  const running = await h.waitTask("running with a worker", created.id, (t) => t.status === "running" && t.runs[0]?.pid != null);
  const t = await h.waitTask("blocked", created.id, (x) => x.status === "blocked" && x.runs.every((r) => r.ended_at !== null));
  assert.is(t.runs[0]!.outcome, "timed_out");
  assert.match(t.runs[0]!.detail ?? "", /sent no heartbeat for 2 s \(kanban\.claim_ttl_seconds\)/);
  await waitFor("the worker's group gone", () => !groupAlive(running.runs[0]!.pgid!));
});

test.run();

// The dispatcher's caps (kanban.max_in_progress, kanban.max_in_progress_per_profile) and the
// report of `agent kanban dispatch`: what it started and why each ready task it left was left.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { hangs, type KanbanHome, kanbanHome } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome({ max_in_progress: 2, max_in_progress_per_profile: 1 });
  const r = await h.cli(["profile", "create", "writer", "--no-alias"]);
  assert.is(r.code, 0, r.stderr);
});

test.after(async () => {
  await h.dispose();
});

test("a profile at its cap keeps its next ready task waiting, and the dry run says why", async () => {
  const first = await h.task("first for default", [hangs]);
  await h.waitTask("running", first.id, (t) => t.status === "running" && t.runs[0]?.pid != null);
  const second = await h.task("second for default", [hangs]);
  const r = await h.cli(["kanban", "dispatch", "--dry-run"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /would start 0 worker\(s\)/);
  assert.match(r.stdout, new RegExp(`skipped 1:\\n  ${second.id}  profile default is at kanban\\.max_in_progress_per_profile \\(1 of 1 running\\)`));
  const report = JSON.parse((await h.cli(["kanban", "dispatch", "--dry-run", "--json"])).stdout);
  assert.equal(report.skipped, [
    { task_id: second.id, assignee: "default", reason: "profile default is at kanban.max_in_progress_per_profile (1 of 1 running)" },
  ]);
  assert.is((await h.show(second.id)).status, "ready");
});

test("with kanban.max_in_progress tasks running, every ready task waits, whatever its profile", async () => {
  const writer = await h.task("for the writer", [hangs], { assignee: "writer" });
  await h.waitTask("running", writer.id, (t) => t.status === "running" && t.runs[0]?.pid != null);
  const another = await h.task("another for the writer", [hangs], { assignee: "writer" });
  const report = await h.call("kanban.dispatch", {});
  assert.is(report.dryRun, false);
  assert.equal(report.spawned, []);
  const reasons = Object.fromEntries(report.skipped.map((s) => [s.task_id, s.reason]));
  assert.is(reasons[another.id], "kanban.max_in_progress reached (2 of 2 running)");
  assert.is(report.running, 2);
});

test("a task whose profile has no usable model stays ready, and the report says why", async () => {
  const r = await h.cli(["profile", "create", "offline", "--no-alias"]);
  assert.is(r.code, 0, r.stderr);
  writeFileSync(join(h.home, "profiles", "offline", "config.yaml"), 'model:\n  provider: nowhere\n  base_url: ""\n');
  const { task } = await h.call("kanban.create", { title: "for the offline profile", assignee: "offline" });
  const report = await h.call("kanban.dispatch", { dryRun: true });
  const skipped = report.skipped.find((s) => s.task_id === task.id);
  assert.match(skipped?.reason ?? "", /^profile offline has no model to run a worker: /, JSON.stringify(report));
  assert.is((await h.show(task.id)).status, "ready");
  assert.is((await h.show(task.id)).runs.length, 0);
});

test.run();

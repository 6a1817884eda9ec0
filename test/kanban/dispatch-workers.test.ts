// The dispatcher starts real worker processes (`agent chat --profile <assignee> -q "work kanban
// task <id>"`) against a real daemon; each worker's model is the fake model server, scripted per
// task. How each way a worker can end is classified (daemon/kanban/dispatch/).
import { existsSync, readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { blocks, completes, crashes, eventTypes, forgets, groupAlive, hangs, type KanbanHome, kanbanHome, rateLimited, waitFor } from "./dispatch-helpers.js";
import { WAKE_DELAY_MS } from "../../daemon/kanban/dispatch/dispatcher.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
});

test.after(async () => {
  await h.dispose();
});

const finished = (t: { status: string; runs: Array<{ ended_at: number | null }> }) => t.runs.length > 0 && t.runs.every((r) => r.ended_at !== null);

test("a worker that completes its task leaves it done with its summary, run in the task's workspace with the worker's environment", async () => {
  const created = await h.task("complete me", [completes("wrote the thing")]);
  const t = await h.waitTask("done with its run closed", created.id, (x) => x.status === "done" && finished(x));
  assert.is(t.summary, "wrote the thing");
  assert.is(t.result, "42");
  assert.is(t.consecutive_failures, 0);
  assert.is(t.runs.length, 1);
  assert.is(t.runs[0]!.profile, "default");
  assert.ok(t.runs[0]!.pid);
  // The worker's model saw its task in the system prompt and the worker tools, not the orchestrator's.
  const request = h.requestsOf(created.id)[0]!;
  assert.match(request.body.messages[0].content, new RegExp(`kanban task \\(${created.id}\\)`));
  const tools = request.body.tools.map((x: any) => x.function.name);
  for (const name of ["kanban_complete", "kanban_block", "kanban_comment", "kanban_heartbeat", "kanban_show", "kanban_list"])
    assert.ok(tools.includes(name), name);
  for (const name of ["kanban_create", "kanban_unblock", "kanban_link"]) assert.not.ok(tools.includes(name), name);
  // Its output (its final answer comes after kanban_complete) goes to the task's log, which `kanban.log` reads.
  let log = await h.call("kanban.log", { taskId: created.id });
  await waitFor("the worker's answer in its log", async () => /finished/.test((log = await h.call("kanban.log", { taskId: created.id })).text));
  assert.ok(log.path && existsSync(log.path));
  assert.match(log.text, new RegExp(`run ${t.runs[0]!.run_id} of ${created.id} as default`));
});

test("a worker that blocks leaves its task blocked with its reason", async () => {
  const created = await h.task("block me", [blocks("need the API key")]);
  const t = await h.waitTask("blocked with its run closed", created.id, (x) => x.status === "blocked" && finished(x));
  assert.match(t.reason ?? "", /need the API key/);
  assert.is(t.consecutive_failures, 0);
  assert.not.ok(eventTypes(t).includes("protocol_violation"));
});

test("a crashed worker counts one failure and its task runs again; at the limit the task is blocked with gave_up", async () => {
  const created = await h.task("crash me", [crashes], { maxRetries: 2 });
  const t = await h.waitTask("blocked after two crashes", created.id, (x) => x.status === "blocked" && finished(x), 60_000);
  assert.equal(
    t.runs.map((r) => r.outcome),
    ["crashed", "crashed"],
  );
  assert.match(t.runs[0]!.detail ?? "", /killed by signal 9|exit code 137/);
  assert.is(t.consecutive_failures, 2);
  assert.ok(eventTypes(t).includes("retry"));
  assert.ok(eventTypes(t).includes("gave_up"));
});

test("a worker that exits 0 without completing or blocking its task blocks it with protocol_violation", async () => {
  const created = await h.task("forget me", [forgets]);
  const t = await h.waitTask("blocked", created.id, (x) => x.status === "blocked" && finished(x));
  assert.is(t.runs[0]!.outcome, "exited_clean");
  assert.ok(eventTypes(t).includes("protocol_violation"));
  assert.is(t.consecutive_failures, 0);
});

test("a worker that exits 75 puts its task back to ready without counting a failure, and the next run completes it", async () => {
  const created = await h.task("rate limit me", [rateLimited, completes("second try")]);
  const t = await h.waitTask("done on the second run", created.id, (x) => x.status === "done" && finished(x));
  assert.equal(
    t.runs.map((r) => r.outcome),
    ["requeue", "completed"],
  );
  assert.ok(eventTypes(t).includes("requeued"));
  assert.is(t.consecutive_failures, 0);
  assert.is(t.summary, "second try");
});

test("a worker past its task's max_runtime is killed as a group and the run counts as timed_out", async () => {
  const created = await h.task("hang", [hangs], { maxRuntime: 1, maxRetries: 1 });
  const running = await h.waitTask("running with a worker", created.id, (x) => x.status === "running" && x.runs[0]?.pid != null);
  const pgid = running.runs[0]!.pgid!;
  const t = await h.waitTask("blocked after the timeout", created.id, (x) => x.status === "blocked" && finished(x));
  assert.is(t.runs[0]!.outcome, "timed_out");
  assert.match(t.runs[0]!.detail ?? "", /max_runtime/);
  assert.ok(eventTypes(t).includes("gave_up"));
  await waitFor("the worker's process group gone", () => !groupAlive(pgid));
});

test("kanban.dispatch on a dry run reports the ready task it would start, with no pid, and starts nothing", async () => {
  // A home of its own whose dispatcher cannot start the task first: no slot (max_in_progress 0)
  // while the task becomes ready, and no tick of its own for an hour once the slots are back.
  const dry = await kanbanHome({ max_in_progress: 0, dispatch_interval_seconds: 3600 });
  try {
    const created = await dry.task("dry", [completes("after the dry run")]);
    // The task's becoming ready woke the dispatcher: its tick comes WAKE_DELAY_MS later and must
    // find no slot, not the ones given back below (a CLI call as a process used to take longer).
    await new Promise((r) => setTimeout(r, WAKE_DELAY_MS * 6));
    await dry.call("kanban.dispatch", {});
    const held = await dry.call("kanban.dispatch", { dryRun: true });
    assert.equal(held.spawned, []);
    assert.equal(
      held.skipped.map((s) => [s.task_id, s.reason]),
      [[created.id, "kanban.max_in_progress reached (0 of 0 running)"]],
    );
    assert.is((await dry.cli(["config", "set", "kanban.max_in_progress", "4"])).code, 0);
    const report = await dry.call("kanban.dispatch", { dryRun: true });
    assert.is(report.dryRun, true);
    assert.equal(report.spawned, [{ task_id: created.id, assignee: "default", run_id: null, pid: null }]);
    assert.equal(report.skipped, []);
    // It started nothing: the task is still ready, with no run, and no worker asked the model.
    const after = await dry.show(created.id);
    assert.is(after.status, "ready");
    assert.equal(after.runs, []);
    assert.equal(dry.requestsOf(created.id), []);
    // The same tick for real starts the worker the dry run named.
    const real = await dry.call("kanban.dispatch", {});
    assert.is(real.dryRun, false);
    assert.equal(
      real.spawned.map((s) => s.task_id),
      [created.id],
    );
    assert.ok(real.spawned[0]!.pid);
    const t = await dry.waitTask("done", created.id, (x) => x.status === "done" && finished(x));
    assert.is(t.summary, "after the dry run");
  } finally {
    await dry.dispose();
  }
});

test("a worker's per-task log is rotated when the next run starts", async () => {
  const created = await h.task("two runs", [rateLimited, completes()]);
  const t = await h.waitTask("done", created.id, (x) => x.status === "done" && finished(x));
  const path = t.runs[1]!.log_path!;
  assert.match(readFileSync(path, "utf8"), new RegExp(`run ${t.runs[1]!.run_id}`));
  assert.match(readFileSync(`${path}.1`, "utf8"), new RegExp(`run ${t.runs[0]!.run_id}`));
});

test("reclaiming a running task stops its worker, and the next worker completes it", async () => {
  const created = await h.task("reclaim me", [hangs, completes("second worker")]);
  const running = await h.waitTask("running with a worker", created.id, (x) => x.status === "running" && x.runs[0]?.pid != null);
  await waitFor("the first worker's model call", () => h.requestsOf(created.id).length > 0);
  const r = await h.cli(["kanban", "reclaim", created.id]);
  assert.is(r.code, 0, r.stderr);
  await waitFor("the reclaimed worker's group gone", () => !groupAlive(running.runs[0]!.pgid!));
  const t = await h.waitTask("done by the next worker", created.id, (x) => x.status === "done" && finished(x));
  assert.equal(
    t.runs.map((x) => x.outcome),
    ["reclaimed", "completed"],
  );
  assert.is(t.consecutive_failures, 0);
});

test.run();

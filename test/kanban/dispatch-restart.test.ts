// A daemon killed with kill -9 while its workers run: at the next start the dispatcher reconciles
// the runs the board thought live (adopting workers that still run, classifying those that
// ended meanwhile from their recorded exit status), so no task is lost or run twice at once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Task } from "../../shared/protocol/kanban.js";
import { type Behaviour, completes, groupAlive, hangs, type KanbanHome, kanbanHome, waitFor } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  // A worker whose daemon is gone waits for it to come back (30 s by default) before failing: 2 s here.
  h = await kanbanHome({}, "", { AGENT_WORKER_RECONNECT_MS: "2000" });
});

test.after(async () => {
  await h.dispose();
});

async function killDaemon(): Promise<void> {
  const status = await h.cli(["daemon", "status", "--json"]);
  const { pid } = JSON.parse(status.stdout) as { pid: number };
  process.kill(pid, "SIGKILL");
  await waitFor("the daemon gone", () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
}

async function restartDaemon(): Promise<void> {
  const r = await h.cli(["daemon", "start"]);
  assert.is(r.code, 0, r.stderr);
}

/** Runs never overlap: each starts after the one before it ended. */
function sequential(t: Task): boolean {
  return t.runs.every((r, i) => i === 0 || (t.runs[i - 1]!.ended_at !== null && r.started_at >= t.runs[i - 1]!.ended_at!));
}

/** The model answers slowly (about 3 s), then the worker completes: it is still running when the daemon dies. */
const slowThenComplete: Behaviour = (step) =>
  step === 0
    ? { text: "x".repeat(30), chunkChars: 1, chunkDelayMs: 100, toolCalls: [{ name: "kanban_complete", arguments: { summary: "late" } }] }
    : { text: "ok" };

test("a worker still running when the daemon is killed is adopted at the next start and supervised to its end", async () => {
  const created = await h.task("survive a kill -9", [hangs, completes("after the restart")], { maxRuntime: 4, maxRetries: 3 });
  const running = await h.waitTask("running with a worker", created.id, (t) => t.status === "running" && t.runs[0]?.pid != null);
  // The worker is connected to the daemon once its model call arrives.
  await waitFor("the worker's model call", () => h.requestsOf(created.id).length > 0);
  await killDaemon();
  assert.ok(groupAlive(running.runs[0]!.pgid!), "the worker outlives the daemon");
  await restartDaemon();
  const t = await h.waitTask("done after the restart", created.id, (x) => x.status === "done" && x.runs.every((r) => r.ended_at !== null), 60_000);
  assert.is(t.runs.length, 2);
  assert.ok(["timed_out", "crashed"].includes(t.runs[0]!.outcome), t.runs[0]!.outcome);
  assert.ok(sequential(t), "the second run started only after the first ended");
  await waitFor("the first worker gone", () => !groupAlive(running.runs[0]!.pgid!));
  const same = (await h.call("kanban.list", { all: true })).tasks.filter((x) => x.title === "survive a kill -9");
  assert.is(same.length, 1);
});

test("a worker that ends while the daemon is down is classified from its recorded exit status at the next start", async () => {
  const created = await h.task("end while down", [slowThenComplete, completes("second run")], { maxRetries: 3 });
  const running = await h.waitTask("running with a worker", created.id, (t) => t.status === "running" && t.runs[0]?.pid != null);
  // The worker is connected to the daemon once its model call arrives.
  await waitFor("the worker's model call", () => h.requestsOf(created.id).length > 0);
  await killDaemon();
  // The worker finishes its model call, then finds the daemon gone and exits with an error.
  await waitFor("the worker gone", () => !groupAlive(running.runs[0]!.pgid!), 30_000);
  await restartDaemon();
  const t = await h.waitTask("done after the restart", created.id, (x) => x.status === "done" && x.runs.every((r) => r.ended_at !== null), 60_000);
  assert.is(t.runs[0]!.outcome, "crashed");
  assert.match(t.runs[0]!.detail ?? "", /exit code \d+/);
  assert.is(t.consecutive_failures, 0, "completion resets the failure counter");
  assert.is(t.summary, "second run");
  assert.ok(sequential(t));
});

test("a daemon killed right as it claims a task recovers it: the task is done once, never run twice at a time", async () => {
  const { task } = await h.call("kanban.create", { title: "killed mid-dispatch", triage: true });
  h.behave(task.id, [completes("after the kill")]);
  // Kill the daemon the moment the claim is announced: before, during or just after the spawn.
  const { pid } = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
  await h.call("events.subscribe", { topics: ["kanban.event"] });
  const claimed = new Promise<void>((resolve) => {
    h.client.onEvent((e) => {
      const event = e.data as { task_id?: string; type?: string };
      if (event.task_id === task.id && event.type === "claimed") {
        process.kill(pid, "SIGKILL");
        resolve();
      }
    });
  });
  await h.call("kanban.promote", { ids: [task.id] });
  await claimed;
  await restartDaemon();
  const t = await h.waitTask("done after the restart", task.id, (x) => x.status === "done" && x.runs.every((r) => r.ended_at !== null), 60_000);
  assert.ok(sequential(t));
  assert.ok(t.runs.length >= 1 && t.runs.length <= 2, `${t.runs.length} runs`);
  assert.is((await h.call("kanban.list", { all: true })).tasks.filter((x) => x.title === "killed mid-dispatch").length, 1);
});

test.run();

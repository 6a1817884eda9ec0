// A daemon restarted while a worker runs: the worker's socket drops, its next calls connect to
// the new daemon (which adopted the run), and the worker completes its task in the same run.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type Behaviour, type KanbanHome, kanbanHome, waitFor } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
});

test.after(async () => {
  await h.dispose();
});

test("a worker whose daemon restarts mid-task reconnects and completes the task in the same run", async () => {
  const started = join(h.home, "tool-started");
  const go = join(h.home, "go");
  // Step 0: a tool that waits for the test; the daemon restarts meanwhile. Step 1: complete.
  const waitsThenCompletes: Behaviour = (step) =>
    step === 0
      ? { toolCalls: [{ name: "terminal", arguments: { command: `touch ${started}; while [ ! -f ${go} ]; do sleep 0.1; done; echo went` } }] }
      : step === 1
        ? { toolCalls: [{ name: "kanban_complete", arguments: { summary: "finished across a restart" } }] }
        : { text: "all done" };
  const created = await h.task("survive a restart", [waitsThenCompletes]);
  await waitFor("the worker's tool running", () => existsSync(started), 30_000);
  const before = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
  const restarted = await h.cli(["daemon", "restart"]);
  assert.is(restarted.code, 0, restarted.stderr);
  const after = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
  assert.is.not(after.pid, before.pid, "a new daemon");
  writeFileSync(go, "");
  const t = await h.waitTask("done", created.id, (x) => x.status === "done" && x.runs.every((r) => r.ended_at !== null), 60_000);
  assert.is(t.summary, "finished across a restart");
  assert.is(t.runs.length, 1, "completed by the run that started before the restart");
  assert.is(t.runs[0]!.outcome, "completed");
  assert.is(t.consecutive_failures, 0);
  // The worker's transcript holds the tool's result, appended through the new daemon.
  const toolResults = h.requestsOf(created.id).flatMap((r) => (r.body?.messages ?? []).filter((m: any) => m.role === "tool"));
  assert.ok(
    toolResults.some((m: any) => String(m.content).includes("went")),
    "the tool's output reached the model after the restart",
  );
});

test.run();

// Run history is bounded per job (AGENT_CRON_KEEP_RUNS lowers the cap of 200 for the test), and a
// prompt run's session goes with its run: dropped past the cap, or with its job.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { CronRun } from "../../shared/protocol/cron.js";
import { cronHome } from "./helpers.js";

const h = await cronHome({ respond: () => ({ text: "pong" }) }, { AGENT_CRON_KEEP_RUNS: "3" });
test.after(() => h.dispose());

async function cronSessions(): Promise<string[]> {
  const r = await h.cli(["sessions", "list", "--kind", "cron", "--limit", "100", "--json"]);
  assert.is(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout).sessions as Array<{ id: string }>).map((s) => s.id).sort();
}

/** `agent cron run <id>`; the run as the RPC table has it (the CLI's JSON is snake_case). */
async function runNow(id: string): Promise<CronRun> {
  const { run } = await h.cron<{ run: { run_id: string } }>(["run", id]);
  const found = (await h.runs(id)).find((r) => r.runId === run.run_id);
  if (!found) throw new Error(`agent cron run answered ${run.run_id}, which cron.logs does not have`);
  return found;
}

test("only the newest runs of a job are kept, newest first, and the sessions of dropped runs are deleted", async () => {
  const job = await h.add(["every 1d", "report the weather", "--paused"]);
  const runs: CronRun[] = [];
  for (let i = 0; i < 5; i++) runs.push(await runNow(job.id));
  assert.ok(
    runs.every((r) => r.status === "ok" && r.sessionId),
    JSON.stringify(runs.map((r) => [r.status, r.error])),
  );
  const { runs: kept } = await h.cron<{ runs: Array<{ run_id: string; output: string }> }>(["logs", job.id, "--limit", "10"]);
  assert.equal(
    kept.map((r) => r.run_id),
    runs
      .slice(2)
      .reverse()
      .map((r) => r.runId),
  );
  assert.is(kept[0]!.output, "pong");
  const { runs: newest } = await h.cron<{ runs: Array<{ run_id: string }> }>(["logs", job.id, "--limit", "1"]);
  assert.equal(
    newest.map((r) => r.run_id),
    [runs[4]!.runId],
  );
  assert.equal(
    await cronSessions(),
    runs
      .slice(2)
      .map((r) => r.sessionId!)
      .sort(),
  );
  const gone = await h.cli(["sessions", "show", runs[0]!.sessionId!]);
  assert.is.not(gone.code, 0, "the session of a dropped run is gone");
  await h.cron(["remove", job.id]);
});

test("removing a job deletes its runs' sessions", async () => {
  const job = await h.add(["every 1d", "count the stars", "--paused"]);
  const run = await runNow(job.id);
  assert.ok((await cronSessions()).includes(run.sessionId!));
  await h.cron(["remove", job.id]);
  assert.not.ok((await cronSessions()).includes(run.sessionId!));
});

test("the cap holds across a restart: runs recorded before it are still counted", async () => {
  const job = await h.add(["every 1d", "--script", "echo tick", "--paused"]);
  const before: CronRun[] = [];
  for (let i = 0; i < 3; i++) before.push(await runNow(job.id));
  await h.restart();
  const after = await runNow(job.id);
  const { runs } = await h.cron<{ runs: Array<{ run_id: string }> }>(["logs", job.id, "--limit", "10"]);
  assert.equal(
    runs.map((r) => r.run_id),
    [after.runId, before[2]!.runId, before[1]!.runId],
  );
  await h.cron(["remove", job.id]);
});

test.run();

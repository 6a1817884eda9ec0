import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI } from "../helpers/cli.js";
import { cronHome, waitFor } from "./helpers.js";

const MIN = 60_000;
const h = await cronHome();
test.after(() => h.dispose());

test("after a restart 33 minutes later, each missed job runs once within its catch-up window and older misses are skipped", async () => {
  const script = (name: string) => ["--script", `echo ${name}`, "--name", name];
  const a = await h.add(["every 30m", ...script("a")]); // due at +30: 3 min late, window 15 min: runs
  const b = await h.add(["every 10m", ...script("b")]); // due at +10, +20, +30: the one at +30 runs, two skipped
  const c = await h.add(["every 20m", ...script("c")]); // due at +20: 13 min late, window 10 min: skipped
  const e = await h.add(["20m", ...script("e")]); // a one-shot 13 min late: runs (window 2 h)
  const d = await h.add(["every 33m10s", ...script("d")]); // due just after the restart: fires from its stored time
  // The daemon is stopped and started again with its clock 33 minutes on (the test-only AGENT_CRON_CLOCK_OFFSET_MS).
  await h.restart({ AGENT_CRON_CLOCK_OFFSET_MS: String(33 * MIN) });
  const [dRun] = await h.waitRuns(d.id, 1);
  assert.is(dRun!.scheduledAt, d.nextRunAt, "the stored fire time survived the restart");

  const [aRun, ...aMore] = await h.runs(a.id);
  assert.is(aMore.length, 0, "one run, no burst");
  assert.is(aRun!.status, "ok");
  assert.is(aRun!.trigger, "catch-up");
  assert.is(aRun!.scheduledAt, a.nextRunAt);

  const bRuns = await h.runs(b.id);
  assert.is(bRuns.filter((r) => r.status === "ok").length, 1, JSON.stringify(bRuns));
  const bSkipped = bRuns.filter((r) => r.status === "skipped");
  assert.is(bSkipped.length, 1);
  assert.is(bSkipped[0]!.skipped, 2);
  assert.is(bRuns.find((r) => r.status === "ok")!.scheduledAt, b.nextRunAt! + 20 * MIN, "the latest missed fire time runs");
  assert.is((await h.job(b.id)).nextRunAt, b.nextRunAt! + 30 * MIN);

  const cRuns = await h.runs(c.id);
  assert.is(cRuns.length, 1);
  assert.is(cRuns[0]!.status, "skipped");
  assert.match(cRuns[0]!.error!, /longer ago than the catch-up window/);
  const cJob = await h.job(c.id);
  assert.is(cJob.lastStatus, "skipped");
  assert.is(cJob.nextRunAt, c.nextRunAt! + 20 * MIN, "the schedule goes on");

  const eRuns = await h.runs(e.id);
  assert.is(eRuns.length, 1);
  assert.is(eRuns[0]!.status, "ok");
  assert.is((await h.job(e.id)).finished, true);
});

test("a run cut off by a daemon stop is recorded as interrupted, and the job keeps its schedule", async () => {
  const job = await h.add(["every 1d", "--script", "echo long; sleep 60"]);
  // `agent cron run` waits for the run; it is left to fail when the daemon stops.
  const runner = spawn(process.execPath, [CLI, "cron", "run", job.id], { env: { ...process.env, ...h.env, AGENT_HOME: h.home }, stdio: "ignore" });
  try {
    await waitFor("the run to start", async () => (await h.job(job.id)).running !== null);
    await h.restart();
    const [run] = await h.runs(job.id);
    assert.is(run!.status, "interrupted");
    assert.is(run!.error, "the daemon stopped during the run");
    const after = await h.job(job.id);
    assert.is(after.running, null);
    assert.is(after.enabled, true);
    assert.is(after.nextRunAt, job.nextRunAt);
  } finally {
    runner.kill();
  }
});

test("a run the daemon was killed in (kill -9) is recorded as interrupted at the next start", async () => {
  const pidFile = join(h.home, "killed.pid");
  const job = await h.add(["every 1d", "--script", `echo $$ > ${pidFile}; sleep 60`]);
  const runner = spawn(process.execPath, [CLI, "cron", "run", job.id], { env: { ...process.env, ...h.env, AGENT_HOME: h.home }, stdio: "ignore" });
  try {
    await waitFor("the run to start", async () => (await h.job(job.id)).running !== null && existsSync(pidFile));
    const status = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
    process.kill(status.pid, "SIGKILL");
    await waitFor("the daemon to be gone", () => {
      try {
        process.kill(status.pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    await h.restart();
    const [run] = await h.runs(job.id);
    assert.is(run!.status, "interrupted");
    assert.is(run!.error, "the daemon stopped during the run");
    assert.is((await h.job(job.id)).running, null);
  } finally {
    runner.kill();
    // The script's process group outlived the killed daemon.
    try {
      process.kill(-Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    } catch {}
  }
});

test.run();

import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { commandJournalDir } from "../../daemon/process/command-journal.js";
import { hasProc, isAlive, processGroupMembers } from "../../shared/process.js";
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
  // The daemon is stopped and started again with its clock 33 minutes on (the test-only
  // AGENT_CRON_CLOCK_OFFSET_MS), running ten times as fast from there (AGENT_CRON_CLOCK_RATE), so
  // d's fire time, seconds of cron's time after the start, comes in a tenth of them.
  await h.restart({ AGENT_CRON_CLOCK_OFFSET_MS: String(33 * MIN), AGENT_CRON_CLOCK_RATE: "10" });
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

// Process groups are told apart by /proc (Linux); elsewhere nothing is reaped, and this cannot be shown.
(hasProc() ? test : test.skip)("a script the daemon was killed in (kill -9) is stopped by the next start, and its run is recorded as interrupted", async () => {
  const pidFile = join(h.home, "killed.pid");
  const job = await h.add(["every 1d", "--script", `echo $$ > ${pidFile}; sleep 60`]);
  const runner = spawn(process.execPath, [CLI, "cron", "run", job.id], { env: { ...process.env, ...h.env, AGENT_HOME: h.home }, stdio: "ignore" });
  let pgid = 0;
  try {
    await waitFor("the run to start", async () => (await h.job(job.id)).running !== null && existsSync(pidFile));
    // The script's shell leads its own process group: it and its `sleep` are the group.
    pgid = await waitFor("the script's pid", () => Number(readFileSync(pidFile, "utf8")) || 0);
    await waitFor("the script and its sleep", () => processGroupMembers(pgid).length >= 2);
    const status = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
    process.kill(status.pid, "SIGKILL");
    await waitFor("the daemon to be gone", () => !isAlive(status.pid));
    assert.ok(processGroupMembers(pgid).length >= 2, "the killed daemon left the script running");

    await h.restart();
    await waitFor("the next start to stop the script's whole group", () => processGroupMembers(pgid).length === 0);
    const [run] = await h.runs(job.id);
    assert.is(run!.status, "interrupted");
    assert.is(run!.error, "the daemon stopped during the run");
    assert.is((await h.job(job.id)).running, null);
    const cli = await h.cli(["cron", "logs", job.id]);
    assert.match(cli.stdout, /interrupted/);
    await waitFor("the script's record to go", () => readdirSync(commandJournalDir(h.home)).every((f) => !f.startsWith(`${pgid}.`)));
  } finally {
    runner.kill();
    // Only after a failure is anything left to clean up.
    if (pgid && processGroupMembers(pgid).length) process.kill(-pgid, "SIGKILL");
  }
});

test.run();

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { rpcConnect } from "../helpers/cli.js";
import { cronHome, waitFor } from "./helpers.js";

const lastUser = (body: any): string => {
  const users = (body?.messages ?? []).filter((m: { role: string }) => m.role === "user");
  const c = users[users.length - 1]?.content;
  return typeof c === "string" ? c : JSON.stringify(c);
};

/**
 * The daemon's cron clock runs this many times as fast as the wall clock (the test-only
 * AGENT_CRON_CLOCK_RATE): every schedule, run time and run timeout below is in cron's time, so an
 * "every 1s" job fires every 100 ms of real time, and the 30 s run timeouts are 3 s of it (a
 * prompt run must have time to finish, and the gated manual script run below too).
 */
const RATE = 10;

// One daemon for the file: prompts containing FAIL get a 400 from the model, others "pong".
const h = await cronHome(
  {
    respond: (req) =>
      lastUser(req.body).includes("FAIL")
        ? { status: 400, message: "the model refuses" }
        : lastUser(req.body).includes("STALL")
          ? { stall: true, text: "thinking" }
          : { text: "pong" },
  },
  { AGENT_CRON_SCRIPT_TIMEOUT: "30", AGENT_CRON_TIMEOUT: "30", AGENT_CRON_CLOCK_RATE: String(RATE) },
);
test.after(() => h.dispose());

/**
 * Remove a recurring job: paused first and its last run waited for (a job is not removed while it
 * runs, and at this clock rate a recurring job is nearly always about to run).
 */
async function removeJob(id: string): Promise<void> {
  await h.cron(["pause", id]);
  await waitFor(`the last run of ${id} to end`, async () => (await h.job(id)).running === null);
  await h.cron(["remove", id]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("a refused schedule exits 1, lists the valid forms and adds nothing", async () => {
  const before = await h.cron(["list"]);
  for (const bad of ["hourly", "every 5 minutes", "0 9 * *", "2020-01-01T09:00Z"]) {
    const r = await h.cli(["cron", "add", bad, "say hi"]);
    assert.is(r.code, 1, `${bad}: ${r.stderr}`);
    assert.match(r.stderr, /valid forms: "every 30m".*five-field cron expression.*ISO time.*duration such as "45m"/s);
  }
  const noPrompt = await h.cli(["cron", "add", "every 1h"]);
  assert.is(noPrompt.code, 1);
  assert.match(noPrompt.stderr, /needs a prompt/);
  const badDeliver = await h.cli(["cron", "add", "every 1h", "x", "--deliver", "carrier-pigeon"]);
  assert.is(badDeliver.code, 1);
  assert.match(badDeliver.stderr, /none, file:<absolute path>, <platform>:<chat> or channel:<platform>:<chat>/);
  const unknown = await h.cli(["cron", "pause", "c_00000000"]);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /no cron job c_00000000/);
  assert.equal((await h.cron(["list"])).jobs, before.jobs);
});

test("a prompt job fires on time, each run in a fresh session of kind cron", async () => {
  const job = await h.add(["every 2s", "ping the build"]);
  try {
    const runs = await h.waitRuns(job.id, 2);
    const [a, b] = runs.filter((r) => r.status !== "skipped");
    assert.is(a!.status, "ok", a!.error ?? "");
    assert.is(a!.output, "pong");
    assert.is(a!.trigger, "schedule");
    assert.is(a!.scheduledAt, job.nextRunAt);
    assert.ok(a!.startedAt - a!.scheduledAt < 1500, `late by ${a!.startedAt - a!.scheduledAt} ms`);
    assert.ok(b!.scheduledAt > a!.scheduledAt && (b!.scheduledAt - a!.scheduledAt) % 2000 === 0, "fire times follow the interval, not the run times");
    assert.is.not(a!.sessionId, b!.sessionId);
    const { rpc, close } = await rpcConnect(h.home);
    try {
      const { actors } = (await rpc.sendRequest("actors.list", { name: "session", namespace: "default" })) as {
        actors: Array<{ actor_id: string; key: string }>;
      };
      const actor = actors.find((x) => x.key === a!.sessionId)!;
      const { state } = (await rpc.sendRequest("actors.state", { actorId: actor.actor_id })) as { state: { kind: string; title: string } };
      assert.is(state.kind, "cron");
      assert.match(state.title, /^cron: ping the build/);
    } finally {
      close();
    }
  } finally {
    await removeJob(job.id);
  }
});

test("pause stops a job from firing and resume starts it again", async () => {
  const job = await h.add(["every 1s", "--script", "echo paused-job"]);
  const sibling = await h.add(["every 1s", "--script", "echo sibling"]);
  try {
    await h.waitRuns(job.id, 1);
    const paused = (await h.cron(["pause", job.id])).job;
    assert.is(paused.enabled, false);
    const count = (await h.runs(job.id)).length;
    // The sibling fires every second: three more of its runs means the paused job missed fire times.
    const siblingRuns = (await h.runs(sibling.id)).length;
    await waitFor("three more sibling runs", async () => (await h.runs(sibling.id)).length >= siblingRuns + 3);
    assert.is((await h.runs(job.id)).length, count, "no run while paused");
    assert.match((await h.cli(["cron", "list"])).stdout, new RegExp(`${job.id}.*paused`));
    const resumed = (await h.cron(["resume", job.id])).job;
    assert.is(resumed.enabled, true);
    assert.ok(resumed.next_run_at > Date.now() - 1000);
    await waitFor("a run after resume", async () => (await h.runs(job.id)).length > count);
  } finally {
    await removeJob(job.id);
    await removeJob(sibling.id);
  }
});

test("a failing job records its error and keeps its schedule", async () => {
  const job = await h.add(["every 1s", "--script", "echo broken; exit 3"]);
  try {
    const runs = await h.waitRuns(job.id, 2);
    for (const r of runs.filter((x) => x.status !== "skipped")) {
      assert.is(r.status, "error");
      assert.is(r.error, "the script exited with code 3");
      assert.is(r.output, "broken\n");
    }
    const j = await h.job(job.id);
    assert.is(j.enabled, true);
    assert.is(j.lastStatus, "error");
    assert.is(j.lastError, "the script exited with code 3");
    assert.ok(j.nextRunAt! > j.lastRunAt!, "still scheduled");
    assert.match((await h.cli(["cron", "list"])).stdout, /error .*: the script exited with code 3/);
  } finally {
    await removeJob(job.id);
  }
});

test("a prompt job whose model call fails records the model's error and runs again", async () => {
  const job = await h.add(["every 1s", "FAIL on purpose"]);
  try {
    const runs = (await h.waitRuns(job.id, 2)).filter((r) => r.status !== "skipped");
    assert.is(runs[0]!.status, "error");
    assert.match(runs[0]!.error!, /the model refuses|400/);
    assert.is(runs[1]!.status, "error");
    assert.is((await h.job(job.id)).enabled, true);
  } finally {
    await removeJob(job.id);
  }
});

test("a prompt run past AGENT_CRON_TIMEOUT is interrupted and recorded as timed out", async () => {
  const job = await h.add(["1s", "STALL here"]);
  const [run] = await h.waitRuns(job.id, 1, 20_000);
  assert.is(run!.status, "timeout");
  assert.match(run!.error!, /timed out after 30 s \(AGENT_CRON_TIMEOUT\)/);
  assert.ok(run!.finishedAt - run!.startedAt >= 30_000);
  assert.ok(run!.sessionId, "the session stays, with what the turn did");
  assert.is((await h.job(job.id)).lastStatus, "timeout");
  await h.cron(["remove", job.id]);
});

test("a prompt job loads its skills into the prompt and uses its model override and workdir", async () => {
  mkdirSync(join(h.home, "skills", "standup"), { recursive: true });
  writeFileSync(join(h.home, "skills", "standup", "SKILL.md"), "---\nname: standup\ndescription: daily standup notes\n---\nList yesterday's commits.\n");
  const unknown = await h.cli(["cron", "add", "every 1d", "x", "--skill", "no-such-skill"]);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /no skill or bundle named "no-such-skill"/);
  const workdir = join(h.home, "work");
  mkdirSync(workdir);
  const job = await h.add(["every 1d", "for the team", "--skill", "standup", "--model", "other-model", "--workdir", workdir]);
  const seen = h.fake.requests.length;
  const { run } = await h.cron(["run", job.id]);
  assert.is(run.status, "ok", run.error);
  const req = h.fake.requests.slice(seen).find((r) => lastUser(r.body).includes("List yesterday's commits."))!;
  assert.ok(req, "the skill's instructions reached the model");
  assert.match(lastUser(req.body), /List yesterday's commits\.[\s\S]*for the team/);
  assert.is(req.body.model, "other-model");
  assert.ok(JSON.stringify(req.body.messages[0]).includes(workdir), "the session works in the job's workdir");
  const script = await h.add(["every 1d", "--script", "pwd", "--workdir", workdir]);
  assert.is((await h.cron(["run", script.id])).run.output, `${workdir}\n`);
  await h.cron(["remove", job.id]);
  await h.cron(["remove", script.id]);
});

test("runs of one job never overlap: a fire time during a run is skipped", async () => {
  const log = join(h.home, "overlap.log");
  // Each run takes 2 s of cron's time, twice the interval.
  const job = await h.add(["every 1s", "--script", `echo start $(date +%s%N) >> ${log}; sleep ${2 / RATE}; echo end $(date +%s%N) >> ${log}`]);
  try {
    const runs = await waitFor(
      "three finished runs and a skipped fire time",
      async () => {
        const all = await h.runs(job.id);
        return all.filter((r) => r.status === "ok").length >= 3 && all.some((r) => r.status === "skipped") && all;
      },
      30_000,
    );
    assert.match(runs.find((r) => r.status === "skipped")!.error!, /previous run .* was still running/);
    await h.cron(["pause", job.id]);
    await waitFor("the last run to end", async () => (await h.job(job.id)).running === null);
    const events = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" ") as [string, string]);
    for (let i = 0; i < events.length; i++) assert.is(events[i]![0], i % 2 === 0 ? "start" : "end", `event ${i} of ${JSON.stringify(events)}`);
    for (let i = 2; i < events.length; i += 2) assert.ok(BigInt(events[i]![1]) >= BigInt(events[i - 1]![1]), "a run started before the previous one ended");
  } finally {
    await removeJob(job.id);
  }
});

test("agent cron run of a job that is running is refused with exit 1", async () => {
  // The run lasts until the test opens its gate, after the second `cron run` was answered.
  const gate = join(h.home, "refused.gate");
  const job = await h.add(["every 1d", "--script", `while [ ! -e ${gate} ]; do sleep 0.05; done`]);
  const first = h.cli(["cron", "run", job.id]);
  try {
    await waitFor("the job running", async () => (await h.job(job.id)).running !== null);
    const refused = await h.cli(["cron", "run", job.id]);
    assert.is(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /already running .*never overlap/);
    writeFileSync(gate, "");
    assert.is((await first).code, 0);
    assert.is((await h.runs(job.id)).length, 1);
  } finally {
    writeFileSync(gate, "");
    await first;
    await h.cron(["remove", job.id]);
  }
});

test("a script running past AGENT_CRON_SCRIPT_TIMEOUT is killed and recorded as timed out", async () => {
  const pidFile = join(h.home, "script.pid");
  const job = await h.add(["1s", "--script", `echo $$ > ${pidFile}; echo started; sleep 30 & wait`]);
  const [run] = await h.waitRuns(job.id, 1, 15_000);
  assert.is(run!.status, "timeout");
  assert.match(run!.error!, /timed out after 30 s \(AGENT_CRON_SCRIPT_TIMEOUT\)/);
  assert.is(run!.output, "started\n");
  assert.ok(run!.finishedAt - run!.startedAt >= 30_000);
  const pid = Number(readFileSync(pidFile, "utf8"));
  await waitFor("the script's process to be gone", () => !alive(pid));
  const j = await h.job(job.id);
  assert.is(j.finished, true, "a one-shot is finished after its run");
  assert.is(j.lastStatus, "timeout");
  await h.cron(["remove", job.id]);
});

test("output is delivered to a file; a channel without a messaging adapter is recorded as not deliverable", async () => {
  const file = join(h.home, "out", "report.md");
  const toFile = await h.add(["1s", "--script", "echo report body", "--name", "reporter", "--deliver", `file:${file}`]);
  const toChannel = await h.add(["1s", "--script", "echo for the team", "--deliver", "channel:team-room"]);
  const [a] = await h.waitRuns(toFile.id, 1);
  const [b] = await h.waitRuns(toChannel.id, 1);
  assert.equal(a!.delivery, { status: "delivered", detail: file });
  assert.match(readFileSync(file, "utf8"), new RegExp(`^## reporter \\(${toFile.id}\\): ok at .*\\n\\nreport body\\n`));
  assert.is(b!.delivery.status, "not_deliverable");
  // No adapter runs (and "team-room" names no platform chat): not deliverable, with the reason.
  assert.match(b!.delivery.detail!, /"team-room" names no chat; use <platform>:<chat>/);
  assert.is(b!.output, "for the team\n", "the output is kept");
  const logs = await h.cli(["cron", "logs", toChannel.id]);
  assert.match(logs.stdout, /delivery: not_deliverable/);
  await h.cron(["remove", toFile.id]);
  await h.cron(["remove", toChannel.id]);
});

test("agent cron run runs a job now and keeps its schedule", async () => {
  const job = await h.add(["every 1d", "--script", "echo by hand"]);
  const r = await h.cli(["cron", "run", job.id, "--json"]);
  assert.is(r.code, 0, r.stderr);
  const { run, job: after } = JSON.parse(r.stdout);
  assert.is(run.trigger, "manual");
  assert.is(run.output, "by hand\n");
  assert.is(after.next_run_at, job.nextRunAt);
  await h.cron(["remove", job.id]);
});

test("edit changes a job's schedule and fields; a bad edit changes nothing", async () => {
  const job = await h.add(["every 1d", "first prompt", "--name", "editable"]);
  const edited = (await h.cron(["edit", job.id, "--schedule", "every 2h", "--prompt", "second prompt"])).job;
  assert.is(edited.schedule, "every 2h");
  assert.equal(edited.parsed, { kind: "every", ms: 7_200_000 });
  assert.is(edited.prompt, "second prompt");
  const bad = await h.cli(["cron", "edit", job.id, "--schedule", "whenever", "--name", "renamed"]);
  assert.is(bad.code, 1);
  const still = await h.job(job.id);
  assert.is(still.name, "editable");
  assert.is(still.schedule, "every 2h");
  const both = await h.cli(["cron", "edit", job.id, "--script", "ls"]);
  assert.is(both.code, 1);
  assert.match(both.stderr, /a prompt \(with skills\) or a script, not both/);
  await h.cron(["remove", job.id]);
});

test("/cron in the chat lists the profile's jobs", async () => {
  const job = await h.add(["every 1d", "--script", "echo x", "--name", "chat-visible"]);
  const r = await h.chat([], { input: "/cron\n/exit\n" });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`ID\\s+NAME\\s+SCHEDULE[^\\n]*\\n${job.id}\\s+chat-visible\\s+every 1d\\s+enabled`));
  await h.cron(["remove", job.id]);
});

test("a distribution's cron jobs are installed disabled and run only once resumed", async () => {
  const dist = join(h.home, "dist-src");
  mkdirSync(join(dist, "cron"), { recursive: true });
  writeFileSync(join(dist, "distribution.yaml"), "name: ticker\nversion: 1.0.0\n");
  writeFileSync(join(dist, "cron", "jobs.yaml"), "jobs:\n  - name: tick\n    schedule: every 1s\n    script: echo tick\n    enabled: true\n");
  const installed = await h.cli(["profile", "install", dist, "-y"]);
  assert.is(installed.code, 0, installed.stderr);
  const { jobs } = await h.cron(["list"], "ticker");
  assert.is(jobs.length, 1);
  assert.is(jobs[0].name, "tick");
  assert.is(jobs[0].enabled, false);
  assert.is(jobs[0].source, "cron/jobs.yaml");
  assert.match((await h.cli(["-p", "ticker", "cron", "list"])).stdout, /tick\s+every 1s\s+disabled/);
  // Reading the files again (every cron call does) keeps the one job, still disabled.
  assert.is((await h.cron(["list"], "ticker")).jobs.length, 1);
  const resumed = await h.cron(["resume", jobs[0].id], "ticker");
  assert.is(resumed.job.enabled, true);
  await waitFor("a run of the enabled distribution job", async () => {
    const { runs } = await h.cron(["logs", jobs[0].id], "ticker");
    return runs.some((r: { status: string }) => r.status === "ok");
  });
  await h.cron(["pause", jobs[0].id], "ticker");
  assert.ok(existsSync(join(h.home, "profiles", "ticker", "cron", "jobs.yaml")));
});

test.run();

import type { CronJob, CronRun } from "../../shared/protocol/cron.js";
import type { ActorContext, ActorDefinition } from "../actors/types.js";
import { firstFire, newRunId } from "./jobs.js";
import { nextFire, planDue } from "./schedule.js";

/**
 * The built-in `cron` actor: one per profile (keyed by the profile's name), holding the
 * profile's job table in its state and each job's runs in KV (`run/<job>/<start>-<run>`). Its
 * actions change the table atomically (their bodies do not await before the state is changed),
 * so two callers can never both start a run of one job. Running a job happens outside, in the
 * cron service; the actor records what it started and what came of it.
 */
export interface CronState {
  profile: string;
  jobs: Record<string, CronJob>;
}

type CronContext = ActorContext<CronState>;

/** A run the table just started: the caller executes it and reports with `finish`. */
export interface StartedRun {
  job: CronJob;
  runId: string;
  trigger: CronRun["trigger"];
  scheduledAt: number;
  startedAt: number;
}

/** Runs kept per job (older ones are dropped). */
const KEEP_RUNS = 200;

const runKey = (jobId: string, startedAt: number, runId: string) => `run/${jobId}/${String(startedAt).padStart(15, "0")}-${runId}`;

async function putRun(c: CronContext, run: CronRun): Promise<void> {
  await c.kv.putJson(runKey(run.jobId, run.startedAt, run.runId), run);
  const all = await c.kv.list(`run/${run.jobId}/`);
  for (const old of all.slice(0, Math.max(0, all.length - KEEP_RUNS))) await c.kv.delete(old.key);
}

function skippedRun(job: CronJob, scheduledAt: number, now: number, skipped: number, reason: string): CronRun {
  return {
    runId: newRunId(),
    jobId: job.id,
    trigger: "schedule",
    scheduledAt,
    startedAt: now,
    finishedAt: now,
    status: "skipped",
    error: reason,
    output: "",
    sessionId: null,
    skipped,
    delivery: { status: "none", detail: null },
  };
}

function start(job: CronJob, trigger: CronRun["trigger"], scheduledAt: number, now: number): StartedRun {
  const runId = newRunId();
  job.running = { runId, startedAt: now, scheduledAt, sessionId: null };
  job.updatedAt = now;
  return { job: { ...job }, runId, trigger, scheduledAt, startedAt: now };
}

/** A recurring job that used up its repeat count, or a one-shot that fired, is finished. */
function finishIfDone(job: CronJob): void {
  if (job.parsed.kind === "once" || (job.repeat !== null && job.runs >= job.repeat)) {
    job.finished = true;
    job.enabled = false;
    job.nextRunAt = null;
  }
}

export function cronDefinition(): ActorDefinition<CronState, Record<string, never>, { profile: string }> {
  return {
    createState: (_c, input) => ({ profile: input.profile, jobs: {} }),
    actions: {
      table: (c: CronContext) => ({ profile: c.state.profile, jobs: Object.values(c.state.jobs) }),
      add: (c: CronContext, job: CronJob) => {
        c.state.jobs[job.id] = job;
        return job;
      },
      /** Change some fields of a job (null when it is gone). */
      patch: (c: CronContext, id: string, fields: Partial<CronJob>) => {
        const job = c.state.jobs[id];
        if (!job) return null;
        Object.assign(job, fields);
        return job;
      },
      /** Pause or resume; resuming re-arms from now (a finished job starts over). */
      setEnabled: (c: CronContext, id: string, enabled: boolean, now: number, timeZone: string) => {
        const job = c.state.jobs[id];
        if (!job) return null;
        job.enabled = enabled;
        job.updatedAt = now;
        if (enabled) {
          if (job.finished && job.parsed.kind !== "once") {
            job.finished = false;
            job.runs = 0;
          }
          job.nextRunAt = job.parsed.kind === "once" ? job.parsed.at : firstFire(job.parsed, now, timeZone);
        }
        return job;
      },
      remove: async (c: CronContext, id: string) => {
        if (!c.state.jobs[id]) return false;
        delete c.state.jobs[id];
        for (const e of await c.kv.list(`run/${id}/`)) await c.kv.delete(e.key);
        return true;
      },
      /**
       * Start every enabled job whose fire time has come, at most one run per job: the latest
       * fire time that passed runs when it is within the job's catch-up window, earlier ones
       * (and one too old) are recorded as skipped, and the next fire time is the first after
       * now. A job still running its previous run skips this fire time.
       */
      due: async (c: CronContext, now: number, timeZone: string) => {
        const started: StartedRun[] = [];
        const skipped: CronRun[] = [];
        for (const job of Object.values(c.state.jobs)) {
          if (!job.enabled || job.nextRunAt === null || job.nextRunAt > now) continue;
          const plan = planDue(job.parsed, job.nextRunAt, now, timeZone);
          job.nextRunAt = plan.next;
          job.updatedAt = now;
          if (job.running) {
            skipped.push(skippedRun(job, plan.latest, now, plan.missedBefore + 1, `the previous run (${job.running.runId}) was still running`));
            job.lastStatus = "skipped";
          } else if (now - plan.latest <= plan.windowMs) {
            if (plan.missedBefore)
              skipped.push(skippedRun(job, plan.latest, now, plan.missedBefore, `${plan.missedBefore} earlier fire time(s) passed while the daemon was down`));
            job.runs += 1;
            started.push(start(job, plan.missedBefore || now - plan.latest > 5000 ? "catch-up" : "schedule", plan.latest, now));
          } else {
            const n = plan.missedBefore + 1;
            skipped.push(
              skippedRun(job, plan.latest, now, n, `${n} fire time(s) passed while the daemon was down, the last one longer ago than the catch-up window`),
            );
            job.lastStatus = "skipped";
            if (job.parsed.kind === "once") finishIfDone(job);
          }
          if (job.repeat !== null && job.runs >= job.repeat) job.nextRunAt = null;
        }
        for (const run of skipped) await putRun(c, run);
        return { started, jobs: Object.values(c.state.jobs) };
      },
      /** `agent cron run`: start a run now, unless one is running (null: no such job). */
      runNow: (c: CronContext, id: string, now: number) => {
        const job = c.state.jobs[id];
        if (!job) return null;
        if (job.running) return { busy: { ...job } };
        return { started: start(job, "manual", now, now) };
      },
      /** The session a prompt run created, so `agent cron list` can show it. */
      setSession: (c: CronContext, id: string, runId: string, sessionId: string) => {
        const job = c.state.jobs[id];
        if (job?.running?.runId === runId) job.running.sessionId = sessionId;
      },
      /** Record a finished run; the job keeps its schedule whatever the outcome. */
      finish: async (c: CronContext, run: CronRun) => {
        const job = c.state.jobs[run.jobId];
        if (job?.running?.runId === run.runId) {
          job.running = null;
          job.lastRunAt = run.startedAt;
          job.lastStatus = run.status;
          job.lastError = run.error;
          job.updatedAt = run.finishedAt;
          if (run.trigger !== "manual") finishIfDone(job);
        }
        await putRun(c, run);
        return job ?? null;
      },
      /** At start: runs the daemon was in when it stopped are recorded as interrupted. */
      recover: async (c: CronContext, now: number) => {
        for (const job of Object.values(c.state.jobs)) {
          const r = job.running;
          if (!r) continue;
          job.running = null;
          job.lastRunAt = r.startedAt;
          job.lastStatus = "interrupted";
          job.lastError = "the daemon stopped during the run";
          await putRun(c, {
            ...skippedRun(job, r.scheduledAt, now, 0, job.lastError),
            runId: r.runId,
            startedAt: r.startedAt,
            status: "interrupted",
            sessionId: r.sessionId,
          });
        }
        return Object.values(c.state.jobs);
      },
      /** Jobs declared in the profile's cron/ files: new ones are added (disabled unless the file enables them), changed ones get the file's fields, gone ones are removed. */
      syncFiles: async (c: CronContext, declared: CronJob[], named: string[], now: number, timeZone: string) => {
        const ids = new Set(named);
        for (const job of Object.values(c.state.jobs)) if (job.source !== null && !ids.has(job.id) && !job.running) delete c.state.jobs[job.id];
        for (const d of declared) {
          const have = c.state.jobs[d.id];
          if (!have) c.state.jobs[d.id] = d;
          else if (have.schedule !== d.schedule || have.prompt !== d.prompt || have.script !== d.script) {
            // The user's choices (enabled, runs) stay; the declaration's fields are the file's.
            const {
              enabled: _e,
              runs: _r,
              nextRunAt: _n,
              lastRunAt: _l,
              lastStatus: _s,
              lastError: _x,
              running: _u,
              finished: _f,
              createdAt: _c,
              ...fields
            } = d;
            const rescheduled = have.schedule !== d.schedule;
            Object.assign(have, fields, { updatedAt: now });
            if (rescheduled) have.nextRunAt = nextFire(d.parsed, now, timeZone);
          }
        }
        return Object.values(c.state.jobs);
      },
      runs: async (c: CronContext, id: string, limit: number) => {
        const all = await c.kv.list(`run/${id}/`);
        return all
          .slice(-limit)
          .reverse()
          .map((e) => JSON.parse(Buffer.from(e.value).toString("utf8")) as CronRun);
      },
    },
    options: { sleepTimeout: 60_000 },
  };
}

import type { CronJob, CronRun } from "../../shared/protocol/cron.js";
import type { ActorContext, ActorDefinition } from "../actors/api.js";
import { ChunkedList } from "../store/chunked-kv.js";
import { firstFire, newRunId } from "./jobs.js";
import { nextFire, planDue } from "./schedule.js";

/**
 * The built-in `cron` actor: one per profile (keyed by the profile's name), holding the
 * profile's job table in its state and each job's runs in KV (`run/<job>/<start>-<run>`, listed
 * by the job's run index, a chunked list under `idx/<job>/`). Its
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

/** Runs kept per job by default (older ones are dropped, with their sessions). */
export const KEEP_RUNS = 200;

const runKey = (jobId: string, startedAt: number, runId: string) => `run/${jobId}/${String(startedAt).padStart(15, "0")}-${runId}`;
/** An entry of a job's run index: `[run key, session id]`. */
type RunEntry = [string, string | null];
/** The index as the first versions kept it: one record of every entry, oldest first. */
const legacyIndexKey = (jobId: string) => `idx/${jobId}`;
/** Entries per chunk of the index (200 runs kept by default: four chunks). */
const INDEX_CHUNK = 64;

/**
 * A job's run index: a chunked list (store/chunked-kv.ts) under `idx/<job>/`, oldest first, its
 * first kept position in `idx/<job>/head`. A home written before it has the index as one record
 * (`idx/<job>`), or none at all (older still: built from the runs); either is moved into the
 * list at open, then the old record deleted (a crash in between leaves the list whole and the
 * old record to delete at the next open).
 */
async function runIndex(c: CronContext, jobId: string): Promise<ChunkedList<RunEntry>> {
  const list = await new ChunkedList<RunEntry>(c.kv, { prefix: `idx/${jobId}/`, chunkSize: INDEX_CHUNK }).open();
  const legacy = await c.kv.getJson<RunEntry[]>(legacyIndexKey(jobId));
  if (list.end === 0) {
    const entries =
      legacy ??
      (await c.kv.list(`run/${jobId}/`)).map((e): RunEntry => {
        const run = JSON.parse(Buffer.from(e.value).toString("utf8")) as CronRun;
        return [Buffer.from(e.key).toString("utf8"), run.sessionId];
      });
    if (entries.length) await list.append(entries);
  }
  if (legacy) await c.kv.delete(legacyIndexKey(jobId));
  return list;
}

/**
 * Record a run, dropping the oldest past `keep`. The cost does not grow with the history: the
 * index's last chunk (small entries) is read and written, never the runs' outputs. The index
 * entry is written first, so a crash in between leaves at worst a key it names without a run
 * (skipped when read), never a run nobody knows about. Returns the sessions of the dropped runs
 * (the service deletes them).
 */
async function putRun(c: CronContext, run: CronRun, keep: number): Promise<string[]> {
  return serially(`${c.actorId}\0${run.jobId}`, () => writeRun(c, run, keep));
}

/** Actions interleave at their awaits: one job's index is read and written by one caller at a time. */
const chains = new Map<string, Promise<unknown>>();
function serially<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const next = (chains.get(key) ?? Promise.resolve()).then(fn, fn);
  const settled = next.catch(() => undefined);
  chains.set(key, settled);
  void settled.then(() => chains.get(key) === settled && chains.delete(key));
  return next;
}

/** Entries looked at for a run recorded again (a run is recorded once; its key is checked among the newest). */
const RECENT = 8;

async function writeRun(c: CronContext, run: CronRun, keep: number): Promise<string[]> {
  const key = runKey(run.jobId, run.startedAt, run.runId);
  const index = await runIndex(c, run.jobId);
  const from = Math.max(index.start, index.end - RECENT);
  const at = (await index.read(from)).findIndex(([k]) => k === key);
  if (at >= 0) await index.update(from + at, [key, run.sessionId]);
  else await index.append([[key, run.sessionId]]);
  await c.kv.putJson(key, run);
  const dropped = index.length > keep ? await index.dropBefore(index.end - keep) : [];
  for (const [k] of dropped) await c.kv.delete(k);
  return dropped.flatMap(([, s]) => (s ? [s] : []));
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

export function cronDefinition(keep = KEEP_RUNS): ActorDefinition<CronState, Record<string, never>, { profile: string }> {
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
      /** Remove a job and its runs; returns the sessions of those runs (null: no such job). */
      remove: async (c: CronContext, id: string) => {
        if (!c.state.jobs[id]) return null;
        delete c.state.jobs[id];
        return serially(`${c.actorId}\0${id}`, async () => {
          const list = await runIndex(c, id);
          const index = await list.readAll();
          const indexed = new Set(index.map(([key]) => key));
          const sessions = index.flatMap(([, s]) => (s ? [s] : []));
          await list.remove();
          // Listed (not only the indexed ones): a run a crash left out of the index goes too, with its session.
          for (const e of await c.kv.list(`run/${id}/`)) {
            if (!indexed.has(Buffer.from(e.key).toString("utf8"))) {
              try {
                const left = (JSON.parse(Buffer.from(e.value).toString("utf8")) as CronRun).sessionId;
                if (left) sessions.push(left);
              } catch {}
            }
            await c.kv.delete(e.key);
          }
          return sessions;
        });
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
        const pruned: string[] = [];
        for (const run of skipped) pruned.push(...(await putRun(c, run, keep)));
        return { started, jobs: Object.values(c.state.jobs), pruned };
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
      /** Record a finished run; the job keeps its schedule whatever the outcome. `pruned`: sessions of the runs dropped to make room. */
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
        const pruned = await putRun(c, run, keep);
        return { job: job ?? null, pruned };
      },
      /** At start: runs the daemon was in when it stopped are recorded as interrupted. */
      recover: async (c: CronContext, now: number) => {
        const pruned: string[] = [];
        for (const job of Object.values(c.state.jobs)) {
          const r = job.running;
          if (!r) continue;
          job.running = null;
          job.lastRunAt = r.startedAt;
          job.lastStatus = "interrupted";
          job.lastError = "the daemon stopped during the run";
          const run: CronRun = {
            ...skippedRun(job, r.scheduledAt, now, 0, job.lastError),
            runId: r.runId,
            startedAt: r.startedAt,
            status: "interrupted",
            sessionId: r.sessionId,
          };
          pruned.push(...(await putRun(c, run, keep)));
        }
        return { jobs: Object.values(c.state.jobs), pruned };
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
      /** The newest `limit` runs, newest first (only those are read). */
      runs: (c: CronContext, id: string, limit: number) =>
        serially(`${c.actorId}\0${id}`, async () => {
          const index = await runIndex(c, id);
          const out: CronRun[] = [];
          for (const [key] of (await index.read(Math.max(index.start, index.end - limit))).reverse()) {
            const run = await c.kv.getJson<CronRun>(key);
            if (run) out.push(run);
          }
          return out;
        }),
    },
    options: { sleepTimeout: 60_000 },
  };
}

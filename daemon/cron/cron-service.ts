import { existsSync, rmSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { type Clock, scaledClock } from "../../shared/clock.js";
import { cronTestClock } from "../../shared/config/env.js";
import { cronFileJobs, parseCronFile } from "../../shared/cron-file.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { CRON_PAUSE_MARKER } from "../../shared/import-marker.js";
import { DEFAULT_PROFILE, profilePaths } from "../../shared/paths.js";
import type { CronJob, CronRun } from "../../shared/protocol/cron.js";
import type { ActorRuntime } from "../actors/api.js";
import type { DaemonContext } from "../context.js";
import type { CronApi } from "./api.js";
import type { Logger } from "../log/logger.js";
import { cronDefinition, KEEP_RUNS, type StartedRun } from "./cron-actor.js";
import { buildJob, editFields, jobFromFile, type JobFields } from "./jobs.js";
import { deliver, runPrompt, runScript, type RunOutcome } from "./job-run.js";
import { systemTimeZone } from "./schedule.js";
import { envNumber } from "../../shared/config/env.js";

const NAMESPACE = "default";
const ACTOR_NAME = "cron";
/** setTimeout's largest delay; a later fire time is re-armed when this one fires. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * The cron service: one `cron` actor per profile holds the job table (the truth, on disk);
 * this keeps a copy of each table to know the next fire time, one timer armed for the earliest,
 * and the runs in progress. Fire times are stored, never counted down: at start the timer is
 * armed from the stored times, and fire times that passed meanwhile are caught up or skipped
 * by the actor's `due` (README "Cron").
 */
export class CronService implements CronApi {
  private readonly tables = new Map<string, { actorId: string; jobs: Map<string, CronJob> }>();
  private readonly active = new Map<string, { controller: AbortController; done: Promise<CronRun> }>();
  private timer: ReturnType<Clock["setTimeout"]> | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private stopped = false;
  /** After a tick that failed, the next one waits until then (no busy loop on a due job). */
  private retryAt = 0;
  private readonly log: Logger;
  /**
   * The clock cron reads and waits on: fire times, run times and run timeouts. The real one,
   * unless a test moves it (AGENT_CRON_CLOCK_OFFSET_MS, AGENT_CRON_CLOCK_RATE: test-only, see
   * docs/cron.md) or passes its own.
   */
  readonly clock: Clock;
  private readonly changeListeners = new Set<(profile: string) => void>();
  /** Runs kept per job: 200, or AGENT_CRON_KEEP_RUNS (for tests, so pruning shows after a few runs). */
  private readonly keepRuns: number;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly runtime: ActorRuntime,
    clock?: Clock,
  ) {
    this.log = ctx.logSink.logger("cron");
    this.clock = clock ?? scaledClock(cronTestClock());
    this.keepRuns = envNumber("AGENT_CRON_KEEP_RUNS", KEEP_RUNS, (n) => Number.isInteger(n) && n >= 1);
  }

  now(): number {
    return this.clock.now();
  }

  async start(): Promise<void> {
    this.runtime.registerDefinition(ACTOR_NAME, cronDefinition(this.keepRuns), "builtin");
    // Profiles with a table already, and profiles whose cron/ folder declares jobs.
    const known = new Set(this.runtime.list({ namespace: NAMESPACE, name: ACTOR_NAME }).map((r) => r.key));
    for (const profile of this.profileNames()) if (known.has(profile) || (await hasCronFiles(profilePaths(this.ctx.home, profile).cron))) known.add(profile);
    for (const profile of known) {
      try {
        await this.syncFiles(profile);
        const { jobs, pruned } = (await this.call(profile, "recover", [this.now()])) as { jobs: CronJob[]; pruned: string[] };
        this.remember(profile, jobs);
        await this.dropSessions(profile, pruned);
      } catch (error) {
        this.log.error("cron table could not be loaded", { profile, error: toAgentError(error).message });
      }
    }
    await this.pauseImported();
    this.arm();
  }

  /**
   * A home restored by `agent import` (without --keep-cron) carries a marker: its jobs are
   * paused before the first tick, so they never run (or duplicate the original home's) unasked.
   * The marker goes once every job is paused; a start killed midway pauses again.
   */
  private async pauseImported(): Promise<void> {
    const marker = join(this.ctx.home, CRON_PAUSE_MARKER);
    if (!existsSync(marker)) return;
    for (const [profile, table] of this.tables) {
      for (const job of [...table.jobs.values()]) {
        if (!job.enabled) continue;
        try {
          const stored = (await this.call(profile, "setEnabled", [job.id, false, this.now(), (await this.settings(profile)).timeZone])) as CronJob;
          this.rememberOne(profile, stored);
          this.log.info("cron job of an imported home paused", { profile, id: job.id });
        } catch (error) {
          this.log.error("cron job of an imported home could not be paused", { profile, id: job.id, error: toAgentError(error).message });
          return;
        }
      }
    }
    rmSync(marker, { force: true });
  }

  /** Stop the timer, interrupt the runs in progress and wait until they are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    // A tick in flight may still start runs: let it finish first, then stop them all.
    await this.ticking.catch(() => undefined);
    for (const run of this.active.values()) run.controller.abort();
    await Promise.allSettled([...this.active.values()].map((r) => r.done));
  }

  private profileNames(): string[] {
    return this.ctx.services.get("profiles").names();
  }

  // ---------- the table ----------

  private async actorId(profile: string): Promise<string> {
    const have = this.tables.get(profile);
    if (have) return have.actorId;
    const { actor } = await this.runtime.getOrCreate({
      namespace: NAMESPACE,
      name: ACTOR_NAME,
      key: profile,
      runner_name_selector: "default",
      crash_policy: "restart",
      input: { profile },
    });
    this.tables.set(profile, { actorId: actor.actor_id, jobs: new Map() });
    return actor.actor_id;
  }

  private async call(profile: string, action: string, args: unknown[]): Promise<unknown> {
    return this.runtime.action(await this.actorId(profile), action, args, { source: "internal" });
  }

  /**
   * Hear of every change to a profile's table, whoever made it: a job added, edited, paused,
   * resumed or removed, a run started or finished, the table dropped. Returns the unsubscribe.
   */
  onChange(listener: (profile: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private changed(profile: string): void {
    for (const listener of this.changeListeners) listener(profile);
  }

  private remember(profile: string, jobs: CronJob[]): void {
    const table = this.tables.get(profile)!;
    table.jobs = new Map(jobs.map((j) => [j.id, j]));
    this.changed(profile);
  }

  private rememberOne(profile: string, job: CronJob | null): void {
    if (job) this.tables.get(profile)?.jobs.set(job.id, job);
    this.changed(profile);
  }

  private async settings(profile: string): Promise<{ timeZone: string; timeoutMs: number; scriptTimeoutMs: number; env: NodeJS.ProcessEnv }> {
    const profiles = this.ctx.services.get("profiles");
    // A profile deleted since its jobs were added: its runs fail (and say why); its schedule is read with the home's settings.
    const layered = profile !== DEFAULT_PROFILE ? await profiles.config(profile).catch(() => this.ctx.config) : this.ctx.config;
    const cron = layered.current().cron;
    return {
      timeZone: cron.timezone || process.env.TZ || systemTimeZone(),
      timeoutMs: cron.timeout * 1000,
      scriptTimeoutMs: cron.script_timeout * 1000,
      env: layered.env(),
    };
  }

  /** The profile's table, with the jobs its cron/ files declare merged in. */
  async list(profile: string): Promise<{ profile: string; timezone: string; jobs: CronJob[] }> {
    await this.syncFiles(profile);
    const { timeZone } = await this.settings(profile);
    const { jobs } = (await this.call(profile, "table", [])) as { jobs: CronJob[] };
    this.remember(profile, jobs);
    this.arm();
    return { profile, timezone: timeZone, jobs: jobs.sort((a, b) => a.createdAt - b.createdAt) };
  }

  private async job(profile: string, id: string): Promise<CronJob> {
    await this.syncFiles(profile);
    const { jobs } = (await this.call(profile, "table", [])) as { jobs: CronJob[] };
    this.remember(profile, jobs);
    const job = jobs.find((j) => j.id === id);
    if (!job) throw new AgentError("cron.job_not_found", `no cron job ${id} in profile ${profile}; \`agent cron list\` shows the jobs`, { id, profile });
    return job;
  }

  private async checkSkills(profile: string, skills: string[]): Promise<void> {
    const chat = this.ctx.services.get("chat");
    for (const s of skills) {
      try {
        await chat.expandSlash(profile, s, "");
      } catch (error) {
        const e = toAgentError(error);
        if (e.code !== "skills.not_found") throw error;
        throw new AgentError("cron.invalid_job", `${e.message} in profile ${profile}; \`agent chat\` /skills lists them`, { skill: s.slice(0, 80) });
      }
    }
  }

  async add(profile: string, fields: JobFields & { schedule: string; paused?: boolean }): Promise<CronJob> {
    const { timeZone } = await this.settings(profile);
    const job = buildJob(profile, fields, this.now(), timeZone);
    await this.checkSkills(profile, job.skills);
    const stored = (await this.call(profile, "add", [job])) as CronJob;
    this.rememberOne(profile, stored);
    this.log.info("cron job added", { profile, id: job.id, schedule: job.schedule });
    this.arm();
    return stored;
  }

  async edit(profile: string, id: string, fields: JobFields): Promise<CronJob> {
    const job = await this.job(profile, id);
    const { timeZone } = await this.settings(profile);
    const patch = editFields(job, fields, this.now(), timeZone);
    if (patch.skills) await this.checkSkills(profile, patch.skills);
    const stored = (await this.call(profile, "patch", [id, patch])) as CronJob | null;
    if (!stored) throw new AgentError("cron.job_not_found", `no cron job ${id} in profile ${profile}`, { id, profile });
    this.rememberOne(profile, stored);
    this.arm();
    return stored;
  }

  async setEnabled(profile: string, id: string, enabled: boolean): Promise<CronJob> {
    const job = await this.job(profile, id);
    const { timeZone } = await this.settings(profile);
    if (enabled && job.parsed.kind === "once" && job.parsed.at <= this.now())
      throw new AgentError(
        "cron.invalid_schedule",
        `job ${id} was a one-shot at ${new Date(job.parsed.at).toISOString()}, which has passed; give it a new time with \`agent cron edit ${id} --schedule <when>\``,
        { id },
      );
    const stored = (await this.call(profile, "setEnabled", [id, enabled, this.now(), timeZone])) as CronJob;
    this.rememberOne(profile, stored);
    this.arm();
    return stored;
  }

  async remove(profile: string, id: string): Promise<void> {
    const job = await this.job(profile, id);
    if (job.running) throw new AgentError("cron.job_running", `job ${id} is running (${job.running.runId}); remove it when the run is over`, { id });
    if (job.source)
      throw new AgentError(
        "cron.invalid_job",
        `job ${id} is declared in ${job.source} of profile ${profile}; remove it from that file (or pause it with \`agent cron pause ${id}\`)`,
        { id },
      );
    const sessions = (await this.call(profile, "remove", [id])) as string[] | null;
    this.tables.get(profile)?.jobs.delete(id);
    this.changed(profile);
    await this.dropSessions(profile, sessions ?? []);
    this.arm();
  }

  async logs(profile: string, id: string, limit = 20): Promise<{ job: CronJob; runs: CronRun[] }> {
    const job = await this.job(profile, id);
    return { job, runs: (await this.call(profile, "runs", [id, limit])) as CronRun[] };
  }

  /** Run a job now, whatever its schedule; refused while a run of it is in progress. */
  async runNow(profile: string, id: string): Promise<{ run: CronRun; job: CronJob }> {
    await this.job(profile, id);
    const r = (await this.call(profile, "runNow", [id, this.now()])) as { busy: CronJob } | { started: StartedRun } | null;
    if (!r) throw new AgentError("cron.job_not_found", `no cron job ${id} in profile ${profile}`, { id, profile });
    if ("busy" in r) throw new AgentError("cron.job_running", `job ${id} is already running (${r.busy.running?.runId}); runs of one job never overlap`, { id });
    this.rememberOne(profile, r.started.job);
    const run = await this.execute(profile, r.started);
    return { run, job: this.tables.get(profile)?.jobs.get(id) ?? r.started.job };
  }

  /**
   * A prompt run's session goes with its run: when the run is dropped (past the runs kept per
   * job) or its job removed, so cron sessions are bounded like the runs. Never throws.
   */
  private async dropSessions(profile: string, ids: string[]): Promise<void> {
    const chat = this.ctx.services.get("chat");
    for (const id of ids) {
      try {
        await chat.delete(id);
      } catch (error) {
        const e = toAgentError(error);
        if (!/not_found/.test(e.code)) this.log.warn("the session of a dropped cron run could not be deleted", { profile, session: id, error: e.message });
      }
    }
  }

  // ---------- a profile going away ----------

  /** The jobs in the profile's table (none when it never had one). */
  async jobsOf(profile: string): Promise<CronJob[]> {
    if (!this.tables.has(profile)) return [];
    const { jobs } = (await this.call(profile, "table", [])) as { jobs: CronJob[] };
    this.remember(profile, jobs);
    return jobs.sort((a, b) => a.createdAt - b.createdAt);
  }

  /**
   * Remove the profile's whole table (its jobs, their runs and the runs' sessions), for a
   * profile being deleted; refused while a run is in progress. Returns the removed jobs' ids.
   */
  dropProfile(profile: string): Promise<string[]> {
    // In the scheduler's own chain: no tick can start a run of this table between the check
    // for running jobs and the removal.
    const drop = this.ticking.catch(() => undefined).then(() => this.dropTable(profile));
    this.ticking = drop.then(
      () => undefined,
      () => undefined,
    );
    return drop;
  }

  private async dropTable(profile: string): Promise<string[]> {
    const jobs = await this.jobsOf(profile);
    const running = jobs.filter((j) => j.running);
    if (running.length)
      throw new AgentError(
        "cron.job_running",
        `cron job ${running.map((j) => `${j.id} (${j.name})`).join(", ")} of profile ${profile} is running; delete the profile when the run is over`,
        { profile },
      );
    const actorId = this.tables.get(profile)?.actorId;
    if (!actorId) return [];
    for (const job of jobs) await this.dropSessions(profile, ((await this.call(profile, "remove", [job.id])) as string[] | null) ?? []);
    await this.runtime.destroy(actorId).catch((error) => {
      if (toAgentError(error).code !== "actor.not_found") throw error;
    });
    this.tables.delete(profile);
    this.changed(profile);
    this.arm();
    this.log.info("cron table of a deleted profile removed", { profile, jobs: jobs.map((j) => j.id) });
    return jobs.map((j) => j.id);
  }

  // ---------- the clock ----------

  /** Arm the one timer for the earliest stored fire time of any enabled job. */
  private arm(): void {
    if (this.stopped) return;
    this.clock.clearTimeout(this.timer);
    this.timer = null;
    let earliest = Infinity;
    for (const t of this.tables.values()) for (const j of t.jobs.values()) if (j.enabled && j.nextRunAt !== null) earliest = Math.min(earliest, j.nextRunAt);
    if (earliest === Infinity) return;
    const delay = Math.min(MAX_DELAY, Math.max(0, earliest - this.now(), this.retryAt - this.now()));
    this.timer = this.clock.setTimeout(() => this.tick(), delay);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = null;
    this.ticking = this.ticking.then(async () => {
      for (const [profile, table] of this.tables) {
        if (this.stopped) return;
        const now = this.now();
        if (![...table.jobs.values()].some((j) => j.enabled && j.nextRunAt !== null && j.nextRunAt <= now)) continue;
        try {
          const { timeZone } = await this.settings(profile);
          const r = (await this.call(profile, "due", [now, timeZone])) as { started: StartedRun[]; jobs: CronJob[]; pruned: string[] };
          this.remember(profile, r.jobs);
          void this.dropSessions(profile, r.pruned);
          for (const s of r.started) void this.execute(profile, s);
        } catch (error) {
          this.retryAt = this.now() + 5000;
          this.log.error("cron tick failed", { profile, error: toAgentError(error).message });
        }
      }
    });
    void this.ticking.finally(() => this.arm());
  }

  /** Execute a started run, deliver its output and record it; never throws. */
  private execute(profile: string, s: StartedRun): Promise<CronRun> {
    const controller = new AbortController();
    const done = (async (): Promise<CronRun> => {
      const job = s.job;
      let outcome: RunOutcome;
      try {
        const settings = await this.settings(profile);
        const env = {
          chat: this.ctx.services.get("chat"),
          cwd: job.workdir ?? profilePaths(this.ctx.home, profile).dir,
          env: settings.env,
          clock: this.clock,
          signal: controller.signal,
          onSession: (sessionId: string) => void this.call(profile, "setSession", [job.id, s.runId, sessionId]).catch(() => undefined),
        };
        this.log.info("cron run started", { profile, job: job.id, run: s.runId, trigger: s.trigger });
        outcome =
          job.mode === "script"
            ? await runScript(job, { ...env, timeoutMs: settings.scriptTimeoutMs })
            : await runPrompt(job, { ...env, timeoutMs: settings.timeoutMs });
      } catch (error) {
        outcome = { status: "error", error: toAgentError(error).message, output: "", sessionId: null };
      }
      const base = {
        runId: s.runId,
        jobId: job.id,
        trigger: s.trigger,
        scheduledAt: s.scheduledAt,
        startedAt: s.startedAt,
        finishedAt: this.now(),
        skipped: 0,
        ...outcome,
      };
      const run: CronRun = { ...base, delivery: await deliver(job, base, this.ctx.services.has("messaging") ? this.ctx.services.get("messaging") : null) };
      try {
        const { job: stored, pruned } = (await this.call(profile, "finish", [run])) as { job: CronJob | null; pruned: string[] };
        this.rememberOne(profile, stored);
        await this.dropSessions(profile, pruned);
      } catch (error) {
        this.log.error("cron run could not be recorded", { profile, job: job.id, run: s.runId, error: toAgentError(error).message });
      }
      this.log.info("cron run finished", { profile, job: job.id, run: s.runId, status: run.status, error: run.error });
      this.active.delete(job.id);
      this.arm();
      return run;
    })();
    this.active.set(s.job.id, { controller, done });
    return done;
  }

  // ---------- jobs declared in files ----------

  /**
   * Jobs in the profile's `cron/*.yaml|yml|json` (a file holding a `jobs` list, a list, or one
   * job) join its table, disabled unless the file says `enabled: true` (an installed
   * distribution's files say false: enabling is `agent cron resume <id>`). A job's id follows
   * from its file and name, so reading the files again changes nothing.
   */
  private async syncFiles(profile: string): Promise<void> {
    const dir = profilePaths(this.ctx.home, profile).cron;
    if (!this.tables.has(profile) && !(await hasCronFiles(dir))) return;
    const { timeZone } = await this.settings(profile);
    const declared: CronJob[] = [];
    // Ids of every job a file names, valid or not: a job whose declaration is broken for a
    // while keeps its place (and whether it was enabled) in the table.
    const named: string[] = [];
    for (const file of await cronFiles(dir)) {
      const rel = `cron/${file}`;
      let list: unknown[];
      try {
        const text = await readFile(join(dir, file), "utf8");
        list = cronFileJobs(parseCronFile(text, file.endsWith(".json")));
      } catch (error) {
        this.log.warn("cron file skipped", { profile, file: rel, error: (error as Error).message });
        for (const j of this.tables.get(profile)?.jobs.values() ?? []) if (j.source === rel) named.push(j.id);
        continue;
      }
      for (const [i, raw] of list.entries()) {
        if (!raw || typeof raw !== "object") continue;
        const name = typeof (raw as { name?: unknown }).name === "string" ? (raw as { name: string }).name : `#${i}`;
        const id = `c_${createHash("sha256").update(`${profile}\0${rel}\0${name}`).digest("hex").slice(0, 8)}`;
        named.push(id);
        try {
          declared.push(jobFromFile(profile, rel, id, raw as Record<string, unknown>, this.now(), timeZone));
        } catch (error) {
          this.log.warn("cron job in a file skipped", { profile, file: rel, job: name, error: toAgentError(error).message });
        }
      }
    }
    const jobs = (await this.call(profile, "syncFiles", [declared, named, this.now(), timeZone])) as CronJob[];
    this.remember(profile, jobs);
  }
}

async function cronFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: string[] = [];
  for (const n of names.sort()) if (/\.(ya?ml|json)$/.test(n) && (await stat(join(dir, n)).catch(() => null))?.isFile()) out.push(n);
  return out;
}

async function hasCronFiles(dir: string): Promise<boolean> {
  return (await cronFiles(dir)).length > 0;
}

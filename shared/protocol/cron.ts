import { z } from "zod";
import { rpc } from "./define.js";

/**
 * Cron: scheduled jobs of a profile, held by the daemon (one `cron` actor per profile). Every
 * method acts on the connection's profile (`agent -p <profile> cron ...`).
 */

/** A parsed schedule: a fixed interval, a five-field cron expression, or one moment. */
export type CronSchedule = { kind: "every"; ms: number } | { kind: "cron"; expr: string } | { kind: "once"; at: number };

/** Where a run's output goes besides `agent cron logs`. */
export type CronDelivery = { kind: "none" } | { kind: "file"; path: string } | { kind: "channel"; channel: string };

export type CronRunStatus = "ok" | "error" | "timeout" | "skipped" | "interrupted";

export interface CronJob {
  /** `c_` + 8 hex. */
  id: string;
  name: string;
  profile: string;
  /** The schedule as given (`every 30m`, `0 9 * * 1-5`, an ISO time, `45m`). */
  schedule: string;
  parsed: CronSchedule;
  /** `prompt`: a model turn in a fresh session; `script`: a shell script. */
  mode: "prompt" | "script";
  prompt: string | null;
  script: string | null;
  /** Skills (or bundles) loaded into the prompt, in order. */
  skills: string[];
  model: string | null;
  provider: string | null;
  /** Working directory of the run (default: the profile's folder). */
  workdir: string | null;
  /** False while paused, once finished, and for jobs a distribution installed until enabled. */
  enabled: boolean;
  deliver: CronDelivery;
  /** Runs after which the job is finished (null: no limit; one-shots run once). */
  repeat: number | null;
  /** Runs started so far. */
  runs: number;
  /** Epoch ms of the next fire time, or null when none (paused jobs keep theirs). */
  nextRunAt: number | null;
  lastRunAt: number | null;
  lastStatus: CronRunStatus | null;
  lastError: string | null;
  /** The run in progress, if any: runs of one job never overlap. */
  running: { runId: string; startedAt: number; scheduledAt: number; sessionId: string | null } | null;
  /** True once a one-shot ran or the repeat count was reached. */
  finished: boolean;
  /** `cron/<file>` of the profile when the job came from a file (a distribution's). */
  source: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface CronRun {
  runId: string;
  jobId: string;
  /** schedule: on time; catch-up: a fire time missed while the daemon was down; manual: `agent cron run`. */
  trigger: "schedule" | "catch-up" | "manual";
  /** The fire time this run stands for (for a skipped entry, the last one skipped). */
  scheduledAt: number;
  startedAt: number;
  finishedAt: number;
  status: CronRunStatus;
  error: string | null;
  /** The answer of the turn or the script's output (long output keeps head and tail). */
  output: string;
  /** The cron session of a prompt run. */
  sessionId: string | null;
  /** Fire times skipped (a skipped entry), else 0. */
  skipped: number;
  delivery: { status: "none" | "delivered" | "not_deliverable" | "failed"; detail: string | null };
}

const id = z.string().regex(/^c_[0-9a-f]{8}$/, "must be a job id such as c_1a2b3c4d (agent cron list shows them)");
const text = (max: number) => z.string().min(1).max(max);

/** The fields `add` takes; `edit` takes them all optional (null clears an optional one). */
const jobFields = {
  schedule: text(200),
  name: text(200).optional(),
  prompt: text(100_000).optional(),
  script: text(100_000).optional(),
  skills: z.array(text(200)).max(32).optional(),
  model: text(200).optional(),
  provider: text(200).optional(),
  workdir: text(4096).optional(),
  /** `none`, `file:<absolute path>` or `channel:<name>`. */
  deliver: text(4200).optional(),
  repeat: z.number().int().min(1).max(1_000_000).optional(),
};

export const cronMethods = {
  "cron.list": rpc<{ profile: string; timezone: string; jobs: CronJob[] }>()(() => z.object({}).strict()),
  "cron.add": rpc<{ job: CronJob }>()(() => z.object({ ...jobFields, paused: z.boolean().optional() }).strict()),
  "cron.edit": rpc<{ job: CronJob }>()(() =>
    z
      .object({
        id,
        schedule: jobFields.schedule.optional(),
        name: jobFields.name,
        prompt: text(100_000).nullable().optional(),
        script: text(100_000).nullable().optional(),
        skills: jobFields.skills,
        model: text(200).nullable().optional(),
        provider: text(200).nullable().optional(),
        workdir: text(4096).nullable().optional(),
        deliver: jobFields.deliver,
        repeat: jobFields.repeat.nullable(),
      })
      .strict(),
  ),
  "cron.pause": rpc<{ job: CronJob }>()(() => z.object({ id }).strict()),
  /** Also enables a job a distribution installed disabled, and re-arms a finished one. */
  "cron.resume": rpc<{ job: CronJob }>()(() => z.object({ id }).strict()),
  /** Run the job now (its schedule is unchanged); answers when the run is over. */
  "cron.run": rpc<{ run: CronRun; job: CronJob }>()(() => z.object({ id }).strict()),
  "cron.remove": rpc<{ removed: string }>()(() => z.object({ id }).strict()),
  /** Runs newest first, with their output. */
  "cron.logs": rpc<{ job: CronJob; runs: CronRun[] }>()(() => z.object({ id, limit: z.number().int().min(1).max(1000).optional() }).strict()),
};

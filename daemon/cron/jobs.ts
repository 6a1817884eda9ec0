import { randomBytes } from "node:crypto";
import { isAbsolute } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { CronDelivery, CronJob, CronSchedule } from "../../shared/protocol/cron.js";
import { nextFire, parseSchedule } from "./schedule.js";

/** A job's fields as `add` and `edit` take them (edit: null clears an optional field). */
export interface JobFields {
  schedule?: string;
  name?: string;
  prompt?: string | null;
  script?: string | null;
  skills?: string[];
  model?: string | null;
  provider?: string | null;
  workdir?: string | null;
  deliver?: string;
  repeat?: number | null;
}

export const newJobId = () => `c_${randomBytes(4).toString("hex")}`;
export const newRunId = () => `r_${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;

const invalid = (message: string) => new AgentError("cron.invalid_job", message);

/** The messaging platforms a `<platform>:<chat>` delivery may name. */
const MESSAGING_PLATFORMS = ["telegram", "line", "discord", "matrix", "teams", "slack"];

/** `none`, `file:<absolute path>`, `<platform>:<chat>` or `channel:<platform>:<chat>`. */
export function parseDelivery(text: string | undefined): CronDelivery {
  const t = (text ?? "none").trim();
  if (t === "none" || t === "") return { kind: "none" };
  if (t.startsWith("file:")) {
    const path = t.slice(5);
    if (!isAbsolute(path)) throw invalid(`--deliver file:<path> needs an absolute path; got ${JSON.stringify(path)}`);
    return { kind: "file", path };
  }
  if (t.startsWith("channel:")) {
    const channel = t.slice(8);
    if (!/^[A-Za-z0-9][A-Za-z0-9_.:@#/-]{0,199}$/.test(channel)) throw invalid(`--deliver channel:<name>: ${JSON.stringify(channel)} is not a channel name`);
    return { kind: "channel", channel };
  }
  // A platform alone (`teams`): the platform's default destination (Teams: the configured channel, chat or webhook).
  if (MESSAGING_PLATFORMS.includes(t)) return { kind: "channel", channel: t };
  // `<platform>:<chat>` (telegram:12345, line:U…): a chat of a messaging adapter.
  const platformChat = /^([a-z][a-z0-9_]{0,31}):([A-Za-z0-9_.:@#/-]{1,200})$/.exec(t);
  if (platformChat && MESSAGING_PLATFORMS.includes(platformChat[1] as string)) return { kind: "channel", channel: t };
  throw invalid(
    `--deliver ${JSON.stringify(t.slice(0, 100))} is not a delivery target; use none, file:<absolute path>, <platform>:<chat> or channel:<platform>:<chat> (teams alone: its configured destination)`,
  );
}

export function deliveryText(d: CronDelivery): string {
  return d.kind === "none" ? "none" : d.kind === "file" ? `file:${d.path}` : `channel:${d.channel}`;
}

/** The first fire time of a schedule from now (one-shots: their moment). */
export function firstFire(parsed: CronSchedule, now: number, timeZone: string): number | null {
  return parsed.kind === "every" ? now + parsed.ms : nextFire(parsed, now, timeZone);
}

function checkShape(job: Pick<CronJob, "mode" | "prompt" | "script" | "skills" | "model" | "provider" | "workdir">): void {
  if (job.mode === "script") {
    if (job.prompt !== null || job.skills.length) throw invalid("a job runs a prompt (with skills) or a script, not both");
    if (job.model !== null || job.provider !== null) throw invalid("a script job uses no model: --model and --provider are for prompt jobs");
  } else if (!job.prompt && !job.skills.length) throw invalid("a job needs a prompt (or --skill), or --script");
  if (job.workdir !== null && !isAbsolute(job.workdir)) throw invalid(`--workdir needs an absolute path; got ${JSON.stringify(job.workdir)}`);
}

function defaultName(job: Pick<CronJob, "prompt" | "script" | "skills">): string {
  const base = job.script ?? job.prompt ?? job.skills.map((s) => `/${s}`).join(" ");
  const line = base.split("\n").find((l) => l.trim()) ?? "job";
  return line.trim().length > 48 ? `${line.trim().slice(0, 47)}…` : line.trim();
}

/** A new job from `add`'s fields, validated; nothing is stored yet. */
export function buildJob(profile: string, f: JobFields & { schedule: string; paused?: boolean }, now: number, timeZone: string): CronJob {
  const parsed = parseSchedule(f.schedule, now, timeZone);
  const script = f.script ?? null;
  const base = {
    mode: script !== null ? ("script" as const) : ("prompt" as const),
    prompt: f.prompt ?? null,
    script,
    skills: f.skills ?? [],
    model: f.model ?? null,
    provider: f.provider ?? null,
    workdir: f.workdir ?? null,
  };
  checkShape(base);
  return {
    id: newJobId(),
    name: f.name ?? defaultName(base),
    profile,
    schedule: f.schedule.trim(),
    parsed,
    ...base,
    enabled: !f.paused,
    deliver: parseDelivery(f.deliver),
    repeat: parsed.kind === "once" ? 1 : (f.repeat ?? null),
    runs: 0,
    nextRunAt: firstFire(parsed, now, timeZone),
    lastRunAt: null,
    lastStatus: null,
    lastError: null,
    running: null,
    finished: false,
    source: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The fields `edit` changes on `job`, validated against the job as it would be. Only these
 * fields are written, so a run finishing meanwhile loses nothing.
 */
export function editFields(job: CronJob, f: JobFields, now: number, timeZone: string): Partial<CronJob> {
  const out: Partial<CronJob> = { updatedAt: now };
  if (f.schedule !== undefined) {
    out.parsed = parseSchedule(f.schedule, now, timeZone);
    out.schedule = f.schedule.trim();
    out.nextRunAt = firstFire(out.parsed, now, timeZone);
    out.finished = false;
    out.runs = 0;
    if (out.parsed.kind === "once") out.repeat = 1;
    else if (job.parsed.kind === "once") out.repeat = null;
  }
  if (f.name !== undefined) out.name = f.name;
  if (f.prompt !== undefined) out.prompt = f.prompt;
  if (f.script !== undefined) out.script = f.script;
  if (f.skills !== undefined) out.skills = f.skills;
  if (f.model !== undefined) out.model = f.model;
  if (f.provider !== undefined) out.provider = f.provider;
  if (f.workdir !== undefined) out.workdir = f.workdir;
  if (f.deliver !== undefined) out.deliver = parseDelivery(f.deliver);
  if (f.repeat !== undefined) {
    if ((out.parsed ?? job.parsed).kind === "once" && f.repeat !== null && f.repeat !== 1)
      throw invalid("a one-shot runs once: --repeat is for recurring schedules");
    out.repeat = f.repeat;
  }
  const merged = { ...job, ...out };
  // Setting a script turns the job into a script job and the other way round.
  if (f.script !== undefined || f.prompt !== undefined) merged.mode = merged.script !== null ? "script" : "prompt";
  out.mode = merged.mode;
  checkShape(merged);
  return out;
}

/** A job as a distribution (or the user) declares it in `cron/<file>`: the same fields, YAML names. */
export function jobFromFile(profile: string, source: string, id: string, raw: Record<string, unknown>, now: number, timeZone: string): CronJob {
  const str = (key: string): string | undefined => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string" || !v) throw invalid(`${key} must be a non-empty string`);
    return v;
  };
  const skills = raw.skills;
  if (skills !== undefined && !(Array.isArray(skills) && skills.every((s) => typeof s === "string" && s))) throw invalid("skills must be a list of names");
  const repeat = raw.repeat;
  if (repeat !== undefined && repeat !== null && !(Number.isInteger(repeat) && (repeat as number) >= 1))
    throw invalid("repeat must be a whole number of at least 1");
  const schedule = str("schedule");
  if (!schedule) throw invalid("schedule is missing");
  const job = buildJob(
    profile,
    {
      schedule,
      name: str("name"),
      prompt: str("prompt"),
      script: str("script"),
      skills: skills as string[] | undefined,
      model: str("model"),
      provider: str("provider"),
      workdir: str("workdir"),
      deliver: str("deliver"),
      repeat: (repeat as number | undefined) ?? undefined,
      // Only `enabled: true` written in the file turns a job on; an installed distribution's files say false.
      paused: raw.enabled !== true,
    },
    now,
    timeZone,
  );
  return { ...job, id, source };
}

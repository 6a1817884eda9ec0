import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { toAgentError } from "../../shared/errors.js";
import type { CallContext } from "../../shared/protocol/index.js";
import type { CronJob, CronRun } from "../../shared/protocol/cron.js";
import type { Clock } from "../../shared/clock.js";
import type { ChatApi } from "../agent/api.js";
import { spawnGroup } from "../process/process-group.js";
import type { MessagingApi } from "../messaging/api.js";

/** What one run needs besides the job. */
export interface RunEnv {
  chat: ChatApi;
  /** The run's working directory (the job's, else the profile's folder). */
  cwd: string;
  /** The profile's environment (the daemon's, with its .env files filling the gaps). */
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Cron's clock: the timeout is measured on it. */
  clock: Clock;
  /** Aborted when the daemon stops: the run ends as interrupted. */
  signal: AbortSignal;
  /** The session of a prompt run exists (recorded on the job while it runs). */
  onSession(sessionId: string): void;
}

export type RunOutcome = Pick<CronRun, "status" | "error" | "output" | "sessionId">;

/** Output kept per run: the head and the tail of anything longer. */
const KEEP_CHARS = 64 * 1024;

export function clip(text: string): string {
  if (text.length <= KEEP_CHARS) return text;
  const half = KEEP_CHARS / 2;
  return `${text.slice(0, half)}\n[… ${text.length - KEEP_CHARS} characters cut …]\n${text.slice(-half)}`;
}

/** A prompt job: one turn in a fresh session of kind "cron", interrupted at the timeout. */
export async function runPrompt(job: CronJob, env: RunEnv): Promise<RunOutcome> {
  const chat = env.chat;
  let sessionId: string | null = null;
  let timedOut = false;
  let poll: NodeJS.Timeout | undefined;
  // The turn may not be tracked yet when the time is up: keep interrupting until it ends.
  const stop = () => {
    if (sessionId) chat.interrupt(sessionId);
    poll ??= setInterval(() => sessionId && chat.interrupt(sessionId), 200);
  };
  const timer = env.clock.setTimeout(() => {
    timedOut = true;
    stop();
  }, env.timeoutMs);
  const onAbort = () => stop();
  env.signal.addEventListener("abort", onAbort, { once: true });
  try {
    // No usable model (or skill): fail before any session exists.
    (await chat.modelsFor(job.profile)).provider({ provider: job.provider ?? undefined, model: job.model ?? undefined });
    const prompt = await buildPrompt(chat, job);
    const session = await chat.createSession({ profile: job.profile, cwd: env.cwd, title: `cron: ${job.name}`, kind: "cron" });
    sessionId = session.id;
    env.onSession(session.id);
    if (timedOut || env.signal.aborted) stop();
    const call: CallContext = { connectionId: 0, profile: job.profile, signal: env.signal, notify: () => undefined };
    const result = await chat.send(
      {
        sessionId: session.id,
        prompt,
        cwd: env.cwd,
        ...(job.provider ? { provider: job.provider } : {}),
        ...(job.model ? { model: job.model } : {}),
      },
      call,
    );
    if (result.stopReason === "interrupted") {
      if (timedOut) return { status: "timeout", error: `timed out after ${env.timeoutMs / 1000} s (AGENT_CRON_TIMEOUT)`, output: result.answer, sessionId };
      return { status: "interrupted", error: "the daemon stopped during the run", output: result.answer, sessionId };
    }
    const answer = result.footer && !result.answer.includes(result.footer) ? `${result.answer}\n${result.footer}` : result.answer;
    if (result.stopReason === "max_turns") return { status: "error", error: "the turn stopped at the turn limit (agent.max_turns)", output: answer, sessionId };
    return { status: "ok", error: null, output: answer, sessionId };
  } catch (error) {
    const e = toAgentError(error);
    if (timedOut) return { status: "timeout", error: `timed out after ${env.timeoutMs / 1000} s (AGENT_CRON_TIMEOUT)`, output: "", sessionId };
    if (env.signal.aborted) return { status: "interrupted", error: "the daemon stopped during the run", output: "", sessionId };
    return { status: "error", error: `${e.message} (${e.code})`, output: "", sessionId };
  } finally {
    env.clock.clearTimeout(timer);
    clearInterval(poll);
    env.signal.removeEventListener("abort", onAbort);
  }
}

/** The user message: each skill's instructions (the last one followed by the prompt), or the prompt. */
async function buildPrompt(chat: ChatApi, job: CronJob): Promise<string> {
  if (!job.skills.length) return job.prompt ?? "";
  const parts: string[] = [];
  for (const [i, name] of job.skills.entries()) {
    const last = i === job.skills.length - 1;
    parts.push((await chat.expandSlash(job.profile, name, last ? (job.prompt ?? "") : "")).message);
  }
  return parts.join("\n\n");
}

/**
 * A script job: `/bin/sh -c <script>` in its own process group, recorded in the command journal
 * (a daemon killed with -9 meanwhile stops it at its next start; the run is then recorded as
 * interrupted), stopped as a group (SIGTERM, then SIGKILL after the grace period) at the timeout
 * or when the daemon stops. A non-zero exit is an error; stdout and stderr are the output.
 */
export function runScript(job: CronJob, env: RunEnv): Promise<RunOutcome> {
  return new Promise((resolve) => {
    let output = "";
    let timedOut = false;
    const { child, group } = spawnGroup("/bin/sh", ["-c", job.script ?? ""], {
      cwd: env.cwd,
      env: { ...env.env, AGENT_PROFILE: job.profile, AGENT_CRON_JOB: job.id },
      label: `cron script ${job.id} (${job.profile}): ${job.script ?? ""}`,
    });
    const collect = (d: Buffer) => {
      output += d.toString("utf8");
      // Bounded while it runs: keep the head and the most recent output.
      if (output.length > 4 * KEEP_CHARS) output = clip(output);
    };
    child.stdout!.on("data", collect);
    child.stderr!.on("data", collect);
    const timer = env.clock.setTimeout(() => {
      timedOut = true;
      group?.stop();
    }, env.timeoutMs);
    const onAbort = () => group?.stop();
    env.signal.addEventListener("abort", onAbort, { once: true });
    const done = (outcome: RunOutcome) => {
      env.clock.clearTimeout(timer);
      env.signal.removeEventListener("abort", onAbort);
      // What a stopped script left in its group goes with it; the record goes in any case.
      group?.forget({ killLeftovers: group.stopping });
      resolve(outcome);
    };
    child.on("error", (error) => done({ status: "error", error: `the script could not start: ${error.message}`, output: clip(output), sessionId: null }));
    child.on("close", (code, signal) => {
      const out = clip(output);
      if (timedOut)
        return done({
          status: "timeout",
          error: `timed out after ${env.timeoutMs / 1000} s (AGENT_CRON_SCRIPT_TIMEOUT); killed`,
          output: out,
          sessionId: null,
        });
      if (env.signal.aborted) return done({ status: "interrupted", error: "the daemon stopped during the run", output: out, sessionId: null });
      if (code === 0) return done({ status: "ok", error: null, output: out, sessionId: null });
      done({
        status: "error",
        error: code !== null ? `the script exited with code ${code}` : `the script was killed by ${signal}`,
        output: out,
        sessionId: null,
      });
    });
  });
}

/**
 * Send a finished run's output where the job says: a file, or a chat through the messaging
 * feature (`<platform>:<chat>`, as `channel:<platform>:<chat>` or directly).
 */
export async function deliver(job: CronJob, run: Omit<CronRun, "delivery">, messaging: MessagingApi | null = null): Promise<CronRun["delivery"]> {
  const d = job.deliver;
  if (d.kind === "none") return { status: "none", detail: null };
  if (d.kind === "channel") {
    if (!messaging)
      return {
        status: "not_deliverable",
        detail: `no messaging adapter is configured for channel "${d.channel}"; the output is kept in \`agent cron logs ${job.id}\``,
      };
    const head = run.status === "ok" ? "" : `**${job.name}**: ${run.status}${run.error ? ` (${run.error})` : ""}\n\n`;
    const out = await messaging.deliver(d.channel, `${head}${run.output || "(no output)"}`, { profile: job.profile });
    return { status: out.status, detail: out.detail };
  }
  const block = `## ${job.name} (${job.id}): ${run.status} at ${new Date(run.finishedAt).toISOString()}\n\n${run.error ? `error: ${run.error}\n\n` : ""}${run.output}\n\n`;
  try {
    await mkdir(dirname(d.path), { recursive: true });
    await appendFile(d.path, block, "utf8");
    return { status: "delivered", detail: d.path };
  } catch (error) {
    return { status: "failed", detail: `could not append to ${d.path}: ${(error as Error).message}` };
  }
}

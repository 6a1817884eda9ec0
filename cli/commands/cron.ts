import { resolve } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { Params } from "../../shared/protocol/index.js";
import type { CronJob, CronRun } from "../../shared/protocol/cron.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { formatDuration, printResult, table } from "../output.js";
import { withDaemon } from "../with-daemon.js";

const SPEC = {
  usage: "agent cron <list|add|edit|pause|resume|run|remove|logs>",
  description: "Scheduled jobs of the profile (-p <profile>): a prompt run in a fresh session, or a shell script.",
  flags: {
    schedule: { type: "string" },
    prompt: { type: "string" },
    script: { type: "string" },
    name: { type: "string" },
    skill: { type: "string", isMultiple: true },
    model: { type: "string" },
    provider: { type: "string" },
    workdir: { type: "string" },
    deliver: { type: "string" },
    repeat: { type: "number" },
    paused: { type: "boolean" },
    clear: { type: "string", isMultiple: true },
    limit: { type: "number" },
  },
  help: `Subcommands
  list                          the profile's jobs
  add <schedule> [prompt]       a new job (or --prompt <text>, or --script <shell script>)
      [--name <n>] [--skill <s>]... [--model <m>] [--provider <p>] [--workdir <dir>]
      [--deliver none|file:<path>|<platform>:<chat>|teams] [--repeat <n>] [--paused]
  edit <id> [--schedule <s>] [--prompt <t>] [--script <s>] [--name <n>] [--skill <s>]...
      [--model <m>] [--provider <p>] [--workdir <dir>] [--deliver <t>] [--repeat <n>]
      [--clear prompt|script|model|provider|workdir|repeat]...
  pause <id> | resume <id>      stop / start firing (resume also enables a job a distribution installed)
  run <id>                      run now and print the outcome (refused while it is running)
  remove <id>                   delete the job and its runs
  logs <id> [--limit <n>]       recent runs with their output, newest first

Schedules
  every 30m | every 2h | every 1d | every 1h30m   a fixed interval (also s)
  "0 9 * * 1-5"                                   five-field cron expression (cron.timezone)
  2026-12-01T09:00 | 2026-12-01T09:00:00Z         one shot (without Z/offset: cron.timezone)
  45m | 2h                                        one shot, that long from now

Examples
  $ agent cron add "every 1d" "summarize yesterday's commits in ~/src/app" --deliver file:~/notes/commits.md
  $ agent cron add "0 7 * * 1-5" --skill standup --name standup
  $ agent cron add "every 15m" --script "df -h / | tail -1"
  $ agent cron logs c_1a2b3c4d --limit 5`,
} as const;

const CLEARABLE = ["prompt", "script", "model", "provider", "workdir", "repeat"] as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const f = cli.flags;
  const one = (usage: string): string => {
    if (args.length !== 1) throw new AgentError("usage.invalid", `usage: ${usage}`);
    return args[0]!;
  };
  const home = (p: string) => (p === "~" || p.startsWith("~/") ? `${process.env.HOME ?? ""}${p.slice(1)}` : p);
  const path = (p: string) => resolve(home(p));
  const deliver = (d: string | undefined) => (d?.startsWith("file:") ? `file:${path(d.slice(5))}` : d);
  const common = {
    ...(f.name !== undefined ? { name: f.name } : {}),
    ...(f.prompt !== undefined ? { prompt: f.prompt } : {}),
    ...(f.script !== undefined ? { script: f.script } : {}),
    ...(f.skill?.length ? { skills: f.skill } : {}),
    ...(f.model !== undefined ? { model: f.model } : {}),
    ...(f.provider !== undefined ? { provider: f.provider } : {}),
    ...(f.workdir !== undefined ? { workdir: path(f.workdir) } : {}),
    ...(f.deliver !== undefined ? { deliver: deliver(f.deliver) } : {}),
    ...(f.repeat !== undefined ? { repeat: f.repeat } : {}),
  };
  switch (sub) {
    case "list":
      if (args.length) throw new AgentError("usage.invalid", "agent cron list takes no arguments");
      return withDaemon(env, async (client) => {
        const r = await client.call("cron.list", {});
        printResult(r, json, () =>
          r.jobs.length ? renderJobs(r.jobs, Date.now()) : `no cron jobs in profile ${r.profile} (agent cron add <schedule> <prompt>)`,
        );
        return EXIT.ok;
      });
    case "add": {
      // The schedule is the first argument, or --schedule; the prompt follows it, or --prompt.
      const [schedule, prompt, ...extra] = f.schedule !== undefined ? [f.schedule, ...args] : args;
      if (schedule === undefined || extra.length)
        throw new AgentError("usage.invalid", "usage: agent cron add <schedule> [prompt] (quote a schedule with spaces)");
      if (prompt !== undefined && f.prompt !== undefined) throw new AgentError("usage.invalid", "give the prompt once: as an argument or as --prompt");
      if (f.clear?.length) throw new AgentError("usage.invalid", "--clear is for agent cron edit");
      const params: Params<"cron.add"> = { schedule, ...common, ...(prompt !== undefined ? { prompt } : {}), ...(f.paused ? { paused: true } : {}) };
      return withDaemon(env, async (client) => {
        const r = await client.call("cron.add", params);
        printResult(r, json, () => `added ${r.job.id} (${r.job.name}): ${describeJob(r.job, Date.now())}`);
        return EXIT.ok;
      });
    }
    case "edit": {
      const id = one("agent cron edit <id> [--schedule <s>] [--prompt <t>] ...");
      if (f.paused !== undefined) throw new AgentError("usage.invalid", "use agent cron pause|resume <id> to pause or resume");
      const params: Params<"cron.edit"> = { id, ...common, ...(f.schedule !== undefined ? { schedule: f.schedule } : {}) };
      for (const c of f.clear ?? []) {
        if (!(CLEARABLE as readonly string[]).includes(c))
          throw new AgentError("usage.invalid", `--clear takes one of ${CLEARABLE.join(", ")}; got ${JSON.stringify(c)}`);
        if (c in params) throw new AgentError("usage.invalid", `--clear ${c} and --${c} contradict each other`);
        (params as Record<string, unknown>)[c] = null;
      }
      if (Object.keys(params).length === 1) throw new AgentError("usage.invalid", "agent cron edit needs something to change (see --help)");
      return withDaemon(env, async (client) => {
        const r = await client.call("cron.edit", params);
        printResult(r, json, () => `edited ${r.job.id} (${r.job.name}): ${describeJob(r.job, Date.now())}`);
        return EXIT.ok;
      });
    }
    case "pause":
    case "resume": {
      const id = one(`agent cron ${sub} <id>`);
      return withDaemon(env, async (client) => {
        const r = await client.call(sub === "pause" ? "cron.pause" : "cron.resume", { id });
        printResult(r, json, () => `${sub === "pause" ? "paused" : "resumed"} ${r.job.id} (${r.job.name}): ${describeJob(r.job, Date.now())}`);
        return EXIT.ok;
      });
    }
    case "run": {
      const id = one("agent cron run <id>");
      return withDaemon(env, async (client) => {
        const r = await client.call("cron.run", { id });
        printResult(r, json, () => renderRun(r.run));
        return r.run.status === "ok" ? EXIT.ok : EXIT.failure;
      });
    }
    case "remove": {
      const id = one("agent cron remove <id>");
      return withDaemon(env, async (client) => {
        const r = await client.call("cron.remove", { id });
        printResult(r, json, () => `removed ${r.removed}`);
        return EXIT.ok;
      });
    }
    case "logs": {
      const id = one("agent cron logs <id> [--limit <n>]");
      return withDaemon(env, async (client) => {
        const r = await client.call("cron.logs", { id, ...(f.limit !== undefined ? { limit: f.limit } : {}) });
        printResult(r, json, () => (r.runs.length ? r.runs.map(renderRun).join("\n\n") : `no runs of ${r.job.id} yet`));
        return EXIT.ok;
      });
    }
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent cron needs a subcommand: list, add, edit, pause, resume, run, remove or logs");
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "cron ${sub}"; see \`agent cron --help\``);
  }
}

const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function when(ms: number | null, now: number): string {
  if (ms === null) return "-";
  const d = ms - now;
  return `${stamp(ms)} (${d >= 0 ? `in ${formatDuration(d)}` : `${formatDuration(-d)} ago`})`;
}

export function jobState(j: CronJob): string {
  if (j.running) return "running";
  if (j.finished) return "finished";
  return j.enabled ? "enabled" : j.source && !j.lastRunAt ? "disabled" : "paused";
}

function describeJob(j: CronJob, now: number): string {
  return `${j.schedule}, ${jobState(j)}${j.enabled && j.nextRunAt !== null ? `, next ${when(j.nextRunAt, now)}` : ""}`;
}

/** The jobs as a table (also `/cron` in the chat). */
export function renderJobs(jobs: CronJob[], now: number): string {
  return table(
    ["ID", "NAME", "SCHEDULE", "STATE", "NEXT RUN", "LAST"],
    jobs.map((j) => [
      j.id,
      j.name,
      j.schedule,
      jobState(j),
      j.enabled ? when(j.nextRunAt, now) : "-",
      j.lastStatus ? `${j.lastStatus}${j.lastRunAt ? ` ${stamp(j.lastRunAt)}` : ""}${j.lastError ? `: ${j.lastError}` : ""}` : "-",
    ]),
  );
}

export function renderRun(r: CronRun): string {
  const head = `${r.runId} ${r.trigger} ${r.status} at ${stamp(r.startedAt)} (${formatDuration(r.finishedAt - r.startedAt)})${r.sessionId ? ` session ${r.sessionId}` : ""}`;
  const lines = [head];
  if (r.skipped) lines.push(`skipped ${r.skipped} fire time(s)`);
  if (r.error) lines.push(`error: ${r.error}`);
  if (r.delivery.status !== "none") lines.push(`delivery: ${r.delivery.status}${r.delivery.detail ? ` (${r.delivery.detail})` : ""}`);
  if (r.output) lines.push(r.output.trimEnd());
  return lines.join("\n");
}

import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { BoardEvent, Task, TaskStatus, TaskSummary, WorkerProcess, WorkspaceMode } from "../../shared/protocol/kanban.js";
import { MAX_PLAN_TEXT } from "../../shared/protocol/kanban-limits.js";
import type { DaemonClient } from "../../shared/client/index.js";
import { parseCommand } from "../args.js";
import { confirmChange } from "../confirm.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printJson, printResult, table } from "../output.js";
import { TerminalTextFilter, terminalText } from "../../shared/terminal-text.js";
import { withDaemon } from "../with-daemon.js";
import { parseDurationSeconds } from "../../shared/duration.js";
import { envValue } from "../../shared/config/env.js";
import { WORKER_COLUMNS, workerCells, workerTitle } from "../../shared/kanban-ps-row.js";

/** As WORKSPACE_MODES in shared/protocol/kanban.ts (not imported: that module loads zod). */
const WORKSPACE_MODES = ["worktree", "dir", "scratch"];
const STATUSES = ["triage", "todo", "scheduled", "ready", "running", "blocked", "review", "done", "archived"];

const SPEC = {
  usage:
    "agent kanban <create|list|show|assign|link|unlink|comment|complete|block|unblock|schedule|archive|promote|reclaim|release|decompose|dispatch|runs|log|watch|stats|boards|diff|approve|reject|merge|prune|ps|kill>",
  hiddenSubcommands: ["heartbeat"],
  description: "The kanban board: tasks the dispatcher hands to workers (`agent chat` as the task's assignee profile).",
  flags: {
    board: { type: "string" },
    body: { type: "string" },
    assignee: { type: "string" },
    parent: { type: "string", isMultiple: true },
    priority: { type: "number" },
    triage: { type: "boolean" },
    maxRetries: { type: "number" },
    maxRuntime: { type: "string" },
    skill: { type: "string", isMultiple: true },
    idempotencyKey: { type: "string" },
    status: { type: "string", isMultiple: true },
    all: { type: "boolean" },
    summary: { type: "string" },
    result: { type: "string" },
    reason: { type: "string" },
    dryRun: { type: "boolean" },
    failureLimit: { type: "number" },
    follow: { type: "boolean", shortFlag: "f" },
    lines: { type: "number", shortFlag: "n" },
    fromFile: { type: "string" },
    yes: { type: "boolean", shortFlag: "y" },
    hold: { type: "boolean" },
    workspace: { type: "string" },
    base: { type: "string" },
    stat: { type: "boolean" },
    into: { type: "string" },
    squash: { type: "boolean" },
  },
  help: `Tasks
  create <title> [--body <text>] [--assignee <profile>] [--parent <id>]... [--priority N]
         [--triage] [--max-retries N] [--max-runtime 2h] [--skill <s>]... [--idempotency-key <k>] [--hold]
         [--workspace worktree|dir|scratch] [--base <ref>]
                                  worktree (the default inside a git repository): a git worktree and
                                  branch kanban/<id>-<slug> of its own, from HEAD or --base
  create --from-file plan.yaml [--hold] [--workspace <mode>] [--base <ref>]   a graph of tasks with assignees and links, created all
                                  at once or not at all (format: docs/kanban.md, "Plan files"; - reads stdin)
  release <id>... | --all         let held tasks (--hold) be dispatched
  list [--status <s>]... [--assignee <profile>] [--all]     (--all: archived too)
  show <id>                       runs <id>                  stats
  assign <id>... <profile>        link <parent> <child>      unlink <parent> <child>
  comment <id> <text>
  complete <id>... [--summary <text>] [--result <text>]     (one of them is required)
  block <id>... [reason]          unblock <id>...            schedule <id>... [reason]
  archive <id>...                 promote <id>...            reclaim <id>...
Worktrees and review
  diff <id> [--stat]              the task's branch against its base
  approve <id>...                 review → done (wakes dependents)
  reject <id> --reason <text>     review → ready; the reason is a comment for the next run
  merge <id> [--into <branch>] [--squash]   merge a done task's branch (refused on a conflict)
  prune                           remove the worktrees of tasks that are gone or archived
Processes
  ps [--json]                     running workers: pid, group CPU and RSS, runtime, heartbeat, log size
  kill <id>                       stop a task's worker group (recorded as killed; the task is blocked)
Dispatcher and decomposer
  dispatch [--dry-run] [--failure-limit N]   one tick now: what started, why the rest waits
  decompose [<id>...] | --all                split triage tasks with the model
  log <id> [--follow] [--lines N]            a task's worker output
  watch [--all]                              board events as they happen (Ctrl-C ends)
Boards
  boards list | boards create <name> | boards use <name>    --board <name> picks one per command
  boards delete <name> [-y]       delete a board and its tasks (asks first; refused while one runs)

Statuses: triage, todo, scheduled, ready, running, blocked, review, done, archived
(review: kanban.review required, until approve or reject).
Every command takes --json. Inside a worker (AGENT_KANBAN_TASK set) complete, block and
comment act as that worker, which may complete and block only its own task.`,
} as const;

type Flags = ReturnType<typeof parseCommand<typeof SPEC.flags>>["flags"];

function bad(message: string): AgentError {
  return new AgentError("kanban.invalid_argument", message);
}

export async function run(argv: string[], env: CliEnv): Promise<number> {
  // A mistake the parser finds (unknown subcommand or flag, a flag without its value) is a
  // usage error, exit 2, as in every group; the board's own refusals below exit 1.
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const f = cli.flags;
  const json = Boolean(f.json);
  const board = f.board;
  if (sub === undefined) {
    process.stdout.write(`usage: ${SPEC.usage}\n(agent kanban --help for every command)\n`);
    return EXIT.ok;
  }
  const command = COMMANDS[sub];
  if (!command) throw bad(`unknown command "agent kanban ${sub}" (agent kanban --help lists them)`);
  // Arguments are checked before the daemon is asked anything.
  const call = command(args, f, json, board);
  return withDaemon(env, call);
}

type Command = (args: string[], f: Flags, json: boolean, board: string | undefined) => (c: DaemonClient) => Promise<number>;

/** The worker's own task and run, when this runs inside a kanban worker. */
function workerRef(): { taskId: string; runId: string } | undefined {
  const taskId = envValue("AGENT_KANBAN_TASK");
  const runId = envValue("AGENT_KANBAN_RUN_ID");
  return taskId && runId ? { taskId, runId } : undefined;
}

function need(args: string[], n: number, usage: string): void {
  if (args.length < n) throw bad(`usage: ${usage}`);
}

function exactly(args: string[], n: number, usage: string): void {
  if (args.length !== n) throw bad(`usage: ${usage}`);
}

const TASK_ID = /^t_[0-9a-f]{8}$/;

/** Leading task ids, then free text (a reason, a profile). */
function idsThenText(args: string[]): { ids: string[]; rest: string[] } {
  let i = 0;
  while (i < args.length && TASK_ID.test(args[i]!)) i++;
  // A mistyped id must not become the reason text (or be skipped) while the others change.
  const stray = args[i];
  if (stray !== undefined && /^t_/.test(stray)) throw bad(`${stray} is not a task id (t_ and 8 hex digits)`);
  return { ids: args.slice(0, i), rest: args.slice(i) };
}

/** `90`, `90s`, `30m`, `2h`, `1d`, `1h30m` → seconds. */
export function parseDuration(text: string): number {
  const seconds = parseDurationSeconds(text);
  if (seconds === null) throw bad(`--max-runtime takes a duration such as 90s, 30m, 2h or 1h30m; got ${JSON.stringify(text)}`);
  return seconds;
}

const age = (ms: number) => {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : s < 86400 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86400)}d`;
};

function listTable(tasks: TaskSummary[]): string {
  if (!tasks.length) return "no tasks";
  return table(
    ["ID", "STATUS", "PRI", "ASSIGNEE", "AGE", "TITLE"],
    tasks.map((t) => [
      t.id,
      t.held ? `${t.status} (held)` : t.status,
      String(t.priority),
      t.assignee ?? "-",
      age(t.created_at),
      t.title + (t.reason ? `  (${t.reason})` : ""),
    ]),
  );
}

/** `kanban ps` as a table. */
export function psTable(workers: WorkerProcess[]): string {
  if (!workers.length) return "no running workers";
  const now = Date.now();
  return table(
    [...WORKER_COLUMNS, "TITLE"],
    workers.map((w) => [...workerCells(w, now), workerTitle(w)]),
  );
}

function gitLines(t: Task): string[] {
  const g = t.git;
  if (!g) return t.workspace_mode ? [`  workspace:   ${t.workspace_mode}${t.workspace ? ` (${t.workspace})` : ""}`] : [];
  const lines = [
    `  worktree:    ${g.path ?? "(made when dispatched)"}${g.removed ? " (removed)" : ""}`,
    `  branch:      ${g.branch ?? "-"} from ${g.base_ref ?? "-"}${g.base ? ` (${g.base.slice(0, 12)})` : ""}`,
  ];
  if (g.work)
    lines.push(
      `  work:        ${g.work.commits.length} commit(s), ${g.work.files_changed} file(s), +${g.work.insertions} -${g.work.deletions}`,
      ...g.work.commits.map((c) => `    ${c.sha.slice(0, 12)} ${c.subject}`),
    );
  if (g.merged) lines.push(`  merged:      into ${g.merged.into} (${g.merged.commit.slice(0, 12)})${g.merged.squash ? ", squashed" : ""}`);
  return lines;
}

function showText(t: Task): string {
  const when = (ms: number | null) => (ms ? new Date(ms).toISOString() : "-");
  return [
    `${t.id}  ${t.title}`,
    `  status:      ${t.status}${t.held ? ", held (agent kanban release " + t.id + " lets it run)" : ""}${t.reason ? ` (${t.reason})` : ""}`,
    `  assignee:    ${t.assignee ?? "-"}`,
    `  priority:    ${t.priority}`,
    `  parents:     ${t.parents.join(", ") || "-"}`,
    `  children:    ${t.children.join(", ") || "-"}`,
    `  failures:    ${t.consecutive_failures}${t.max_retries ? ` (max retries ${t.max_retries})` : ""}`,
    ...(t.max_runtime ? [`  max runtime: ${t.max_runtime}s`] : []),
    ...(t.skills.length ? [`  skills:      ${t.skills.join(", ")}`] : []),
    ...(t.idempotency_key ? [`  idempotency: ${t.idempotency_key}`] : []),
    ...gitLines(t),
    `  created:     ${when(t.created_at)}   started: ${when(t.started_at)}   completed: ${when(t.completed_at)}`,
    ...(t.body ? ["", t.body] : []),
    ...(t.summary ? ["", `summary: ${t.summary}`] : []),
    ...(t.result ? ["", `result: ${t.result}`] : []),
    ...(t.comments.length
      ? ["", `comments:${dropped(t.comments_dropped, "comment")}`, ...t.comments.map((c) => `  [${when(c.at)}] ${c.author}: ${c.body}`)]
      : []),
    ...(t.runs.length
      ? [
          "",
          `runs:${dropped(t.runs_dropped, "run")}`,
          ...t.runs.map((r) => `  ${r.run_id}  ${r.profile}  ${r.outcome}${r.detail ? ` (${r.detail})` : ""}  pid ${r.pid ?? "-"}`),
        ]
      : []),
    "",
    "events:",
    ...t.events.slice(-20).map((e) => `  [${when(e.at)}] ${e.type}${e.data ? ` ${JSON.stringify(e.data)}` : ""} (${e.by})`),
  ].join("\n");
}

/** The note after a heading of a capped list: how many older entries were dropped. */
const dropped = (n: number | undefined, what: string) => (n ? ` (${n} older ${what}${n === 1 ? "" : "s"} dropped; the newest are kept)` : "");

const tasksText = (verb: string) => (r: { tasks: Task[] }) => r.tasks.map((t) => `${verb} ${t.id} (${t.status})`).join("\n");

/** The status an event moved its task from, when it is a status change (`from`/`to` in its data). */
function movedFrom(e: BoardEvent): string | undefined {
  const from = e.data?.from;
  return typeof from === "string" && STATUSES.includes(from) && e.data?.to === e.status ? from : undefined;
}

/** A status change that left the status as it was (promoting a task that was already ready): not shown. */
export function isNoOpTransition(e: BoardEvent): boolean {
  return movedFrom(e) === e.status;
}

function eventLine(e: BoardEvent): string {
  const from = movedFrom(e);
  const { from: _from, to: _to, ...rest } = e.data ?? {};
  const data = from !== undefined ? rest : (e.data ?? {});
  const change = from !== undefined ? `${from} → ${e.status}` : `(${e.status})`;
  return `${new Date(e.at).toISOString()}  ${e.board}  ${e.task_id}  ${e.type}  ${change}${Object.keys(data).length ? `  ${JSON.stringify(data)}` : ""}  (${e.by})`;
}

/** Commands that act on task ids (several at once) with no other argument. */
const idsOnly =
  (method: "kanban.unblock" | "kanban.archive" | "kanban.promote" | "kanban.reclaim", verb: string): Command =>
  (args, _f, json, board) => {
    need(args, 1, `agent kanban ${method.slice(7)} <id>...`);
    return async (c) => {
      const r = await c.call(method, { board, ids: args });
      printResult(r, json, tasksText(verb));
      return EXIT.ok;
    };
  };

/** `create --from-file`: the CLI reads the file; the daemon checks it and creates every task or none. */
function createFromFile(args: string[], f: Flags, json: boolean, board: string | undefined): (c: DaemonClient) => Promise<number> {
  if (args.length) throw bad("with --from-file the titles come from the file; give no title");
  const perTask = (["body", "assignee", "parent", "priority", "triage", "maxRetries", "maxRuntime", "skill", "idempotencyKey"] as const).filter(
    (k) => f[k] !== undefined && f[k] !== false,
  );
  if (perTask.length) throw bad(`--from-file takes each task's settings from the file; --${kebab(perTask[0]!)} does not apply (only --hold and --board do)`);
  const path = f.fromFile!;
  let text: string;
  const tooBig = (size: string) =>
    bad(`${path === "-" ? "stdin" : path} is ${size}; a plan file is at most ${MAX_PLAN_TEXT / 1024 ** 2} MiB (split it into several)`);
  try {
    // Not read at all when larger than a plan can be (a 50 MB file would be read, sent and refused).
    if (path !== "-") {
      const size = statSync(path).size;
      if (size > MAX_PLAN_TEXT * 4) throw tooBig(`${(size / 1024 ** 2).toFixed(1)} MiB`);
    }
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (error) {
    if (error instanceof AgentError) throw error;
    throw bad(`cannot read ${path === "-" ? "stdin" : path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (text.length > MAX_PLAN_TEXT) throw tooBig(`${(text.length / 1024 ** 2).toFixed(1)} MiB of text`);
  const mode = workspaceMode(f);
  return async (c) => {
    const r = await c.call("kanban.createPlan", {
      board,
      text,
      file: path === "-" ? "stdin" : basename(path),
      workspace: process.cwd(),
      ...(mode ? { workspaceMode: mode } : {}),
      ...(f.base !== undefined ? { base: f.base } : {}),
      ...(f.hold ? { hold: true } : {}),
    });
    printResult(r, json, () =>
      [
        `created ${r.tasks.length} task(s) on board ${r.board}${f.hold ? " (held: agent kanban release --all lets them run)" : ""}`,
        ...Object.entries(r.ids).map(([local, id]) => {
          const t = r.tasks.find((x) => x.id === id)!;
          return `  ${local.padEnd(16)} ${id}  ${t.status}${t.held ? ", held" : ""}  ${t.assignee ?? "-"}  ${terminalText(t.title)}`;
        }),
      ].join("\n"),
    );
    return EXIT.ok;
  };
}

/** --workspace, checked. */
function workspaceMode(f: Flags): WorkspaceMode | undefined {
  if (f.workspace === undefined) return undefined;
  if (!(WORKSPACE_MODES as readonly string[]).includes(f.workspace))
    throw bad(`--workspace takes worktree, dir or scratch; got ${JSON.stringify(f.workspace)}`);
  return f.workspace as WorkspaceMode;
}

/** A diff for a terminal: escapes stripped (it is the model's text), lines coloured when stdout is a terminal. */
export function diffText(text: string, colour: boolean): string {
  const clean = terminalText(text);
  if (!colour) return clean;
  return clean
    .split("\n")
    .map((l) =>
      /^(\+\+\+|---) /.test(l)
        ? `\x1b[1m${l}\x1b[0m`
        : l.startsWith("+")
          ? `\x1b[32m${l}\x1b[0m`
          : l.startsWith("-")
            ? `\x1b[31m${l}\x1b[0m`
            : l.startsWith("@@")
              ? `\x1b[36m${l}\x1b[0m`
              : /^diff --git /.test(l)
                ? `\x1b[1m${l}\x1b[0m`
                : l,
    )
    .join("\n");
}

const kebab = (k: string) => k.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`);

const COMMANDS: Record<string, Command> = {
  create: (args, f, json, board) => {
    if (f.fromFile !== undefined) return createFromFile(args, f, json, board);
    exactly(args, 1, 'agent kanban create "<title>" [options] (quote a title of several words)');
    if (!args[0]!.trim()) throw bad('a task needs a title: agent kanban create "<title>"');
    const maxRuntime = f.maxRuntime !== undefined ? parseDuration(f.maxRuntime) : undefined;
    const mode = workspaceMode(f);
    return async (c) => {
      const r = await c.call("kanban.create", {
        ...(mode ? { workspaceMode: mode } : {}),
        ...(f.base !== undefined ? { base: f.base } : {}),
        board,
        title: args[0]!,
        ...(f.body !== undefined ? { body: f.body } : {}),
        ...(f.assignee !== undefined ? { assignee: f.assignee } : {}),
        ...(f.parent?.length ? { parents: f.parent } : {}),
        ...(f.priority !== undefined ? { priority: f.priority } : {}),
        ...(f.triage ? { triage: true } : {}),
        ...(f.maxRetries !== undefined ? { maxRetries: f.maxRetries } : {}),
        ...(maxRuntime !== undefined ? { maxRuntime } : {}),
        ...(f.skill?.length ? { skills: f.skill } : {}),
        ...(f.idempotencyKey !== undefined ? { idempotencyKey: f.idempotencyKey } : {}),
        workspace: process.cwd(),
        ...(f.hold ? { hold: true } : {}),
      });
      if (r.notice) process.stderr.write(terminalText(`note: ${r.notice}`) + "\n");
      printResult(
        r,
        json,
        () =>
          `${r.created ? "created" : "exists"} ${r.task.id} (${r.task.status}${r.task.held ? ", held" : ""}, ${r.task.assignee ?? "unassigned"})` +
          (r.task.git?.branch ? `\n  worktree ${terminalText(r.task.git.path ?? "")} on branch ${terminalText(r.task.git.branch)}` : ""),
      );
      return EXIT.ok;
    };
  },
  list: (args, f, json, board) => {
    exactly(args, 0, "agent kanban list [--status <s>]... [--assignee <profile>] [--all]");
    const status = (f.status ?? []).flatMap((s) => s.split(",")).filter(Boolean);
    for (const s of status) if (!STATUSES.includes(s)) throw bad(`unknown status "${s}"; statuses: ${STATUSES.join(", ")}`);
    return async (c) => {
      const r = await c.call("kanban.list", {
        board,
        ...(status.length ? { status: status as TaskStatus[] } : {}),
        ...(f.assignee !== undefined ? { assignee: f.assignee } : {}),
        ...(f.all ? { all: true } : {}),
      });
      printResult(r, json, () => listTable(r.tasks));
      return EXIT.ok;
    };
  },
  show: (args, _f, json, board) => {
    exactly(args, 1, "agent kanban show <id>");
    return async (c) => {
      const r = await c.call("kanban.show", { board, id: args[0]! });
      printResult(r, json, () => showText(r.task));
      return EXIT.ok;
    };
  },
  assign: (args, f, json, board) => {
    const { ids, rest } = idsThenText(args);
    const assignee = f.assignee ?? rest[0];
    if (!ids.length || !assignee || rest.length > (f.assignee ? 0 : 1)) throw bad("usage: agent kanban assign <id>... <profile>");
    return async (c) => {
      const r = await c.call("kanban.assign", { board, ids, assignee });
      printResult(r, json, () => r.tasks.map((t) => `assigned ${t.id} to ${t.assignee}`).join("\n"));
      return EXIT.ok;
    };
  },
  link: (args, _f, json, board) => {
    exactly(args, 2, "agent kanban link <parent> <child>   (the child waits for the parent)");
    return async (c) => {
      const r = await c.call("kanban.link", { board, parent: args[0]!, child: args[1]! });
      printResult(r, json, () => `linked ${r.parent.id} → ${r.child.id} (${r.child.id} is ${r.child.status})`);
      return EXIT.ok;
    };
  },
  unlink: (args, _f, json, board) => {
    exactly(args, 2, "agent kanban unlink <parent> <child>");
    return async (c) => {
      const r = await c.call("kanban.unlink", { board, parent: args[0]!, child: args[1]! });
      printResult(r, json, () => `unlinked ${r.parent.id} → ${r.child.id} (${r.child.id} is ${r.child.status})`);
      return EXIT.ok;
    };
  },
  comment: (args, _f, json, board) => {
    need(args, 2, 'agent kanban comment <id> "<text>"');
    const body = args.slice(1).join(" ");
    const worker = workerRef();
    return async (c) => {
      const r = await c.call("kanban.comment", { board, id: args[0]!, body, ...(worker ? { worker } : {}) });
      printResult(r, json, () => `commented on ${r.task.id}`);
      return EXIT.ok;
    };
  },
  complete: (args, f, json, board) => {
    need(args, 1, "agent kanban complete <id>... --summary <text> [--result <text>]");
    if (!f.summary?.trim() && !f.result?.trim()) throw bad("completing a task needs --summary <text> or --result <text>");
    const worker = workerRef();
    return async (c) => {
      const r = await c.call("kanban.complete", { board, ids: args, summary: f.summary, result: f.result, ...(worker ? { worker } : {}) });
      printResult(r, json, tasksText("completed"));
      return EXIT.ok;
    };
  },
  block: (args, f, json, board) => {
    const { ids, rest } = idsThenText(args);
    if (!ids.length) throw bad("usage: agent kanban block <id>... [reason]");
    const reason = f.reason ?? (rest.join(" ") || undefined);
    const worker = workerRef();
    return async (c) => {
      const r = await c.call("kanban.block", { board, ids, reason, ...(worker ? { worker } : {}) });
      printResult(r, json, tasksText("blocked"));
      return EXIT.ok;
    };
  },
  schedule: (args, f, json, board) => {
    const { ids, rest } = idsThenText(args);
    if (!ids.length) throw bad("usage: agent kanban schedule <task_id>... [reason]");
    const reason = f.reason ?? (rest.join(" ") || undefined);
    return async (c) => {
      const r = await c.call("kanban.schedule", { board, ids, reason });
      printResult(r, json, tasksText("scheduled"));
      return EXIT.ok;
    };
  },
  release: (args, f, json, board) => {
    if (f.all && args.length) throw bad("give task ids or --all, not both");
    if (!f.all && !args.length) throw bad("usage: agent kanban release <id>... | --all");
    return async (c) => {
      const r = await c.call("kanban.release", { board, ...(f.all ? { all: true } : { ids: args }) });
      printResult(r, json, () => (r.tasks.length ? tasksText("released")(r) : "no held tasks"));
      return EXIT.ok;
    };
  },
  diff: (args, f, json, board) => {
    exactly(args, 1, "agent kanban diff <id> [--stat]");
    return async (c) => {
      const r = await c.call("kanban.diff", { board, id: args[0]!, ...(f.stat ? { stat: true } : {}) });
      if (json) printJson(r);
      else if (!r.text) process.stderr.write(`no changes on ${terminalText(r.branch)} since ${r.base.slice(0, 12)}\n`);
      else process.stdout.write(diffText(r.text, Boolean(process.stdout.isTTY) && !process.env.NO_COLOR) + (r.text.endsWith("\n") ? "" : "\n"));
      return EXIT.ok;
    };
  },
  approve: (args, _f, json, board) => {
    need(args, 1, "agent kanban approve <id>...");
    return async (c) => {
      const r = await c.call("kanban.approve", { board, ids: args });
      printResult(r, json, tasksText("approved"));
      return EXIT.ok;
    };
  },
  reject: (args, f, json, board) => {
    const { ids, rest } = idsThenText(args);
    const reason = f.reason ?? (rest.join(" ") || undefined);
    if (ids.length !== 1 || !reason?.trim()) throw bad("usage: agent kanban reject <id> --reason <text>");
    return async (c) => {
      const r = await c.call("kanban.reject", { board, id: ids[0]!, reason });
      printResult(r, json, () => `rejected ${r.task.id} (${r.task.status}); the reason is a comment for its next run`);
      return EXIT.ok;
    };
  },
  merge: (args, f, json, board) => {
    exactly(args, 1, "agent kanban merge <id> [--into <branch>] [--squash]");
    return async (c) => {
      const r = await c.call("kanban.merge", {
        board,
        id: args[0]!,
        ...(f.into !== undefined ? { into: f.into } : {}),
        ...(f.squash ? { squash: true } : {}),
      });
      printResult(
        r,
        json,
        () => `merged ${terminalText(r.task.git?.branch ?? "")} into ${terminalText(r.into)}${f.squash ? " (squashed)" : ""}: ${r.commit.slice(0, 12)}`,
      );
      return EXIT.ok;
    };
  },
  prune: (args, _f, json) => {
    exactly(args, 0, "agent kanban prune");
    return async (c) => {
      const r = await c.call("kanban.prune", {});
      printResult(r, json, () => (r.removed.length ? r.removed.map((p) => `removed ${terminalText(p)}`).join("\n") : "nothing to prune"));
      return EXIT.ok;
    };
  },
  ps: (args, _f, json, board) => {
    exactly(args, 0, "agent kanban ps [--json]");
    return async (c) => {
      const r = await c.call("kanban.ps", { board });
      printResult(r, json, () => psTable(r.workers));
      return EXIT.ok;
    };
  },
  kill: (args, _f, json, board) => {
    exactly(args, 1, "agent kanban kill <id>");
    return async (c) => {
      const r = await c.call("kanban.kill", { board, id: args[0]! });
      printResult(r, json, () => `killed the worker of ${r.task.id} (${r.task.status})`);
      return EXIT.ok;
    };
  },
  unblock: idsOnly("kanban.unblock", "unblocked"),
  archive: idsOnly("kanban.archive", "archived"),
  promote: idsOnly("kanban.promote", "promoted"),
  reclaim: idsOnly("kanban.reclaim", "reclaimed"),
  heartbeat: (args, _f, json, board) => {
    exactly(args, 0, "agent kanban heartbeat   (inside a worker: AGENT_KANBAN_TASK and AGENT_KANBAN_RUN_ID)");
    const worker = workerRef();
    if (!worker) throw bad("heartbeat runs inside a kanban worker (AGENT_KANBAN_TASK and AGENT_KANBAN_RUN_ID are not set)");
    return async (c) => {
      const r = await c.call("kanban.heartbeat", { board, taskId: worker.taskId, runId: worker.runId });
      printResult(r, json, () => `heartbeat ${r.task.id}`);
      return EXIT.ok;
    };
  },
  runs: (args, _f, json, board) => {
    exactly(args, 1, "agent kanban runs <id>");
    return async (c) => {
      const r = await c.call("kanban.runs", { board, id: args[0]! });
      printResult(r, json, () =>
        r.runs.length
          ? (r.runs_dropped ? `${r.runs_dropped} older run(s) dropped; the newest ${r.runs.length} are kept\n` : "") +
            table(
              ["RUN", "PROFILE", "OUTCOME", "STARTED", "ENDED", "PID", "DETAIL"],
              r.runs.map((x) => [
                x.run_id,
                x.profile,
                x.outcome,
                new Date(x.started_at).toISOString(),
                x.ended_at ? new Date(x.ended_at).toISOString() : "-",
                String(x.pid ?? "-"),
                x.detail ?? "",
              ]),
            )
          : `${r.task_id} has no runs yet`,
      );
      return EXIT.ok;
    };
  },
  stats: (args, _f, json, board) => {
    exactly(args, 0, "agent kanban stats");
    return async (c) => {
      const r = await c.call("kanban.stats", { board });
      printResult(r, json, () =>
        [
          `board ${r.board}: ${r.total} task(s)`,
          ...Object.entries(r.by_status)
            .filter(([, n]) => n > 0)
            .map(([s, n]) => `  ${s.padEnd(10)} ${n}`),
          ...(Object.keys(r.by_assignee).length ? ["open tasks by assignee:", ...Object.entries(r.by_assignee).map(([a, n]) => `  ${a.padEnd(20)} ${n}`)] : []),
        ].join("\n"),
      );
      return EXIT.ok;
    };
  },
  dispatch: (args, f, json, board) => {
    exactly(args, 0, "agent kanban dispatch [--dry-run] [--failure-limit N]");
    if (f.failureLimit !== undefined && (!Number.isInteger(f.failureLimit) || f.failureLimit < 1))
      throw bad("--failure-limit takes a whole number of at least 1");
    return async (c) => {
      const r = await c.call("kanban.dispatch", {
        board,
        ...(f.dryRun ? { dryRun: true } : {}),
        ...(f.failureLimit !== undefined ? { failureLimit: f.failureLimit } : {}),
      });
      printResult(r, json, () =>
        [
          `${r.dryRun ? "would start" : "started"} ${r.spawned.length} worker(s)`,
          ...r.spawned.map((s) => `  ${s.task_id}  as ${s.assignee ?? "?"}${s.pid ? `  pid ${s.pid}` : ""}`),
          ...(r.skipped.length ? [`skipped ${r.skipped.length}:`, ...r.skipped.map((s) => `  ${s.task_id}  ${s.reason}`)] : []),
        ].join("\n"),
      );
      return EXIT.ok;
    };
  },
  decompose: (args, f, json, board) => {
    if (f.all && args.length) throw bad("give task ids or --all, not both");
    if (!f.all && !args.length) throw bad("usage: agent kanban decompose <id>... | --all");
    return async (c) => {
      const r = await c.call("kanban.decompose", { board, ...(f.all ? { all: true } : { taskIds: args }) });
      printResult(
        r,
        json,
        () =>
          r.results
            .map((x) =>
              x.ok
                ? x.fanout
                  ? `${x.task_id}: split into ${x.child_ids.join(", ")}`
                  : `${x.task_id}: kept as one task (tightened and promoted)`
                : `${x.task_id}: left in triage: ${x.reason}`,
            )
            .join("\n") || "nothing to decompose",
      );
      return r.results.every((x) => x.ok) ? EXIT.ok : EXIT.failure;
    };
  },
  log: (args, f, json, board) => {
    exactly(args, 1, "agent kanban log <id> [--follow] [--lines N]");
    return async (c) => {
      const abort = new AbortController();
      const stop = () => abort.abort();
      process.once("SIGINT", stop);
      // One filter for the whole stream: an escape sequence split between two pieces is still removed whole.
      const clean = new TerminalTextFilter();
      const off = c.onEvent((e) => {
        if (e.topic !== "kanban.log") return;
        const text = (e.data as { text: string }).text;
        if (json) printJson({ text }, 0);
        else process.stdout.write(clean.push(text));
      });
      try {
        const r = await c
          .call("kanban.log", { board, taskId: args[0]!, ...(f.follow ? { follow: true } : {}), ...(f.lines ? { lines: f.lines } : {}) }, abort.signal)
          .catch((error) => {
            if (abort.signal.aborted) return null;
            throw error;
          });
        // A follow of a task that is not running answers with the log at once (and ends); a
        // running task's log arrived as notifications, from its run's header on.
        if (r && f.follow && r.text) {
          if (json) printJson({ text: r.text }, 0);
          else process.stdout.write(terminalText(r.text));
        } else if (r && !f.follow) {
          if (json) printJson(r);
          else if (r.text) process.stdout.write(terminalText(r.text));
          else process.stderr.write(`no log for ${r.task_id} yet\n`);
        }
        return EXIT.ok;
      } finally {
        off();
        process.off("SIGINT", stop);
        if (!json) process.stdout.write(clean.end());
      }
    };
  },
  watch: (args, f, json, board) => {
    exactly(args, 0, "agent kanban watch [--all]");
    return async (c) => {
      const abort = new AbortController();
      const stop = () => abort.abort();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      c.onEvent((e) => {
        if (e.topic !== "kanban.event") return;
        const event = e.data as BoardEvent;
        if (isNoOpTransition(event)) return;
        if (json) printJson(event, 0);
        else process.stdout.write(terminalText(eventLine(event)) + "\n");
      });
      if (!json) process.stderr.write(`watching board ${board ?? "(current)"}${f.all ? " and every other" : ""}; Ctrl-C ends\n`);
      await c.call("kanban.watch", { board, ...(f.all ? { all: true } : {}) }, abort.signal).catch((error) => {
        if (!abort.signal.aborted) throw error;
      });
      return EXIT.ok;
    };
  },
  boards: (args, f, json) => {
    const [what, ...rest] = args;
    if (what === "list" || what === undefined) {
      exactly(rest, 0, "agent kanban boards list");
      return async (c) => {
        const r = await c.call("kanban.boards.list", {});
        printResult(r, json, () =>
          table(
            ["", "BOARD", "TASKS"],
            r.boards.map((b) => [b.current ? "*" : "", b.name, String(b.tasks)]),
          ),
        );
        return EXIT.ok;
      };
    }
    if (what === "create" || what === "use") {
      exactly(rest, 1, `agent kanban boards ${what} <name>`);
      if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(rest[0]!)) throw bad(`board names are [a-z0-9][a-z0-9_-]{0,63}; got ${JSON.stringify(rest[0])}`);
      return async (c) => {
        if (what === "create") {
          const r = await c.call("kanban.boards.create", { name: rest[0]! });
          printResult(r, json, () => `${r.created ? "created" : "exists:"} board ${r.board.name}`);
        } else {
          const r = await c.call("kanban.boards.use", { name: rest[0]! });
          printResult(r, json, () => `now using board ${r.current}`);
        }
        return EXIT.ok;
      };
    }
    if (what === "delete") {
      exactly(rest, 1, "agent kanban boards delete <name> [-y]");
      return async (c) => {
        const name = rest[0]!;
        const info = (await c.call("kanban.boards.list", {})).boards.find((b) => b.name === name);
        if (!info) throw new AgentError("kanban.board_not_found", `no board named "${name}" (agent kanban boards list)`, { board: name });
        if (!(await confirmChange(`Delete board ${name} and its ${info.tasks} task(s)?`, Boolean(f.yes), "kanban.invalid_argument"))) return EXIT.failure;
        const r = await c.call("kanban.boards.delete", { name });
        printResult(r, json, () => `deleted board ${r.board} (${r.tasks} task(s)); current board: ${r.current}`);
        return EXIT.ok;
      };
    }
    throw bad("usage: agent kanban boards list|create <name>|use <name>|delete <name>");
  },
};

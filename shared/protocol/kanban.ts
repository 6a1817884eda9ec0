import { z } from "zod";
import { MAX_PLAN_TEXT } from "./kanban-limits.js";
import { rpc } from "./define.js";

/**
 * The kanban group. A board is a `board` actor (one default board, more with `boards.create`);
 * every method takes an optional `board` (default: the current board, `boards.use`). Task ids
 * are `t_` + 8 hex. Statuses and the rules between them: README "Kanban".
 */

export const TASK_STATUSES = ["triage", "todo", "scheduled", "ready", "running", "blocked", "review", "done", "archived"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** How a worker process ended, as the dispatcher reports it (`endRun`). */
export const RUN_OUTCOMES = ["spawn_failed", "crashed", "timed_out", "exited_clean", "requeue", "killed"] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export interface TaskComment {
  author: string;
  body: string;
  at: number;
}

export interface TaskEvent {
  /** Board-wide, increasing. */
  seq: number;
  at: number;
  type: string;
  /** Who made the change: `cli`, `api`, `dispatcher`, `worker:<run id>`, `decomposer`, ... */
  by: string;
  data?: Record<string, unknown>;
}

export interface TaskRun {
  run_id: string;
  profile: string;
  started_at: number;
  ended_at: number | null;
  /** running, then how it ended: completed, blocked, scheduled, reclaimed, or a RunOutcome. */
  outcome: string;
  detail: string | null;
  pid: number | null;
  pgid: number | null;
  log_path: string | null;
  last_heartbeat: number;
}

export interface Task {
  id: string;
  board: string;
  title: string;
  body: string;
  status: TaskStatus;
  /** A profile name; null only for a triage task not yet decomposed or promoted. */
  assignee: string | null;
  /** Higher runs first. */
  priority: number;
  parents: string[];
  children: string[];
  /** The newest comments and runs (README "Kanban": limits per task); the counts say how many older ones were dropped. */
  comments: TaskComment[];
  comments_dropped?: number;
  events: TaskEvent[];
  runs: TaskRun[];
  runs_dropped?: number;
  current_run: string | null;
  consecutive_failures: number;
  max_retries: number | null;
  /** Seconds. */
  max_runtime: number | null;
  skills: string[];
  /** Where the worker runs (the creator's working directory, or the task's worktree). */
  workspace: string | null;
  /** worktree, dir or scratch (older tasks: absent, as dir when workspace is set, else scratch). */
  workspace_mode?: WorkspaceMode;
  /** The task's git worktree and branch (mode worktree), its work and merge. */
  git?: TaskGit | null;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  updated_at: number;
  idempotency_key: string | null;
  result: string | null;
  summary: string | null;
  /** Why it is blocked, scheduled or left in triage. */
  reason: string | null;
  /** Set on a root the decomposer fanned out. */
  decomposed: boolean;
  /** Created with --hold: stays `todo`, never dispatched, until `kanban release` (older tasks: false). */
  held: boolean;
}

/** Where a task's worker runs: its own git worktree and branch, the creating directory, or a scratch directory. */
export const WORKSPACE_MODES = ["worktree", "dir", "scratch"] as const;
export type WorkspaceMode = (typeof WORKSPACE_MODES)[number];

/** What a task's work came to at completion (the daemon committed uncommitted changes with the summary). */
export interface TaskWork {
  commits: Array<{ sha: string; subject: string }>;
  /** `git diff --stat` against the base, as git prints it. */
  stat: string;
  files_changed: number;
  insertions: number;
  deletions: number;
  /** The commit the daemon made of uncommitted changes, or null. */
  committed: string | null;
  head: string;
  recorded_at: number;
}

/** A task's git worktree (workspace mode `worktree`). */
export interface TaskGit {
  /** The repository's main worktree. */
  repo: string;
  /** The commit the branch starts from; null until the worktree exists for a task created before its parents finished (null base: the repository's HEAD then). */
  base: string | null;
  /** What the base was named as: a branch, `--base <ref>`, or the parents' branches. */
  base_ref: string | null;
  /** `kanban/<task-id>-<slug>`; null until the worktree is created (a decomposer's or a plan's task: when it is dispatched). */
  branch: string | null;
  path: string | null;
  /** The worktree was removed (after a merge or an archive, or by prune); the branch stays. */
  removed: boolean;
  work: TaskWork | null;
  merged: { into: string; commit: string; squash: boolean; at: number } | null;
}

/** One running worker as `kanban.ps` sees it: CPU and RSS are summed over its process group (/proc). */
export interface WorkerProcess {
  task_id: string;
  board: string;
  title: string;
  profile: string;
  run_id: string;
  pid: number;
  pgid: number;
  /** Processes in the group now. */
  processes: number;
  /** CPU seconds used by the group's live processes (user + system). */
  cpu_seconds: number;
  /** Percent of one core since the previous ps (the first: since the run started). */
  cpu_percent: number;
  rss_bytes: number;
  started_at: number;
  runtime_seconds: number;
  last_heartbeat: number;
  log_path: string | null;
  log_bytes: number;
  /** Whether the daemon started it (false: adopted after a restart). */
  adopted: boolean;
}

/** What `list` returns per task (the full record is `show`). */
export interface TaskSummary {
  id: string;
  title: string;
  status: TaskStatus;
  assignee: string | null;
  priority: number;
  parents: string[];
  children: string[];
  consecutive_failures: number;
  created_at: number;
  updated_at: number;
  reason: string | null;
  /** Held (--hold) until `kanban release`. */
  held: boolean;
}

/** One change, as `watch` and `onEvent` see it. */
export interface BoardEvent extends TaskEvent {
  board: string;
  task_id: string;
  /** The task's status after the change. */
  status: TaskStatus;
}

export interface BoardStats {
  board: string;
  total: number;
  by_status: Record<TaskStatus, number>;
  by_assignee: Record<string, number>;
}

export interface BoardInfo {
  name: string;
  current: boolean;
  tasks: number;
}

/** What one dispatcher tick did (or, on a dry run, would do), and why each ready task it left was left. */
export interface DispatchReport {
  dryRun: boolean;
  spawned: Array<{ task_id: string; assignee?: string; run_id: string | null; pid: number | null }>;
  skipped: Array<{ task_id: string; assignee?: string; reason: string }>;
  [extra: string]: unknown;
}

export interface DecomposeResult {
  ok: boolean;
  task_id: string;
  reason: string | null;
  fanout: boolean;
  child_ids: string[];
}

export const BOARD_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** The largest plan file `kanban create --from-file` takes (declared where the CLI reads it without zod). */
export { MAX_PLAN_TEXT };
export const TASK_ID = /^t_[0-9a-f]{8}$/;

const board = z.string().min(1).max(64).optional();
const id = z.string().min(1).max(100);
const ids = z.array(id).min(1).max(1000);
const text = (max: number) => z.string().max(max);
/** A worker's own task and run (its AGENT_KANBAN_TASK / AGENT_KANBAN_RUN_ID). */
const worker = z
  .object({ taskId: id, runId: z.string().min(1).max(100) })
  .strict()
  .optional();
const tasks = rpc<{ tasks: Task[] }>();

export const kanbanMethods = {
  "kanban.create": rpc<{ task: Task; created: boolean; notice: string | null }>()(() =>
    z
      .object({
        board,
        title: z.string().trim().min(1).max(500),
        body: text(100_000).optional(),
        assignee: z.string().min(1).max(64).optional(),
        parents: z.array(id).max(100).optional(),
        priority: z.number().int().min(-1000).max(1000).optional(),
        triage: z.boolean().optional(),
        maxRetries: z.number().int().min(1).max(1000).optional(),
        /** Seconds. */
        maxRuntime: z
          .number()
          .positive()
          .max(30 * 24 * 3600)
          .optional(),
        skills: z.array(z.string().min(1).max(200)).max(50).optional(),
        idempotencyKey: z.string().min(1).max(200).optional(),
        workspace: z.string().min(1).max(4096).optional(),
        /** Default: kanban.default_workspace, else worktree inside a git repository, else dir. */
        workspaceMode: z.enum(WORKSPACE_MODES).optional(),
        /** The worktree's base (a ref); default the repository's HEAD. */
        base: z.string().min(1).max(1000).optional(),
        by: z.string().max(100).optional(),
        /** Created `todo` and held: not dispatched until `kanban.release`. */
        hold: z.boolean().optional(),
      })
      .strict(),
  ),
  "kanban.list": rpc<{ board: string; tasks: TaskSummary[] }>()(() =>
    z
      .object({
        board,
        status: z.array(z.enum(TASK_STATUSES)).max(9).optional(),
        assignee: z.string().min(1).max(64).optional(),
        /** Archived tasks too. */
        all: z.boolean().optional(),
      })
      .strict(),
  ),
  "kanban.show": rpc<{ task: Task }>()(() => z.object({ board, id }).strict()),
  "kanban.assign": tasks(() => z.object({ board, ids, assignee: z.string().min(1).max(64) }).strict()),
  "kanban.link": rpc<{ parent: Task; child: Task }>()(() => z.object({ board, parent: id, child: id }).strict()),
  "kanban.unlink": rpc<{ parent: Task; child: Task }>()(() => z.object({ board, parent: id, child: id }).strict()),
  "kanban.comment": rpc<{ task: Task }>()(() =>
    z.object({ board, id, body: z.string().trim().min(1).max(100_000), author: z.string().max(100).optional(), worker }).strict(),
  ),
  "kanban.complete": tasks(() => z.object({ board, ids, summary: text(100_000).optional(), result: text(1_000_000).optional(), worker }).strict()),
  "kanban.block": tasks(() => z.object({ board, ids, reason: text(10_000).optional(), worker }).strict()),
  "kanban.unblock": tasks(() => z.object({ board, ids }).strict()),
  "kanban.schedule": tasks(() => z.object({ board, ids, reason: text(10_000).optional() }).strict()),
  "kanban.archive": tasks(() => z.object({ board, ids }).strict()),
  "kanban.promote": tasks(() => z.object({ board, ids }).strict()),
  "kanban.reclaim": tasks(() => z.object({ board, ids }).strict()),
  "kanban.heartbeat": rpc<{ ok: true; task: Task }>()(() => z.object({ board, taskId: id, runId: z.string().min(1).max(100) }).strict()),
  "kanban.runs": rpc<{ task_id: string; runs: TaskRun[]; runs_dropped: number }>()(() => z.object({ board, id }).strict()),
  "kanban.stats": rpc<BoardStats>()(() => z.object({ board }).strict()),
  "kanban.boards.list": rpc<{ boards: BoardInfo[]; current: string }>()(() => z.object({}).strict()),
  "kanban.boards.create": rpc<{ board: BoardInfo; created: boolean }>()(() => z.object({ name: z.string().min(1).max(64) }).strict()),
  "kanban.boards.use": rpc<{ ok: true; current: string }>()(() => z.object({ name: z.string().min(1).max(64) }).strict()),
  /** Stays open until cancelled; each change arrives as a `kanban.event` notification (BoardEvent). */
  "kanban.watch": rpc<{ ok: true }>()(() => z.object({ board, all: z.boolean().optional() }).strict()),
  /** One dispatcher tick by hand (implemented by the dispatcher). */
  "kanban.dispatch": rpc<DispatchReport>()(() =>
    z.object({ board, dryRun: z.boolean().optional(), failureLimit: z.number().int().min(1).max(1000).optional() }).strict(),
  ),
  /** Run the decomposer on tasks (default: the given ids; `all`: every triage task). */
  "kanban.decompose": rpc<{ results: DecomposeResult[] }>()(() =>
    z.object({ board, taskIds: z.array(id).max(1000).optional(), all: z.boolean().optional() }).strict(),
  ),
  // ---- kanban-safety: plan files and held tasks ----
  /**
   * Create the tasks of a plan file (YAML text, checked in the daemon) in one atomic write:
   * all or none. `ids` maps the file's local ids to the new task ids.
   */
  "kanban.createPlan": rpc<{ board: string; tasks: Task[]; ids: Record<string, string> }>()(() =>
    z
      .object({
        board,
        text: z.string().max(MAX_PLAN_TEXT),
        /** The file's name, for messages. */
        file: z.string().min(1).max(4096).optional(),
        hold: z.boolean().optional(),
        workspace: z.string().min(1).max(4096).optional(),
        workspaceMode: z.enum(WORKSPACE_MODES).optional(),
        base: z.string().min(1).max(1000).optional(),
        by: z.string().max(100).optional(),
      })
      .strict(),
  ),
  /** Delete a board and its tasks (refused while one of them runs). */
  "kanban.boards.delete": rpc<{ board: string; tasks: number; current: string }>()(() => z.object({ name: z.string().min(1).max(64) }).strict()),
  /** Let held tasks be dispatched: the given ids (each must be held), or every held task of the board. */
  "kanban.release": tasks(() => z.object({ board, ids: ids.optional(), all: z.boolean().optional() }).strict()),
  /** A task's worker log; with `follow`, new lines arrive as `kanban.log` notifications until cancelled. */
  "kanban.log": rpc<{ task_id: string; path: string | null; text: string }>()(() =>
    z.object({ board, taskId: id, follow: z.boolean().optional(), lines: z.number().int().min(1).max(100_000).optional() }).strict(),
  ),
  // ---- issue 30: worktrees, review, the live process view ----
  /** The diff of a task's branch against its base (`stat`: git's --stat). */
  "kanban.diff": rpc<{ task_id: string; branch: string; base: string; text: string }>()(() => z.object({ board, id, stat: z.boolean().optional() }).strict()),
  /** review → done, waking dependents. */
  "kanban.approve": tasks(() => z.object({ board, ids }).strict()),
  /** review → ready, the reason a comment for the next run. */
  "kanban.reject": rpc<{ task: Task }>()(() => z.object({ board, id, reason: z.string().trim().min(1).max(10_000) }).strict()),
  /** Merge a done task's branch (into its base branch, or `into`); refused with git's message on a conflict. */
  "kanban.merge": rpc<{ task: Task; into: string; commit: string }>()(() =>
    z.object({ board, id, into: z.string().min(1).max(1000).optional(), squash: z.boolean().optional() }).strict(),
  ),
  /** Remove the worktrees of tasks that are gone (deleted boards) or archived. */
  "kanban.prune": rpc<{ removed: string[] }>()(() => z.object({}).strict()),
  /** Every running worker with its group's CPU and RSS. */
  "kanban.ps": rpc<{ workers: WorkerProcess[]; at: number }>()(() => z.object({ board }).strict()),
  /** Stop a task's worker group (the grace period); the run is recorded as killed and the task blocked. */
  "kanban.kill": rpc<{ task: Task }>()(() => z.object({ board, id }).strict()),
};

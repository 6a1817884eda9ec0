import { randomBytes } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { closestName } from "../../shared/closest-name.js";
import { AgentError } from "../../shared/errors.js";
import {
  BOARD_NAME,
  type BoardEvent,
  type BoardInfo,
  type RunOutcome,
  type Task,
  type TaskGit,
  type TaskRun,
  type TaskStatus,
  type TaskWork,
  type WorkspaceMode,
} from "../../shared/protocol/kanban.js";
import type { ActorRuntime } from "../actors/api.js";
import type { DaemonContext } from "../context.js";
import { writeFileAtomic } from "../store/atomic-file.js";
import { boardDefinition } from "./board/actor.js";
import { parsePlan } from "./board/plan.js";
import {
  createWorktree,
  findRepo,
  git,
  mergeBranch,
  pruneWorktrees,
  removeWorktree,
  summarizeWork,
  taskDiff,
  type WorktreeInfo,
} from "./worktree/git-worktree.js";
import type { Board, BoardEnv, ClaimResult, CreateInput, DecompositionPlan, DecompositionResult, WorkerRef } from "./board/board.js";

export type { ClaimResult, CreateInput, DecompositionPlan, DecompositionResult, WorkerRef } from "./board/board.js";

const NAMESPACE = "default";
const ACTOR_NAME = "board";
export const DEFAULT_BOARD = "default";
const DEFAULT_PROFILE = "default";

/** Where a call comes from and which board it means (default: the board of its first task, else the current board). */
export interface CallOptions {
  board?: string;
  by?: string;
}

/**
 * The kanban board service (provided as `kanban` in DaemonServices): the boards (one `board`
 * actor each), every operation of the CLI and the dashboard, and what the dispatcher and the
 * decomposer need: the atomic claim, a run's bookkeeping, the plan applied in one write, and
 * every board event (`onEvent`). The rules live in board/board.ts.
 */
export class KanbanService {
  private readonly actorIds = new Map<string, string>();
  private readonly boards = new Map<string, Board>();
  private readonly listeners = new Set<(event: BoardEvent) => void>();
  private current = DEFAULT_BOARD;
  private readonly currentFile: string;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly runtime: ActorRuntime,
  ) {
    this.currentFile = join(ctx.paths.data, "kanban", "current-board.json");
  }

  async start(): Promise<void> {
    this.runtime.registerDefinition(
      ACTOR_NAME,
      boardDefinition(
        () => this.env(),
        (board) => this.adopt(board),
      ),
      "builtin",
    );
    try {
      const saved = JSON.parse(await readFile(this.currentFile, "utf8")) as { current?: string };
      if (typeof saved.current === "string" && BOARD_NAME.test(saved.current)) this.current = saved.current;
    } catch {}
    // Every board that exists is awake from the start, so the dispatcher sees all their ready
    // tasks. The default board's actor is created by the first kanban command that needs it.
    for (const record of this.runtime.list({ namespace: NAMESPACE, name: ACTOR_NAME })) {
      if (BOARD_NAME.test(record.key)) await this.board(record.key);
    }
    if (!this.boards.has(this.current)) this.current = DEFAULT_BOARD;
  }

  /** A board woke (at start, or after its actor restarted): its events feed `onEvent`. */
  private adopt(board: Board): void {
    this.boards.set(board.name, board);
    board.onEvent((event) => {
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch {}
      }
    });
  }

  private env(): BoardEnv {
    return {
      resolveAssignee: (requested) => this.resolveAssignee(requested),
      orchestrator: () => this.orchestrator(),
      failureLimit: () => Number(this.ctx.config.current().kanban.failure_limit) || 2,
      profileExists: (name) => this.profileExists(name),
      unknownProfile: (name) => this.unknownProfile(name),
      reviewRequired: () => this.ctx.config.current().kanban.review === "required",
    };
  }

  /**
   * The refusal of an explicit assignee that names no profile (a typo must not run the task as
   * someone else): the closest profile and the command that creates the named one.
   */
  unknownProfile(name: string): AgentError {
    const names = this.ctx.services.get("profiles").names();
    const near = closestName(name, names);
    const hint = near ? `did you mean "${near}"?` : `profiles: ${names.join(", ")}`;
    return new AgentError("kanban.unknown_profile", `no profile named "${name}" (${hint}); to create it: agent profile create ${name}`, {
      profile: name,
      ...(near ? { suggestion: near } : {}),
    });
  }

  // ---------- profiles and fallbacks ----------

  profileExists(name: string): boolean {
    if (name === DEFAULT_PROFILE) return true;
    try {
      this.ctx.services.get("profiles").check(name);
      return true;
    } catch {
      return false;
    }
  }

  /** kanban.default_assignee when it names a profile, else the default profile. */
  defaultAssignee(): string {
    const configured = String(this.ctx.config.current().kanban.default_assignee ?? "");
    return configured && this.profileExists(configured) ? configured : DEFAULT_PROFILE;
  }

  /** kanban.orchestrator_profile when it names a profile, else the default profile. */
  orchestrator(): string {
    const configured = String(this.ctx.config.current().kanban.orchestrator_profile ?? "");
    return configured && this.profileExists(configured) ? configured : DEFAULT_PROFILE;
  }

  /** A task never ends up unassigned: an unknown profile gets the default assignee. */
  resolveAssignee(requested: string | null | undefined): { assignee: string; fellBack: boolean } {
    if (requested && this.profileExists(requested)) return { assignee: requested, fellBack: false };
    return { assignee: this.defaultAssignee(), fellBack: Boolean(requested) };
  }

  // ---------- boards ----------

  currentBoard(): string {
    return this.current;
  }

  /** The board, its actor created on first use and woken. */
  async board(name: string = this.current): Promise<Board> {
    if (!BOARD_NAME.test(name)) throw new AgentError("kanban.invalid_board_name", `board names are [a-z0-9][a-z0-9_-]{0,63}; got ${JSON.stringify(name)}`);
    let id = this.actorIds.get(name);
    if (id === undefined) {
      const { actor } = await this.runtime.getOrCreate({
        namespace: NAMESPACE,
        name: ACTOR_NAME,
        key: name,
        runner_name_selector: "default",
        crash_policy: "restart",
        input: { name },
      });
      id = actor.actor_id;
      this.actorIds.set(name, id);
    }
    const known = this.boards.get(name);
    if (known && this.runtime.get(id)?.connectable_ts) return known;
    return (await this.runtime.action(id, "board", [], { source: "internal" })) as Board;
  }

  /** An existing board (no board but the default one is created by naming it in a task command). */
  private async existing(name: string): Promise<Board> {
    if (name !== DEFAULT_BOARD && !this.boards.has(name) && !this.runtime.list({ namespace: NAMESPACE, name: ACTOR_NAME, key: name }).length) {
      throw new AgentError("kanban.board_not_found", `no board named "${name}" (agent kanban boards list; agent kanban boards create ${name})`, {
        board: name,
      });
    }
    return this.board(name);
  }

  /** The board a call means: the named one, else the board holding its first task, else the current one. */
  private async boardFor(options: CallOptions | undefined, taskId?: string): Promise<Board> {
    if (options?.board) return this.existing(options.board);
    if (taskId) for (const b of this.boards.values()) if (b.tasks.has(taskId)) return b;
    return this.board(this.current);
  }

  async listBoards(): Promise<{ boards: BoardInfo[]; current: string }> {
    const boards: BoardInfo[] = [];
    await this.board(DEFAULT_BOARD);
    for (const record of this.runtime.list({ namespace: NAMESPACE, name: ACTOR_NAME })) {
      if (!BOARD_NAME.test(record.key)) continue;
      const b = await this.board(record.key);
      boards.push({ name: b.name, current: b.name === this.current, tasks: b.tasks.size });
    }
    boards.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { boards, current: this.current };
  }

  async createBoard(name: string): Promise<{ board: BoardInfo; created: boolean }> {
    const existed = this.boards.has(name) || this.runtime.list({ namespace: NAMESPACE, name: ACTOR_NAME, key: name }).length > 0;
    const b = await this.board(name);
    return { board: { name: b.name, current: b.name === this.current, tasks: b.tasks.size }, created: !existed };
  }

  /**
   * Delete a board with its tasks (the way to remove a `board` actor; `actors.destroy` refuses
   * built-ins). Refused while a task of it runs: its worker would report to a board that is gone.
   * Deleting the current board makes the default board current; the default board itself is
   * emptied this way and made again, empty, by the next command that needs it.
   */
  async deleteBoard(name: string): Promise<{ board: string; tasks: number; current: string }> {
    const b = await this.existing(name);
    const running = b.runningTasks().map((r) => r.task.id);
    if (running.length) {
      throw new AgentError(
        "kanban.board_in_use",
        `board "${name}" has running tasks (${running.join(", ")}); block or reclaim them first (agent kanban reclaim ${running.join(" ")} --board ${name})`,
        { board: name, running },
      );
    }
    const tasks = b.tasks.size;
    const ids = this.runtime.list({ namespace: NAMESPACE, name: ACTOR_NAME, key: name }).map((r) => r.actor_id);
    // Out of the maps first, so the dispatcher no longer sees its ready tasks.
    this.boards.delete(name);
    this.actorIds.delete(name);
    for (const id of ids) await this.runtime.destroy(id);
    if (this.current === name && name !== DEFAULT_BOARD) {
      await writeFileAtomic(this.currentFile, JSON.stringify({ current: DEFAULT_BOARD }) + "\n");
      this.current = DEFAULT_BOARD;
    }
    return { board: name, tasks, current: this.current };
  }

  async useBoard(name: string): Promise<{ ok: true; current: string }> {
    await this.existing(name);
    await mkdir(dirname(this.currentFile), { recursive: true });
    await writeFileAtomic(this.currentFile, JSON.stringify({ current: name }) + "\n");
    this.current = name;
    return { ok: true, current: name };
  }

  // ---------- the CLI's and the dashboard's operations ----------

  /**
   * Create a task. Its workspace mode: the one asked for, else kanban.default_workspace, else
   * `worktree` when the creating directory is inside a git repository, else `dir`. A worktree is
   * made before the task is, under the id the task will have, so the dispatcher never sees the
   * task without it; a refused create removes it again.
   */
  async create(input: CreateInput & { base?: string }, options?: CallOptions): Promise<{ task: Task; created: boolean; notice: string | null }> {
    const board = await this.boardFor(options);
    const { base, ...rest } = input;
    const mode = await this.workspaceMode(input.workspaceMode, input.workspace, base);
    if (mode !== "worktree") {
      return board.create({ ...rest, workspaceMode: mode, ...(mode === "scratch" ? { workspace: undefined } : {}) }, options?.by ?? "cli");
    }
    if (input.idempotencyKey) {
      const existing = board.list({ all: true }).find((t) => board.get(t.id).idempotency_key === input.idempotencyKey);
      if (existing) return { task: board.get(existing.id), created: false, notice: null };
    }
    // A task that waits for parents with worktrees gets its own when it is dispatched, from their branches.
    if ((input.parents ?? []).some((p) => board.tasks.get(p)?.git)) {
      const pending = await this.pendingWorktree(input.workspace!, base);
      return board.create({ ...rest, workspace: undefined, workspaceMode: "worktree", git: pending }, options?.by ?? "cli");
    }
    const id = `t_${randomBytes(4).toString("hex")}`;
    const info = await createWorktree({ root: this.worktreesRoot(), cwd: input.workspace!, taskId: id, title: input.title, base });
    try {
      const r = await board.create({ ...rest, id, workspace: info.path, workspaceMode: "worktree", git: gitRecord(info) }, options?.by ?? "cli");
      if (!r.created) await removeWorktree(info, { deleteBranch: true });
      return r;
    } catch (error) {
      await removeWorktree(info, { deleteBranch: true }).catch(() => undefined);
      throw error;
    }
  }

  /** A worktree to be made when the task is dispatched: the repository of `dir`, based on `base` (default its HEAD) as of now. */
  private async pendingWorktree(dir: string, base: string | undefined): Promise<TaskGit> {
    const found = await findRepo(dir);
    if (!found) throw new AgentError("kanban.not_a_repo", `${dir} is not inside a git repository`);
    let sha: string;
    try {
      sha = (await git(found.toplevel, ["rev-parse", "--verify", "--end-of-options", `${base ?? "HEAD"}^{commit}`])).trim();
    } catch (error) {
      throw new AgentError("kanban.git_failed", `--base ${base ?? "HEAD"}: ${(error as Error).message}`);
    }
    const ref = base ?? ((await git(found.toplevel, ["symbolic-ref", "--quiet", "--short", "HEAD"]).catch(() => "HEAD")).trim() || "HEAD");
    return { repo: found.repo, base: sha, base_ref: ref, branch: null, path: null, removed: false, work: null, merged: null };
  }

  /** `$AGENT_HOME/worktrees`: `<repo>/<task-id>` for each task's worktree. */
  worktreesRoot(): string {
    return join(this.ctx.home, "worktrees");
  }

  /** The workspace mode of a new task (see create). */
  private async workspaceMode(asked: WorkspaceMode | undefined, dir: string | undefined, base: string | undefined): Promise<WorkspaceMode> {
    if (base !== undefined && asked !== undefined && asked !== "worktree")
      throw new AgentError("kanban.invalid_argument", "--base applies to --workspace worktree only");
    if (asked === "worktree" || asked === "dir") {
      if (!dir) throw new AgentError("kanban.invalid_argument", `--workspace ${asked} needs the creating directory (workspace)`);
      return asked;
    }
    if (asked === "scratch") return "scratch";
    if (!dir) return "scratch";
    const configured = String(this.ctx.config.current().kanban.default_workspace ?? "");
    if (configured === "dir" || configured === "scratch") return base !== undefined ? "worktree" : configured;
    const repo = await findRepo(dir);
    if (repo) return "worktree";
    if (base !== undefined) throw new AgentError("kanban.not_a_repo", `${dir} is not inside a git repository (--base needs one)`);
    return "dir";
  }

  /** A plan file's tasks, all created in one atomic write or none (board/plan.ts checks the file). */
  async createPlan(
    text: string,
    input: { file?: string; hold?: boolean; workspace?: string; workspaceMode?: WorkspaceMode; base?: string },
    options?: CallOptions,
  ): Promise<{ board: string; tasks: Task[]; ids: Record<string, string> }> {
    const file = input.file ?? "plan";
    const plan = parsePlan(text, file);
    const b = await this.boardFor(options);
    const mode = await this.workspaceMode(input.workspaceMode, input.workspace, input.base);
    // A plan's worktrees are made when each task is dispatched, from its finished parents' branches.
    const pending = mode === "worktree" ? await this.pendingWorktree(input.workspace!, input.base) : null;
    const r = await b.createPlan(
      plan,
      {
        file,
        hold: input.hold,
        workspace: mode === "dir" ? input.workspace : undefined,
        workspaceMode: mode,
        git: pending,
      },
      options?.by ?? "cli",
    );
    return { board: b.name, ...r };
  }

  /** Let held tasks run: the given ids, or (`all`) every held task of the board. */
  async release(ids: string[] | "all", options?: CallOptions): Promise<Task[]> {
    const b = await this.boardFor(options, ids === "all" ? undefined : ids[0]);
    return b.release(ids, options?.by ?? "cli");
  }

  async list(filter: { status?: TaskStatus[]; assignee?: string; all?: boolean } = {}, options?: CallOptions) {
    const b = await this.boardFor(options);
    return { board: b.name, tasks: b.list(filter) };
  }

  async show(id: string, options?: CallOptions): Promise<Task> {
    return (await this.boardFor(options, id)).get(id);
  }

  async assign(ids: string[], assignee: string, options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).assign(ids, assignee, options?.by ?? "cli");
  }

  async link(parent: string, child: string, options?: CallOptions) {
    return (await this.boardFor(options, child)).link(parent, child, options?.by ?? "cli");
  }

  async unlink(parent: string, child: string, options?: CallOptions) {
    return (await this.boardFor(options, child)).unlink(parent, child, options?.by ?? "cli");
  }

  /** Anyone, a worker included, may comment on any task. */
  async comment(id: string, body: string, input: { author?: string; worker?: WorkerRef } = {}, options?: CallOptions): Promise<Task> {
    const author = input.author ?? (input.worker ? `worker ${input.worker.taskId}` : "user");
    return (await this.boardFor(options, id)).comment(id, body, author, byOf(options, input.worker));
  }

  /**
   * Complete tasks. A task with a live worktree has its work recorded first: uncommitted changes
   * committed with the summary as the message, its commits and the diff stat against its base.
   */
  async complete(ids: string[], input: { summary?: string; result?: string; worker?: WorkerRef }, options?: CallOptions): Promise<Task[]> {
    const board = await this.boardFor(options, ids[0]);
    const work = new Map<string, TaskWork>();
    for (const id of new Set(ids)) {
      const t = board.tasks.get(id);
      const info = t && liveWorktree(t);
      if (!info || t.status === "done" || t.status === "archived" || t.status === "review") continue;
      if (input.worker && (input.worker.taskId !== id || t.current_run !== input.worker.runId)) continue;
      const message = (input.summary?.trim() || input.result?.trim() || t.title).slice(0, 10_000);
      const w = await summarizeWork(info, message);
      work.set(id, { ...w, recorded_at: Date.now() });
    }
    return board.complete(ids, { ...input, work }, byOf(options, input.worker));
  }

  async approve(ids: string[], options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).approve(ids, options?.by ?? "cli");
  }

  async reject(id: string, reason: string, options?: CallOptions): Promise<Task> {
    return (await this.boardFor(options, id)).reject(id, reason, options?.by ?? "cli");
  }

  /** The diff of a task's branch against its base (uncommitted changes of a live worktree included). */
  async diff(id: string, stat: boolean, options?: CallOptions): Promise<{ task_id: string; branch: string; base: string; text: string }> {
    const t = await this.show(id, options);
    const info = worktreeOf(t);
    return { task_id: id, branch: info.branch, base: info.base, text: await taskDiff(info, { stat }) };
  }

  /**
   * Merge a done task's branch into its base branch (or `into`); a conflict is refused with
   * git's message and changes nothing. The worktree is removed after (the branch stays).
   */
  async merge(id: string, input: { into?: string; squash?: boolean }, options?: CallOptions): Promise<{ task: Task; into: string; commit: string }> {
    const board = await this.boardFor(options, id);
    const t = board.get(id);
    const info = worktreeOf(t);
    if (t.status !== "done")
      throw new AgentError(
        "kanban.invalid_transition",
        `${id} is ${t.status}: only done tasks are merged${t.status === "review" ? ` (agent kanban approve ${id} first)` : ""}`,
        { id, status: t.status },
      );
    const message = input.squash ? `${t.title}\n\n${t.summary ?? ""}`.trim() : `Merge ${info.branch}: ${t.title}`;
    const r = await mergeBranch(info, { into: input.into, squash: input.squash, message, scratch: join(this.worktreesRoot(), ".merge") });
    await removeWorktree(info).catch(() => undefined);
    const task = await board.setGit(
      id,
      { removed: true, merged: { into: r.into, commit: r.commit, squash: Boolean(input.squash), at: Date.now() } },
      "merged",
      options?.by ?? "cli",
    );
    return { task, ...r };
  }

  /** Remove the worktrees of tasks that are gone (a deleted board) or archived, and any left of removed ones. */
  async prune(): Promise<{ removed: string[] }> {
    const find = (id: string) => {
      for (const b of this.boards.values()) {
        const t = b.tasks.get(id);
        if (t) return { b, t };
      }
      return null;
    };
    const removed = await pruneWorktrees(this.worktreesRoot(), (id) => {
      const found = find(id);
      return Boolean(found && found.t.status !== "archived" && found.t.git && !found.t.git.removed);
    });
    for (const path of removed) {
      const id = path.split(/[\\/]/).pop()!;
      const found = find(id);
      if (found?.t.git && !found.t.git.removed) await found.b.setGit(id, { removed: true }, "worktree_removed", "prune");
    }
    return { removed };
  }

  /**
   * A task about to be dispatched whose worktree is still to be made (a decomposer's child, a
   * plan's task): made now, based on its finished parents' branches: none, the recorded base; one
   * (a linear parent), its branch; several (a fan-in), the first parent's branch with the others
   * merged into it (a conflict refuses with git's message). Returns the worktree's path.
   */
  async ensureWorktree(taskId: string, board?: string): Promise<string | null> {
    const b = await this.boardFor({ board }, taskId);
    const t = b.get(taskId);
    if (!t.git || t.git.removed) return null;
    if (t.git.path) return t.git.path;
    const branches: string[] = [];
    for (const p of t.parents) {
      const parent = b.tasks.get(p);
      if (parent?.git?.branch && parent.git.repo === t.git.repo && parent.status === "done") branches.push(parent.git.branch);
    }
    const [first, ...rest] = branches;
    const info = await createWorktree({
      root: this.worktreesRoot(),
      cwd: t.git.repo,
      taskId,
      title: t.title,
      base: first ?? t.git.base ?? undefined,
      merge: rest,
    });
    // Merged (by default) where the root's work goes, not into a parent's branch.
    await b.setGit(taskId, { ...gitRecord(info), base_ref: t.git.base_ref ?? info.base_ref }, "worktree_created", "dispatcher", { workspace: info.path });
    return info.path;
  }

  async block(ids: string[], input: { reason?: string; worker?: WorkerRef }, options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).block(ids, input, byOf(options, input.worker));
  }

  async unblock(ids: string[], options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).unblock(ids, options?.by ?? "cli");
  }

  async schedule(ids: string[], reason: string | undefined, options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).schedule(ids, reason, options?.by ?? "cli");
  }

  /** Archive; an archived task's worktree is removed (its branch stays). */
  async archive(ids: string[], options?: CallOptions): Promise<Task[]> {
    const board = await this.boardFor(options, ids[0]);
    const tasks = await board.archive(ids, options?.by ?? "cli");
    const out: Task[] = [];
    for (const t of tasks) {
      const info = liveWorktree(t);
      if (!info) {
        out.push(t);
        continue;
      }
      await removeWorktree(info).catch(() => undefined);
      out.push(await board.setGit(t.id, { removed: true }, "worktree_removed", options?.by ?? "cli"));
    }
    return out;
  }

  async promote(ids: string[], options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).promote(ids, options?.by ?? "cli");
  }

  async reclaim(ids: string[], options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).reclaim(ids, options?.by ?? "cli");
  }

  async stats(options?: CallOptions) {
    return (await this.boardFor(options)).stats();
  }

  /** The dashboard's edit (status `running` refused, `ready` with unfinished parents refused naming them). */
  async update(id: string, patch: Parameters<Board["update"]>[1], options?: CallOptions): Promise<Task> {
    return (await this.boardFor(options, id)).update(id, patch, options?.by ?? "api");
  }

  // ---------- the dispatcher's side ----------

  /** The only ready → running move, atomic: of two claims of one task exactly one wins. */
  async claim(taskId: string, run: { runId: string; profile: string }, board?: string): Promise<ClaimResult> {
    return (await this.boardFor({ board }, taskId)).claim(taskId, run);
  }

  async attachRun(taskId: string, runId: string, process: { pid: number | null; pgid: number | null; logPath: string | null }, board?: string): Promise<Task> {
    return (await this.boardFor({ board }, taskId)).attachRun(taskId, runId, process);
  }

  /** A worker's heartbeat: only its own running task. */
  async heartbeat(taskId: string, runId: string, board?: string): Promise<Task> {
    return (await this.boardFor({ board }, taskId)).heartbeat(taskId, runId, `worker:${runId}`);
  }

  /** The worker process of a run ended (see Board.endRun for the rules). */
  async endRun(
    taskId: string,
    runId: string,
    outcome: RunOutcome,
    detail?: string | null,
    options: { failureLimit?: number; board?: string } = {},
  ): Promise<Task> {
    return (await this.boardFor({ board: options.board }, taskId)).endRun(taskId, runId, outcome, detail ?? null, options.failureLimit);
  }

  /** Ready tasks of one board (default: every board), priority first, then age. */
  readyTasks(board?: string): Task[] {
    const out = this.pick(board, (b) => b.readyTasks());
    return board ? out : out.sort((a, b) => b.priority - a.priority || a.created_at - b.created_at);
  }

  runningTasks(board?: string): Array<{ task: Task; run: TaskRun | null }> {
    return this.pick(board, (b) => b.runningTasks());
  }

  triageTasks(board?: string): Task[] {
    return this.pick(board, (b) => b.triageTasks());
  }

  private pick<T>(board: string | undefined, fn: (b: Board) => T[]): T[] {
    if (board) {
      const b = this.boards.get(board);
      return b ? fn(b) : [];
    }
    return [...this.boards.values()].flatMap(fn);
  }

  /** The board of a task (among the boards awake), or undefined. */
  boardOf(taskId: string): string | undefined {
    for (const b of this.boards.values()) if (b.tasks.has(taskId)) return b.name;
    return undefined;
  }

  // ---------- the decomposer's side ----------

  async applyDecomposition(rootId: string, plan: DecompositionPlan, board?: string): Promise<DecompositionResult> {
    return (await this.boardFor({ board }, rootId)).applyDecomposition(rootId, plan);
  }

  async rejectDecomposition(rootId: string, reason: string, board?: string): Promise<DecompositionResult> {
    return (await this.boardFor({ board }, rootId)).rejectDecomposition(rootId, reason);
  }

  // ---------- events ----------

  /** Every change on every board. */
  onEvent(listener: (event: BoardEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function byOf(options: CallOptions | undefined, worker: WorkerRef | undefined): string {
  return worker ? `worker:${worker.runId}` : (options?.by ?? "cli");
}

/** What a task records of a worktree just made. */
function gitRecord(info: WorktreeInfo): TaskGit {
  return { repo: info.repo, base: info.base, base_ref: info.base_ref, branch: info.branch, path: info.path, removed: false, work: null, merged: null };
}

/** The task's worktree when it exists (made and not removed). */
function liveWorktree(t: Task): WorktreeInfo | null {
  const g = t.git;
  if (!g || g.removed || !g.path || !g.branch || !g.base) return null;
  return { repo: g.repo, base: g.base, base_ref: g.base_ref ?? "HEAD", branch: g.branch, path: g.path };
}

/** The task's branch (its worktree may be gone), or a refusal naming why there is none. */
function worktreeOf(t: Task): WorktreeInfo {
  const g = t.git;
  if (!g?.branch || !g.base || !g.path)
    throw new AgentError(
      "kanban.no_worktree",
      g
        ? `${t.id} has no worktree yet (it is made when the task is dispatched)`
        : `${t.id} has no worktree (it was created with --workspace ${t.workspace_mode ?? "dir"})`,
      { id: t.id },
    );
  return { repo: g.repo, base: g.base, base_ref: g.base_ref ?? "HEAD", branch: g.branch, path: g.path };
}

import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { closestName } from "../../shared/closest-name.js";
import { AgentError } from "../../shared/errors.js";
import { BOARD_NAME, type BoardEvent, type BoardInfo, type RunOutcome, type Task, type TaskRun, type TaskStatus } from "../../shared/protocol/kanban.js";
import type { ActorRuntime } from "../actors/api.js";
import type { DaemonContext } from "../context.js";
import { writeFileAtomic } from "../store/atomic-file.js";
import { boardDefinition } from "./board/actor.js";
import { parsePlan } from "./board/plan.js";
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

  async create(input: CreateInput, options?: CallOptions): Promise<{ task: Task; created: boolean; notice: string | null }> {
    return (await this.boardFor(options)).create(input, options?.by ?? "cli");
  }

  /** A plan file's tasks, all created in one atomic write or none (board/plan.ts checks the file). */
  async createPlan(
    text: string,
    input: { file?: string; hold?: boolean; workspace?: string },
    options?: CallOptions,
  ): Promise<{ board: string; tasks: Task[]; ids: Record<string, string> }> {
    const file = input.file ?? "plan";
    const plan = parsePlan(text, file);
    const b = await this.boardFor(options);
    const r = await b.createPlan(plan, { file, hold: input.hold, workspace: input.workspace }, options?.by ?? "cli");
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

  async complete(ids: string[], input: { summary?: string; result?: string; worker?: WorkerRef }, options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).complete(ids, input, byOf(options, input.worker));
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

  async archive(ids: string[], options?: CallOptions): Promise<Task[]> {
    return (await this.boardFor(options, ids[0])).archive(ids, options?.by ?? "cli");
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

import { randomBytes } from "node:crypto";
import { AgentError } from "../../../shared/errors.js";
import {
  TASK_STATUSES,
  type BoardEvent,
  type BoardStats,
  type RunOutcome,
  type Task,
  type TaskRun,
  type TaskGit,
  type TaskStatus,
  type TaskSummary,
  type TaskWork,
  type WorkspaceMode,
} from "../../../shared/protocol/kanban.js";
import { entryName, type PlanTask, parentsFirst, planError } from "./plan.js";
import type { BoardStore } from "./store.js";

/**
 * One board: every task in memory (loaded when the board actor wakes), every change computed
 * on a copy of the tasks it touches, written (store.ts), and only then made visible. Changes
 * run one at a time, so a check and the change it guards cannot interleave with another change:
 * of two claims of one task, the second sees `running` and loses. The rules are stated where
 * they are applied; README "Kanban" lists them.
 */

/** What a board needs from outside: profiles and config. */
export interface BoardEnv {
  /** The profile a task runs as: the requested one when it exists, else kanban.default_assignee, else the default profile. */
  resolveAssignee(requested: string | null | undefined): { assignee: string; fellBack: boolean };
  /** kanban.orchestrator_profile, else the default profile. */
  orchestrator(): string;
  /** kanban.failure_limit. */
  failureLimit(): number;
  profileExists(name: string): boolean;
  /** The refusal of an explicit assignee that names no profile ("did you mean", how to create it). */
  unknownProfile(name: string): AgentError;
  /** kanban.review is "required": a completed task with a worktree waits in `review`. */
  reviewRequired?(): boolean;
}

export interface CreateInput {
  title: string;
  body?: string;
  assignee?: string;
  parents?: string[];
  priority?: number;
  triage?: boolean;
  maxRetries?: number;
  maxRuntime?: number;
  skills?: string[];
  idempotencyKey?: string;
  workspace?: string;
  /** Created `todo` and held: never dispatched until released. */
  hold?: boolean;
  /** The id chosen beforehand (the service names the task's worktree after it). */
  id?: string;
  workspaceMode?: WorkspaceMode;
  git?: TaskGit | null;
}

export interface WorkerRef {
  taskId: string;
  runId: string;
}

export type DecompositionPlan =
  | { fanout: true; children: Array<{ title: string; body: string; assignee?: string | null; parents: number[] }>; comment: string }
  | { fanout: false; title: string; body: string; assignee?: string | null; comment?: string };

export interface DecompositionResult {
  ok: boolean;
  task_id: string;
  reason: string | null;
  fanout: boolean;
  child_ids: string[];
}

export type ClaimResult = { ok: true; task: Task } | { ok: false; reason: string; task?: Task };

const FINISHED: ReadonlySet<TaskStatus> = new Set(["done", "archived"]);
const CLOSED: ReadonlySet<TaskStatus> = new Set(["done", "archived"]);
/** Changes committed together at most (a bound on one write's size and on a caller's wait). */
const MAX_BATCH = 256;
/** Events kept per task; the oldest go first (heartbeats are folded into one event anyway). */
const MAX_EVENTS = 1000;
/**
 * Comments and runs kept per task, the newest (README "Kanban", "Limits per task"): a task is
 * stored whole in its chunk, so an unbounded task would make every write of its chunk large.
 * Comments are also bounded by their total size (a comment may be 100,000 characters); the
 * newest one is always kept. What is dropped is counted on the task.
 */
export const MAX_COMMENTS = 200;
export const MAX_COMMENT_CHARS = 512 * 1024;
export const MAX_RUNS = 100;

export const isFinished = (s: TaskStatus | undefined) => s !== undefined && FINISHED.has(s);

function notFound(id: string): AgentError {
  return new AgentError("kanban.task_not_found", `no task ${id} on this board (agent kanban list shows them)`, { id });
}

function transition(t: Task, what: string): AgentError {
  return new AgentError("kanban.invalid_transition", `${t.id} is ${t.status}: ${what}`, { id: t.id, status: t.status });
}

/** What every new task starts with, created or decomposed into: no children, history, runs or outcome yet. */
function unstarted(now: number) {
  return {
    children: [] as string[],
    comments: [] as Task["comments"],
    events: [] as Task["events"],
    runs: [] as Task["runs"],
    current_run: null,
    consecutive_failures: 0,
    created_at: now,
    started_at: null,
    completed_at: null,
    updated_at: now,
    result: null,
    summary: null,
    reason: null,
    decomposed: false,
  } satisfies Partial<Task>;
}

/** The check of a change allowed only from some statuses: any other refuses the task with `what`. */
function onlyFrom(statuses: readonly TaskStatus[], what: string): (t: Task) => void {
  return (t) => {
    if (!statuses.includes(t.status)) throw transition(t, what);
  };
}

/** One change in the making: copies of the tasks it touches and the events it records. */
class Draft {
  readonly changed = new Map<string, Task>();
  readonly events: Array<{ taskId: string; event: Omit<BoardEvent, "board" | "task_id" | "status"> }> = [];
  readonly now = Date.now();

  constructor(
    private readonly board: Board,
    readonly by: string,
  ) {}

  peek(id: string): Task | undefined {
    return this.changed.get(id) ?? this.board.current(id);
  }

  need(id: string): Task {
    const t = this.peek(id);
    if (!t) throw notFound(id);
    return t;
  }

  edit(id: string): Task {
    let t = this.changed.get(id);
    if (!t) {
      t = structuredClone(this.need(id));
      this.changed.set(id, t);
    }
    return t;
  }

  add(t: Task): void {
    this.changed.set(t.id, t);
  }

  event(t: Task, type: string, data?: Record<string, unknown>): void {
    // The payload is copied: an event, once recorded, never changes, even when the arrays it
    // names (a task's parents, say) grow later in this change or in a later one.
    const event = { seq: this.board.nextSeq(), at: this.now, type, by: this.by, ...(data ? { data: structuredClone(data) } : {}) };
    t.events.push(event);
    if (t.events.length > MAX_EVENTS) t.events.splice(0, t.events.length - MAX_EVENTS);
    t.updated_at = this.now;
    this.events.push({ taskId: t.id, event });
  }

  comment(t: Task, author: string, body: string): void {
    t.comments.push({ author, body, at: this.now });
    let chars = 0;
    let keep = 0;
    for (let i = t.comments.length - 1; i >= 0 && keep < MAX_COMMENTS; i--, keep++) {
      chars += t.comments[i]!.body.length;
      if (chars > MAX_COMMENT_CHARS && keep > 0) break;
    }
    const drop = t.comments.length - keep;
    if (drop > 0) {
      t.comments.splice(0, drop);
      t.comments_dropped = (t.comments_dropped ?? 0) + drop;
    }
  }

  /** A new run; the oldest ended runs past MAX_RUNS are dropped (the current run is the newest). */
  addRun(t: Task, run: TaskRun): void {
    t.runs.push(run);
    const drop = t.runs.length - MAX_RUNS;
    if (drop > 0) {
      t.runs.splice(0, drop);
      t.runs_dropped = (t.runs_dropped ?? 0) + drop;
    }
  }

  /** Parents of `t` that are neither done nor archived. */
  openParents(t: Task): string[] {
    return t.parents.filter((p) => {
      const parent = this.peek(p);
      return parent !== undefined && !isFinished(parent.status);
    });
  }

  setStatus(t: Task, status: TaskStatus, type: string, data?: Record<string, unknown>): void {
    const from = t.status;
    t.status = status;
    this.event(t, type, { from, to: status, ...data });
  }

  /** `ready` when every parent is done or archived, otherwise `todo`; a held task stays `todo`. */
  readyOrTodo(t: Task): TaskStatus {
    return !t.held && this.openParents(t).length === 0 ? "ready" : "todo";
  }

  /** A task just finished: each `todo` child whose parents are all finished now becomes ready. */
  wakeChildren(t: Task): void {
    for (const c of t.children) {
      const child = this.peek(c);
      if (child?.status === "todo" && !child.held && this.openParents(child).length === 0) this.setStatus(this.edit(c), "ready", "ready", { because: t.id });
    }
  }

  /** Close the task's current run with how it ended. */
  closeRun(t: Task, outcome: string, detail: string | null = null): TaskRun | null {
    const run = t.runs.find((r) => r.run_id === t.current_run);
    t.current_run = null;
    if (!run || run.ended_at !== null) return run ?? null;
    run.ended_at = this.now;
    run.outcome = outcome;
    run.detail = detail;
    return run;
  }
}

export class Board {
  readonly tasks = new Map<string, Task>();
  private readonly byKey = new Map<string, string>();
  private seq = 0;
  private readonly queue: Array<{ by: string; fn: (d: Draft) => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  private committing: Promise<void> | null = null;
  /** The tasks changed by the commit being prepared (visible to the changes after them in it). */
  private staged = new Map<string, Task>();
  private stagedKeys = new Map<string, string>();
  private readonly listeners = new Set<(event: BoardEvent) => void>();

  constructor(
    readonly name: string,
    private readonly store: BoardStore,
    private readonly env: BoardEnv,
  ) {}

  async load(): Promise<void> {
    for (const t of await this.store.load()) this.install(t);
  }

  private install(t: Task): void {
    // Tasks stored before holding existed have no flag.
    t.held ??= false;
    this.tasks.set(t.id, t);
    if (t.idempotency_key) this.byKey.set(t.idempotency_key, t.id);
    const last = t.events[t.events.length - 1];
    if (last && last.seq > this.seq) this.seq = last.seq;
  }

  nextSeq(): number {
    return ++this.seq;
  }

  onEvent(listener: (event: BoardEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Run one change: `fn` reads and edits a draft (throwing leaves nothing changed). Changes
   * queued while a write is on its way are committed together: each runs on the tasks as the
   * ones before it left them, the tasks they touched are written in one atomic write (store.ts),
   * then installed and announced, and each caller gets its answer. A burst of creations costs
   * one write, not one each.
   */
  private change<T>(by: string, fn: (d: Draft) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ by, fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.committing) this.committing = this.commitLoop();
    });
  }

  private async commitLoop(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        const done: Array<{ resolve: (v: unknown) => void; result: unknown }> = [];
        const events: Draft["events"] = [];
        this.staged = new Map();
        this.stagedKeys = new Map();
        for (const item of batch) {
          const d = new Draft(this, item.by);
          let result: unknown;
          try {
            result = item.fn(d);
          } catch (error) {
            item.reject(error);
            continue;
          }
          for (const [id, t] of d.changed) {
            this.staged.set(id, t);
            if (t.idempotency_key) this.stagedKeys.set(t.idempotency_key, id);
          }
          events.push(...d.events);
          done.push({ resolve: item.resolve, result });
        }
        const changed = [...this.staged.values()];
        try {
          const staged = this.staged;
          await this.store.write(changed, (id) => staged.get(id) ?? this.tasks.get(id));
        } catch (error) {
          this.staged = new Map();
          for (const item of batch) if (done.some((x) => x.resolve === item.resolve)) item.reject(error);
          continue;
        }
        this.staged = new Map();
        this.stagedKeys = new Map();
        for (const t of changed) this.install(t);
        for (const { taskId, event } of events) {
          const full: BoardEvent = { ...event, board: this.name, task_id: taskId, status: this.tasks.get(taskId)!.status };
          for (const listener of this.listeners) {
            try {
              listener(full);
            } catch {}
          }
        }
        for (const { resolve, result } of done) resolve(result);
      }
    } finally {
      this.committing = null;
    }
  }

  /** A task as the changes committed so far and those staged in this commit leave it. */
  current(id: string): Task | undefined {
    return this.staged.get(id) ?? this.tasks.get(id);
  }

  /** The task holding an idempotency key, staged ones included. */
  keyed(key: string): string | undefined {
    return this.stagedKeys.get(key) ?? this.byKey.get(key);
  }

  private newId(d: Draft): string {
    for (;;) {
      const id = `t_${randomBytes(4).toString("hex")}`;
      if (!d.peek(id)) return id;
    }
  }

  // ---------- reads ----------

  get(id: string): Task {
    const t = this.tasks.get(id);
    if (!t) throw notFound(id);
    return t;
  }

  list(filter: { status?: TaskStatus[]; assignee?: string; all?: boolean } = {}): TaskSummary[] {
    const statuses = filter.status?.length ? new Set(filter.status) : null;
    const out: TaskSummary[] = [];
    for (const t of this.tasks.values()) {
      if (statuses ? !statuses.has(t.status) : !filter.all && t.status === "archived") continue;
      if (filter.assignee !== undefined && t.assignee !== filter.assignee) continue;
      out.push({
        id: t.id,
        title: t.title,
        status: t.status,
        assignee: t.assignee,
        priority: t.priority,
        parents: t.parents,
        children: t.children,
        consecutive_failures: t.consecutive_failures,
        created_at: t.created_at,
        updated_at: t.updated_at,
        reason: t.reason,
        held: t.held,
      });
    }
    return out.sort(byPriorityThenAge);
  }

  /** Ready tasks in the order the dispatcher takes them: priority, then age. */
  readyTasks(): Task[] {
    return this.byStatus("ready").sort(byPriorityThenAge);
  }

  runningTasks(): Array<{ task: Task; run: TaskRun | null }> {
    return this.byStatus("running").map((task) => ({ task, run: task.runs.find((r) => r.run_id === task.current_run) ?? null }));
  }

  triageTasks(): Task[] {
    return this.byStatus("triage").sort(byPriorityThenAge);
  }

  private byStatus(status: TaskStatus): Task[] {
    const out: Task[] = [];
    for (const t of this.tasks.values()) if (t.status === status) out.push(t);
    return out;
  }

  stats(): BoardStats {
    const by_status = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
    const by_assignee: Record<string, number> = {};
    for (const t of this.tasks.values()) {
      by_status[t.status]++;
      if (t.status !== "archived" && t.status !== "done") {
        const a = t.assignee ?? "(none)";
        by_assignee[a] = (by_assignee[a] ?? 0) + 1;
      }
    }
    return { board: this.name, total: this.tasks.size, by_status, by_assignee };
  }

  // ---------- changes ----------

  /**
   * Create: `triage` when asked; else `ready` when every parent is done (or archived), otherwise
   * `todo`. An unknown parent is an error; a known idempotency key returns the existing task.
   */
  create(input: CreateInput, by: string): Promise<{ task: Task; created: boolean; notice: string | null }> {
    return this.change(by, (d) => {
      const key = input.idempotencyKey;
      const existing = key ? this.keyed(key) : undefined;
      if (existing) return { task: d.need(existing), created: false, notice: null };
      for (const p of new Set(input.parents ?? []))
        if (!d.peek(p)) throw new AgentError("kanban.task_not_found", `unknown parent ${p}: no such task on this board`, { id: p });
      // An explicit assignee must name a profile (a typo is refused, nothing is created); without
      // one the task gets kanban.default_assignee, else the default profile.
      if (input.assignee !== undefined && !this.env.profileExists(input.assignee)) throw this.env.unknownProfile(input.assignee);
      return { task: this.addTask(d, input), created: true, notice: null };
    });
  }

  /** A new task in the draft, linked to its (checked) parents, with its `created` event. */
  private addTask(d: Draft, input: CreateInput, extra?: Record<string, unknown>): Task {
    const parents = [...new Set(input.parents ?? [])];
    const assignee = !input.triage || input.assignee !== undefined ? this.env.resolveAssignee(input.assignee).assignee : null;
    if (input.id && d.peek(input.id)) throw new AgentError("kanban.invalid_argument", `task id ${input.id} is taken`, { id: input.id });
    const id = input.id ?? this.newId(d);
    const task: Task = {
      id,
      board: this.name,
      title: input.title.trim(),
      body: input.body ?? "",
      status: "triage",
      assignee,
      priority: input.priority ?? 0,
      parents,
      max_retries: input.maxRetries ?? null,
      max_runtime: input.maxRuntime ?? null,
      skills: input.skills ?? [],
      workspace: input.workspace ?? null,
      ...(input.workspaceMode ? { workspace_mode: input.workspaceMode } : {}),
      ...(input.git ? { git: structuredClone(input.git) } : {}),
      idempotency_key: input.idempotencyKey ?? null,
      held: Boolean(input.hold),
      ...unstarted(d.now),
    };
    d.add(task);
    for (const p of parents) {
      const parent = d.edit(p);
      parent.children.push(id);
      d.event(parent, "child_linked", { child: id });
    }
    if (!input.triage) task.status = d.readyOrTodo(task);
    d.event(task, "created", { status: task.status, assignee, parents, ...(task.held ? { held: true } : {}), ...extra });
    return task;
  }

  /**
   * A plan file's tasks (plan.ts checked its shape) in one change, so one atomic write: every
   * assignee must name a profile and every board parent must exist, else nothing is created and
   * the error names the entry. Tasks are added parents first; with `hold` all of them are held.
   */
  createPlan(
    plan: PlanTask[],
    options: { hold?: boolean; workspace?: string; workspaceMode?: WorkspaceMode; git?: TaskGit | null; file: string },
    by: string,
  ): Promise<{ tasks: Task[]; ids: Record<string, string> }> {
    return this.change(by, (d) => {
      const index = new Map(plan.map((t, i) => [t.local, i]));
      for (const [i, t] of plan.entries()) {
        const where = `${options.file}: ${entryName(i, t.local)}`;
        if (t.assignee !== undefined && !this.env.profileExists(t.assignee)) {
          const e = this.env.unknownProfile(t.assignee);
          throw new AgentError(e.code, `${where}: ${e.message}`, { ...e.metadata, entry: i, id: t.local });
        }
        for (const p of t.parents)
          if (!index.has(p) && !d.peek(p))
            throw planError(`${where}: parent ${p} is not a task on board "${this.name}" (nor an id in this file)`, { entry: i, id: t.local, parent: p });
      }
      const ids: Record<string, string> = {};
      for (const t of parentsFirst(plan)) {
        const task = this.addTask(
          d,
          {
            title: t.title,
            body: t.body,
            assignee: t.assignee,
            parents: t.parents.map((p) => ids[p] ?? p),
            priority: t.priority,
            maxRetries: t.maxRetries,
            maxRuntime: t.maxRuntime,
            skills: t.skills,
            workspace: options.workspace,
            workspaceMode: options.workspaceMode,
            git: options.git,
            hold: options.hold,
          },
          { plan: options.file, plan_id: t.local },
        );
        ids[t.local] = task.id;
      }
      // In the file's order; a parent created in this change is read back as the draft left it.
      return { tasks: plan.map((t) => d.peek(ids[t.local]!)!), ids };
    });
  }

  /** Held tasks may run: each becomes ready (or todo while a parent is open). Every id must be held; `all`: every held task. */
  release(ids: string[] | "all", by: string): Promise<Task[]> {
    return this.change(by, (d) => {
      const targets =
        ids === "all"
          ? [...new Set([...this.tasks.keys(), ...this.staged.keys()])].filter((id) => d.peek(id)?.held)
          : unique(ids).map((id) => {
              const t = d.need(id);
              if (!t.held) throw new AgentError("kanban.not_held", `${id} is not held (only tasks created with --hold are released)`, { id });
              return id;
            });
      return targets.map((id) => {
        const t = d.edit(id);
        t.held = false;
        if (t.status === "todo") d.setStatus(t, d.readyOrTodo(t), "released");
        else d.event(t, "released");
        return t;
      });
    });
  }

  assign(ids: string[], assignee: string, by: string): Promise<Task[]> {
    if (!this.env.profileExists(assignee)) return Promise.reject(this.env.unknownProfile(assignee));
    return this.changeEach(
      ids,
      by,
      () => undefined,
      (d, t) => {
        const from = t.assignee;
        t.assignee = assignee;
        d.event(t, "assigned", { from, to: assignee });
      },
    );
  }

  /** Link `parent → child`: no self-links, no cycles; an unfinished parent demotes a ready child to todo. */
  link(parentId: string, childId: string, by: string): Promise<{ parent: Task; child: Task }> {
    return this.change(by, (d) => {
      const parent = d.need(parentId);
      const child = d.need(childId);
      if (parentId === childId) throw new AgentError("kanban.self_link", `a task cannot depend on itself (${parentId})`, { id: parentId });
      if (child.parents.includes(parentId)) return { parent, child };
      if (this.reaches(d, childId, parentId)) {
        throw new AgentError("kanban.cycle", `linking ${parentId} → ${childId} would make a cycle: ${childId} already leads to ${parentId}`, {
          parent: parentId,
          child: childId,
        });
      }
      const p = d.edit(parentId);
      const c = d.edit(childId);
      p.children.push(childId);
      c.parents.push(parentId);
      d.event(p, "child_linked", { child: childId });
      d.event(c, "linked", { parent: parentId });
      if (c.status === "ready" && !isFinished(p.status)) d.setStatus(c, "todo", "demoted", { because: parentId });
      return { parent: p, child: c };
    });
  }

  unlink(parentId: string, childId: string, by: string): Promise<{ parent: Task; child: Task }> {
    return this.change(by, (d) => {
      d.need(parentId);
      const child = d.need(childId);
      if (!child.parents.includes(parentId))
        throw new AgentError("kanban.not_linked", `${childId} does not depend on ${parentId}`, { parent: parentId, child: childId });
      const p = d.edit(parentId);
      const c = d.edit(childId);
      p.children = p.children.filter((x) => x !== childId);
      c.parents = c.parents.filter((x) => x !== parentId);
      d.event(p, "child_unlinked", { child: childId });
      d.event(c, "unlinked", { parent: parentId });
      if (c.status === "todo" && d.readyOrTodo(c) === "ready") d.setStatus(c, "ready", "ready", { because: parentId });
      return { parent: p, child: c };
    });
  }

  /** Whether `target` is reachable from `from` following children. */
  private reaches(d: Draft, from: string, target: string): boolean {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length) {
      const id = stack.pop()!;
      if (id === target) return true;
      if (seen.has(id)) continue;
      seen.add(id);
      for (const c of d.peek(id)?.children ?? []) stack.push(c);
    }
    return false;
  }

  comment(id: string, body: string, author: string, by: string): Promise<Task> {
    return this.change(by, (d) => {
      const t = d.edit(id);
      d.comment(t, author, body);
      d.event(t, "commented", { author });
      return t;
    });
  }

  /** A change to several tasks: every one is checked before any is touched, so one bad id changes none. */
  private changeEach(ids: string[], by: string, check: (t: Task) => void, apply: (d: Draft, t: Task) => void): Promise<Task[]> {
    return this.change(by, (d) => {
      for (const id of ids) check(d.need(id));
      return unique(ids).map((id) => {
        const t = d.edit(id);
        apply(d, t);
        return t;
      });
    });
  }

  /**
   * Complete → done (summary and/or result required); closes the run, resets the failure counter, wakes dependents.
   * A task with a worktree records its work (`work`, made by the service); with kanban.review
   * required it goes to `review` instead, and its dependents wait for `approve`.
   */
  complete(ids: string[], input: { summary?: string; result?: string; worker?: WorkerRef; work?: Map<string, TaskWork> }, by: string): Promise<Task[]> {
    const summary = input.summary?.trim() || null;
    const result = input.result?.trim() ? input.result : null;
    if (!summary && !result) {
      return Promise.reject(new AgentError("kanban.summary_required", "completing a task needs a summary or a result (--summary <text> or --result <text>)"));
    }
    return this.changeEach(
      ids,
      by,
      (t) => {
        if (input.worker) this.checkWorker(t, input.worker, "complete");
        if (CLOSED.has(t.status)) throw transition(t, "it is already closed");
        if (t.status === "review") throw transition(t, `it waits for review: agent kanban approve ${t.id} or reject ${t.id} --reason <text>`);
      },
      (d, t) => {
        if (t.status === "running") d.closeRun(t, "completed");
        t.summary = summary;
        t.result = result;
        t.consecutive_failures = 0;
        t.completed_at = d.now;
        t.reason = null;
        const work = input.work?.get(t.id);
        if (work && t.git) t.git.work = work;
        const review = Boolean(t.git?.path && !t.git.removed) && Boolean(this.env.reviewRequired?.());
        const data = {
          ...(summary ? { summary } : {}),
          ...(work ? { branch: t.git?.branch, commits: work.commits.length, files_changed: work.files_changed } : {}),
        };
        d.setStatus(t, review ? "review" : "done", "completed", Object.keys(data).length ? data : undefined);
        if (!review) d.wakeChildren(t);
      },
    );
  }

  /** review → done: the work is accepted, dependents wake. */
  approve(ids: string[], by: string): Promise<Task[]> {
    return this.changeEach(ids, by, onlyFrom(["review"], "only tasks in review are approved"), (d, t) => {
      d.setStatus(t, "done", "approved");
      d.wakeChildren(t);
    });
  }

  /** review → ready (todo while a parent is open): the reason is a comment the next run reads. */
  reject(id: string, reason: string, by: string): Promise<Task> {
    return this.change(by, (d) => {
      onlyFrom(["review"], "only tasks in review are rejected")(d.need(id));
      const t = d.edit(id);
      d.comment(t, "reviewer", `Rejected in review: ${reason}`);
      t.completed_at = null;
      d.setStatus(t, d.readyOrTodo(t), "rejected", { reason });
      return t;
    });
  }

  /** Record a change to a task's worktree (created, removed, merged): `git` is merged into the task's. */
  setGit(id: string, patch: Partial<TaskGit>, event: string | null, by: string, extra?: { workspace?: string }): Promise<Task> {
    return this.change(by, (d) => {
      const t = d.edit(id);
      if (!t.git) throw new AgentError("kanban.no_worktree", `${id} has no worktree (it was not created with --workspace worktree)`, { id });
      Object.assign(t.git, structuredClone(patch));
      if (extra?.workspace) t.workspace = extra.workspace;
      if (event) d.event(t, event, { branch: t.git.branch, ...(patch.merged ? { into: patch.merged.into, commit: patch.merged.commit } : {}) });
      return t;
    });
  }

  block(ids: string[], input: { reason?: string; worker?: WorkerRef }, by: string): Promise<Task[]> {
    return this.park(ids, "blocked", input.reason, by, (t) => {
      if (input.worker) this.checkWorker(t, input.worker, "block");
    });
  }

  /** Unblock (from blocked or scheduled): parents re-checked (ready when done, else todo); the failure counter is reset. */
  unblock(ids: string[], by: string): Promise<Task[]> {
    return this.changeEach(ids, by, onlyFrom(["blocked", "scheduled"], "only blocked or scheduled tasks can be unblocked"), (d, t) => {
      t.consecutive_failures = 0;
      t.reason = null;
      d.setStatus(t, d.readyOrTodo(t), "unblocked");
    });
  }

  /** Park in `scheduled`: a delayed follow-up, not waiting on a human. */
  schedule(ids: string[], reason: string | undefined, by: string): Promise<Task[]> {
    return this.park(ids, "scheduled", reason, by);
  }

  /**
   * Park open tasks in `blocked` or `scheduled` with an optional reason: a running task's run is
   * closed with that outcome first. A closed task cannot be parked.
   */
  private park(ids: string[], status: "blocked" | "scheduled", reason: string | undefined, by: string, check?: (t: Task) => void): Promise<Task[]> {
    return this.changeEach(
      ids,
      by,
      (t) => {
        check?.(t);
        if (CLOSED.has(t.status)) throw transition(t, `a closed task cannot be ${status}`);
      },
      (d, t) => {
        if (t.status === "running") d.closeRun(t, status, reason ?? null);
        t.reason = reason?.trim() || null;
        d.setStatus(t, status, status, t.reason ? { reason: t.reason } : undefined);
      },
    );
  }

  /** Archive (explicit): counts as finished for dependents. A running task must be blocked or reclaimed first. */
  archive(ids: string[], by: string): Promise<Task[]> {
    return this.changeEach(
      ids,
      by,
      (t) => {
        if (t.status === "running") throw transition(t, "block or reclaim it before archiving");
        if (t.status === "archived") throw transition(t, "it is already archived");
      },
      (d, t) => {
        d.setStatus(t, "archived", "archived");
        d.wakeChildren(t);
      },
    );
  }

  /** Promote a triage task without decomposing it: assigned (fallbacks apply), then ready or todo. */
  promote(ids: string[], by: string): Promise<Task[]> {
    return this.changeEach(ids, by, onlyFrom(["triage"], "only triage tasks are promoted"), (d, t) => {
      if (!t.assignee) t.assignee = this.env.resolveAssignee(null).assignee;
      t.reason = null;
      d.setStatus(t, d.readyOrTodo(t), "promoted", { assignee: t.assignee });
    });
  }

  /** Take a running task back from its worker: the run is closed as reclaimed, the task ready again (todo if a parent reopened). */
  reclaim(ids: string[], by: string): Promise<Task[]> {
    return this.changeEach(ids, by, onlyFrom(["running"], "only running tasks are reclaimed"), (d, t) => {
      const run = d.closeRun(t, "reclaimed");
      d.setStatus(t, d.readyOrTodo(t), "reclaimed", run ? { run_id: run.run_id, pid: run.pid, pgid: run.pgid } : undefined);
    });
  }

  // ---------- the dispatcher's side ----------

  /** The only `ready → running` move. Parents not all finished: the task goes back to todo with `claim_rejected`. */
  claim(taskId: string, run: { runId: string; profile: string }, by = "dispatcher"): Promise<ClaimResult> {
    return this.change(by, (d): ClaimResult => {
      const current = d.need(taskId);
      if (current.status !== "ready") return { ok: false, reason: `${taskId} is ${current.status}, not ready` };
      const open = d.openParents(current);
      const t = d.edit(taskId);
      if (open.length) {
        d.setStatus(t, "todo", "claim_rejected", { parents: open });
        return { ok: false, reason: `parents not done: ${open.join(", ")}`, task: t };
      }
      d.addRun(t, {
        run_id: run.runId,
        profile: run.profile,
        started_at: d.now,
        ended_at: null,
        outcome: "running",
        detail: null,
        pid: null,
        pgid: null,
        log_path: null,
        last_heartbeat: d.now,
      });
      t.current_run = run.runId;
      t.started_at ??= d.now;
      d.setStatus(t, "running", "claimed", { run_id: run.runId, profile: run.profile });
      return { ok: true, task: t };
    });
  }

  attachRun(taskId: string, runId: string, process: { pid: number | null; pgid: number | null; logPath: string | null }, by = "dispatcher"): Promise<Task> {
    return this.change(by, (d) => {
      const run = d.need(taskId).runs.find((r) => r.run_id === runId);
      if (!run) throw new AgentError("kanban.run_not_found", `task ${taskId} has no run ${runId}`, { id: taskId, run_id: runId });
      const t = d.edit(taskId);
      const r = t.runs.find((x) => x.run_id === runId)!;
      r.pid = process.pid;
      r.pgid = process.pgid;
      r.log_path = process.logPath;
      d.event(t, "spawned", { run_id: runId, pid: process.pid });
      return t;
    });
  }

  /** Extends the claim: only the worker of the task's current run. */
  heartbeat(taskId: string, runId: string, by: string): Promise<Task> {
    return this.change(by, (d) => {
      this.checkWorker(d.need(taskId), { taskId, runId }, "heartbeat");
      const t = d.edit(taskId);
      const run = t.runs.find((r) => r.run_id === runId)!;
      run.last_heartbeat = d.now;
      const last = t.events[t.events.length - 1];
      // One event per run for heartbeats (its first): a long run does not fill the task's history
      // with them, and the recorded event is never rewritten; the run keeps the latest time.
      if (last?.type === "heartbeat" && last.data?.run_id === runId) t.updated_at = d.now;
      else d.event(t, "heartbeat", { run_id: runId });
      return t;
    });
  }

  /**
   * The worker process of a run ended. If the worker completed or blocked its task meanwhile,
   * only the run is closed. Otherwise: spawn failures, crashes and timeouts count one failure
   * (at the limit: blocked with `gave_up`, below it: ready again); a clean exit with the task
   * still running is a `protocol_violation` (blocked); exit 75 (`requeue`) goes back to ready
   * without counting a failure.
   */
  endRun(taskId: string, runId: string, outcome: RunOutcome, detail: string | null, failureLimit: number | undefined, by = "dispatcher"): Promise<Task> {
    return this.change(by, (d) => {
      const current = d.need(taskId);
      const run = current.runs.find((r) => r.run_id === runId);
      if (!run) throw new AgentError("kanban.run_not_found", `task ${taskId} has no run ${runId}`, { id: taskId, run_id: runId });
      if (current.status !== "running" || current.current_run !== runId) {
        if (run.ended_at !== null) return current;
        const t = d.edit(taskId);
        const r = t.runs.find((x) => x.run_id === runId)!;
        r.ended_at = d.now;
        r.outcome = outcome;
        r.detail = detail;
        d.event(t, "run_ended", { run_id: runId, outcome });
        return t;
      }
      const t = d.edit(taskId);
      d.closeRun(t, outcome, detail);
      if (outcome === "requeue") {
        d.setStatus(t, d.readyOrTodo(t), "requeued", { run_id: runId });
      } else if (outcome === "killed") {
        t.reason = detail ?? "its worker was killed (agent kanban kill)";
        d.setStatus(t, "blocked", "killed", { run_id: runId });
      } else if (outcome === "exited_clean") {
        t.reason = "the worker exited without completing or blocking its task";
        d.setStatus(t, "blocked", "protocol_violation", { run_id: runId });
      } else {
        t.consecutive_failures += 1;
        const limit = t.max_retries ?? failureLimit ?? this.env.failureLimit();
        d.event(t, outcome, { run_id: runId, failures: t.consecutive_failures, ...(detail ? { detail } : {}) });
        if (t.consecutive_failures >= limit) {
          t.reason = `gave up after ${t.consecutive_failures} failure(s) (${outcome}${detail ? `: ${detail}` : ""})`;
          d.setStatus(t, "blocked", "gave_up", { failures: t.consecutive_failures, limit });
        } else {
          d.setStatus(t, d.readyOrTodo(t), "retry", { failures: t.consecutive_failures, limit });
        }
      }
      return t;
    });
  }

  /** A worker may complete, block and heartbeat only the task of its own current run. */
  private checkWorker(t: Task, worker: WorkerRef, what: string): void {
    if (worker.taskId !== t.id || t.status !== "running" || t.current_run !== worker.runId) {
      throw new AgentError(
        "kanban.not_your_task",
        `a worker may ${what} only its own running task (${worker.taskId}, run ${worker.runId}); ${t.id} is ${t.status}`,
        { id: t.id, worker_task: worker.taskId },
      );
    }
  }

  // ---------- the decomposer's side ----------

  /**
   * Apply a decomposer's plan in one atomic write. Fan-out: children (with the root's own
   * parents), sibling links from the plan's indices, the root made a child of every leaf so it
   * waits for the whole graph, then `todo` as the orchestrator's; an audit comment and a
   * `decomposed` event. No fan-out: title and body tightened, assigned if it had none, out of triage.
   */
  applyDecomposition(rootId: string, plan: DecompositionPlan, by = "decomposer"): Promise<DecompositionResult> {
    return this.change(by, (d): DecompositionResult => {
      const root = d.need(rootId);
      if (root.status !== "triage" && root.status !== "todo" && root.status !== "ready")
        throw transition(root, "only triage, todo or ready tasks are decomposed");
      if (!plan.fanout) {
        const t = d.edit(rootId);
        if (plan.title.trim()) t.title = plan.title.trim();
        if (plan.body.trim()) t.body = plan.body;
        if (!t.assignee) t.assignee = this.env.resolveAssignee(plan.assignee ?? null).assignee;
        t.reason = null;
        if (plan.comment?.trim()) d.comment(t, "decomposer", plan.comment);
        d.event(t, "decomposed", { fanout: false });
        if (t.status === "triage") d.setStatus(t, d.readyOrTodo(t), "promoted", { assignee: t.assignee });
        return { ok: true, task_id: rootId, reason: null, fanout: false, child_ids: [] };
      }
      const problem = planProblem(plan.children);
      if (problem) throw new AgentError("kanban.invalid_plan", `the decomposition of ${rootId} is not usable: ${problem}`, { id: rootId });
      const ids: string[] = [];
      while (ids.length < plan.children.length) {
        const id = this.newId(d);
        if (!ids.includes(id)) ids.push(id);
      }
      const rootParents = root.parents;
      const children = plan.children.map((spec, i): Task => {
        const parents = [...new Set([...rootParents, ...spec.parents.map((p) => ids[p]!)])];
        return {
          ...structuredClone(root),
          id: ids[i]!,
          title: spec.title.trim(),
          body: spec.body,
          status: "todo",
          assignee: this.env.resolveAssignee(spec.assignee ?? null).assignee,
          priority: root.priority,
          parents,
          idempotency_key: null,
          // A child works in the root's repository, in a worktree of its own made when it is
          // dispatched, based on its finished parents' branches (else the root's base).
          ...(root.git ? { git: pendingGit(root.git), workspace: null } : {}),
          ...unstarted(d.now),
        };
      });
      for (const c of children) d.add(c);
      for (const c of children) for (const p of c.parents) d.edit(p).children.push(c.id);
      const r = d.edit(rootId);
      const leaves = children.filter((c) => c.children.length === 0);
      for (const leaf of leaves) {
        leaf.children.push(rootId);
        r.parents.push(leaf.id);
      }
      // Each link the root gains is an event of its own (its `created` event keeps the parents it had).
      for (const leaf of leaves) d.event(r, "linked", { parent: leaf.id });
      for (const c of children) {
        c.status = d.readyOrTodo(c);
        d.event(c, "created", { status: c.status, assignee: c.assignee, parents: c.parents, root: rootId });
      }
      for (const leaf of leaves) d.event(leaf, "child_linked", { child: rootId });
      r.assignee = this.env.orchestrator();
      r.decomposed = true;
      r.reason = null;
      d.comment(r, "decomposer", plan.comment || `decomposed into ${ids.join(", ")}`);
      d.setStatus(r, "todo", "decomposed", { fanout: true, child_ids: ids, orchestrator: r.assignee });
      return { ok: true, task_id: rootId, reason: null, fanout: true, child_ids: ids };
    });
  }

  /** The decomposer could not use the model's answer: the task stays where it is, with the reason. */
  rejectDecomposition(rootId: string, reason: string, by = "decomposer"): Promise<DecompositionResult> {
    return this.change(by, (d) => {
      const t = d.edit(rootId);
      t.reason = reason;
      d.event(t, "decompose_failed", { reason });
      return { ok: false, task_id: rootId, reason, fanout: false, child_ids: [] };
    });
  }

  /**
   * The dashboard's edit of one task. Setting `running` is refused (only a claim starts a task);
   * `ready` with unfinished parents is refused naming them; other statuses go through the same
   * rules as the commands.
   */
  async update(
    id: string,
    patch: { title?: string; body?: string; assignee?: string; priority?: number; status?: TaskStatus; summary?: string; result?: string; reason?: string },
    by: string,
  ): Promise<Task> {
    const status = patch.status;
    if (status === "running") throw new AgentError("kanban.running_refused", "a task becomes running only when the dispatcher claims it", { id });
    if (patch.assignee !== undefined && !this.env.profileExists(patch.assignee)) throw this.env.unknownProfile(patch.assignee);
    if (status === "done" && !patch.summary?.trim() && !patch.result?.trim()) {
      throw new AgentError("kanban.summary_required", "setting a task done needs a summary or a result");
    }
    return this.change(by, (d) => {
      const t = d.edit(id);
      if (patch.title?.trim()) t.title = patch.title.trim();
      if (patch.body !== undefined) t.body = patch.body;
      if (patch.priority !== undefined) t.priority = patch.priority;
      if (patch.assignee !== undefined) t.assignee = patch.assignee;
      if (patch.title !== undefined || patch.body !== undefined || patch.priority !== undefined || patch.assignee !== undefined) d.event(t, "edited");
      if (status === undefined || status === t.status) return t;
      if (t.status === "running" && status !== "blocked" && status !== "done" && status !== "scheduled") {
        throw transition(t, `a running task can only be set blocked, scheduled or done (reclaim it first to set ${status})`);
      }
      if (status === "ready") {
        if (t.held) throw transition(t, `it is held: agent kanban release ${id} lets it run`);
        const open = d.openParents(t);
        if (open.length)
          throw new AgentError("kanban.parents_unfinished", `${id} cannot be ready: parents not done: ${open.join(", ")}`, { id, parents: open });
      }
      if (t.status === "running") d.closeRun(t, status === "done" ? "completed" : status, patch.reason ?? null);
      if (status === "done") {
        t.summary = patch.summary?.trim() || null;
        t.result = patch.result?.trim() ? patch.result : null;
        t.consecutive_failures = 0;
        t.completed_at = d.now;
      }
      if (status === "blocked" || status === "scheduled") t.reason = patch.reason?.trim() || null;
      else t.reason = null;
      if (status === "triage" || status === "ready" || status === "todo") t.assignee ??= status === "triage" ? null : this.env.resolveAssignee(null).assignee;
      // `todo` means waiting for parents: with none open the task is ready at once.
      d.setStatus(t, status === "todo" ? d.readyOrTodo(t) : status, "status_set");
      if (isFinished(status)) d.wakeChildren(t);
      else this.reopenChildren(d, t);
      return t;
    });
  }

  /** A finished task reopened: its ready children wait for it again. */
  private reopenChildren(d: Draft, t: Task): void {
    for (const c of t.children) {
      const child = d.peek(c);
      if (child?.status === "ready") d.setStatus(d.edit(c), "todo", "demoted", { because: t.id });
    }
  }
}

/** A worktree yet to be made in the same repository, from the same base. */
export function pendingGit(from: TaskGit): TaskGit {
  return { repo: from.repo, base: from.base, base_ref: from.base_ref, branch: null, path: null, removed: false, work: null, merged: null };
}

function byPriorityThenAge(a: { priority: number; created_at: number; id: string }, b: { priority: number; created_at: number; id: string }): number {
  return b.priority - a.priority || a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}

/** What is wrong with a fan-out (empty, a bad or self index, a cycle), or null. */
export function planProblem(children: Array<{ title: string; parents: number[] }>): string | null {
  if (children.length === 0) return "the fan-out has no tasks";
  for (const [i, c] of children.entries()) {
    if (typeof c.title !== "string" || !c.title.trim()) return `task ${i} has no title`;
    for (const p of c.parents) {
      if (!Number.isInteger(p) || p < 0 || p >= children.length) return `task ${i} names parent index ${p}, which does not exist`;
      if (p === i) return `task ${i} names itself as a parent`;
    }
  }
  // Depth-first search for a cycle in the parent indices.
  const state = new Array<number>(children.length).fill(0);
  const visit = (i: number): boolean => {
    if (state[i] === 1) return true;
    if (state[i] === 2) return false;
    state[i] = 1;
    for (const p of children[i]!.parents) if (visit(p)) return true;
    state[i] = 2;
    return false;
  };
  for (let i = 0; i < children.length; i++) if (visit(i)) return "the parent indices make a cycle";
  return null;
}

/**
 * The dispatcher: on every tick (`kanban.dispatch_interval_seconds`) and whenever a task becomes
 * ready or a worker ends, it claims ready tasks (priority, then age) up to
 * `kanban.max_in_progress` running tasks in all and `kanban.max_in_progress_per_profile` per
 * assignee, and starts one worker process per claim (spawn.ts). It supervises what it started:
 * a worker past its task's `max_runtime`, or silent (no heartbeat) for
 * `kanban.claim_ttl_seconds`, gets SIGTERM, then SIGKILL, as a group; a worker's end is
 * classified and handed to the board (`endRun`): exit 0 → exited_clean (a protocol violation
 * unless the worker completed or blocked its task), 75 → requeue, a timeout → timed_out,
 * anything else → crashed, and a process that never started → spawn_failed.
 *
 * Restarts: at start it reconciles the runs the board thinks are live. A run whose worker still
 * runs (its pid, started with the run's id in its environment) is adopted and watched until it
 * exits; one whose worker is gone is ended with the exit status its wrapper recorded (a crash
 * when there is none); a claim that never got a process (the daemon died between claim and
 * spawn) goes back to ready without counting a failure.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { toAgentError } from "../../../shared/errors.js";
import { profilePaths } from "../../../shared/paths.js";
import { resolveProvider } from "../../models/resolve.js";
import type { DaemonContext } from "../../context.js";
import type { Logger } from "../../log/logger.js";
import { writeFileAtomicSync } from "../../store/atomic-file.js";
import type { KanbanService } from "../kanban-service.js";
import { type DecomposeReport, Decomposer } from "../decompose/decompose.js";
import { ProcessGroup, usageOfGroups } from "../../process/process-group.js";
import { statSync } from "node:fs";
import { AgentError } from "../../../shared/errors.js";
import type { WorkerProcess } from "../../../shared/protocol/kanban.js";
import { isRunWorker, readExitFile, readPidFile, type SpawnedWorker, spawnWorker } from "./spawn.js";
import { startRunLog, taskLogPath } from "./task-log.js";
import { boardView, type BoardView, type DispatchTask, type RunningRun } from "./view.js";

export interface DispatchOptions {
  dryRun?: boolean;
  failureLimit?: number;
  /** Only this board's ready tasks (default: every board's). */
  board?: string;
}

export type DispatchReport = {
  dryRun: boolean;
  /** Workers started (or, on a dry run, that would be: no run id, no pid). */
  spawned: Array<{ task_id: string; assignee: string; run_id: string | null; pid: number | null }>;
  /** Ready tasks left alone, each with why. */
  skipped: Array<{ task_id: string; assignee: string; reason: string }>;
  /** Runs ended by this tick (a dead worker reclaimed, a timeout). */
  ended: Array<{ task_id: string; run_id: string; outcome: string; detail: string }>;
  /** Tasks sent to the decomposer on this tick. */
  decomposing: string[];
  running: number;
  limits: { max_in_progress: number; max_in_progress_per_profile: number };
};

interface LiveRun {
  taskId: string;
  board: string;
  runId: string;
  profile: string;
  pid: number;
  startedAt: number;
  deadline: number | null;
  logPath: string;
  exitFile: string;
  pidFile: string;
  /** The daemon's own child (its exit is an event) or a worker adopted after a restart (polled). */
  child: boolean;
  /** Its process group (daemon/process/): stopped by the one grace rule. */
  group: ProcessGroup;
  /** Why the dispatcher stopped it (past max_runtime, no heartbeat), or null. */
  timedOut: string | null;
  /** Stopped by `agent kanban kill`: the run ends as killed, not as a crash. */
  killed: boolean;
  ending: boolean;
  /** Resolves once the run's end is recorded on the board. */
  ended: Promise<void>;
  markEnded: () => void;
  /** The previous ps sample of the group's CPU time: [at ms, cpu seconds]. */
  lastSample: [number, number] | null;
}

function endSignal(): { ended: Promise<void>; markEnded: () => void } {
  let markEnded = () => undefined as void;
  const ended = new Promise<void>((resolve) => {
    markEnded = resolve;
  });
  return { ended, markEnded };
}

const ADOPTED_POLL_MS = 500;
/** A wake waits this long, so a burst of changes (a hundred tasks created) shares one tick. */
export const WAKE_DELAY_MS = 50;
/** setTimeout's longest delay (about 24.8 days); longer deadlines are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function newRunId(): string {
  return `r_${randomBytes(6).toString("hex")}`;
}

export class Dispatcher {
  readonly #ctx: DaemonContext;
  readonly #log: Logger;
  readonly #board: BoardView;
  readonly #live = new Map<string, LiveRun>();
  readonly #runDir: string;
  readonly #decomposer: Decomposer;
  /** Tasks whose worker exited 75 (rate limited): not started again before this time. */
  readonly #notBefore = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #poll: NodeJS.Timeout | null = null;
  #ticking: Promise<DispatchReport> | null = null;
  #wake: NodeJS.Timeout | null = null;
  #stopped = false;
  #unsubscribe: (() => void) | null = null;

  constructor(ctx: DaemonContext, kanban: KanbanService) {
    this.#ctx = ctx;
    this.#log = ctx.logSink.logger("kanban");
    this.#board = boardView(ctx, kanban);
    this.#runDir = join(ctx.paths.data, "kanban", "runs");
    this.#decomposer = new Decomposer(ctx, kanban);
  }

  get decomposer(): Decomposer {
    return this.#decomposer;
  }

  #config() {
    return this.#ctx.config.current().kanban;
  }

  async start(): Promise<void> {
    mkdirSync(this.#runDir, { recursive: true });
    await this.reconcile();
    const offWake = this.#board.onWake(() => this.wake());
    // A reclaimed run's worker is stopped: the task is someone else's now.
    const offReclaimed = this.#board.onReclaimed((runId) => {
      const live = this.#live.get(runId);
      if (live) this.#timeout(live, "its run was reclaimed");
    });
    this.#unsubscribe = () => (offWake(), offReclaimed());
    this.#schedule();
    this.wake();
  }

  #schedule(): void {
    if (this.#stopped) return;
    const seconds = Math.max(0.05, Number(this.#config().dispatch_interval_seconds) || 10);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#auto().catch((error) => this.#log.error("dispatcher tick failed", { error: String(error) }));
      this.#schedule();
    }, seconds * 1000);
    this.#timer.unref();
  }

  /** A tick soon (a task became ready, a run ended): several wakes in a row share one tick. */
  wake(): void {
    if (this.#stopped || this.#wake) return;
    this.#wake = setTimeout(() => {
      this.#wake = null;
      this.#auto().catch((error) => this.#log.error("dispatcher tick failed", { error: String(error) }));
    }, WAKE_DELAY_MS);
    this.#wake.unref();
  }

  /** The dispatcher's own tick: no report of the tasks it leaves, and it stops once every slot is taken. */
  #auto(): Promise<DispatchReport> {
    return this.tick({ quiet: true });
  }

  /** One tick; ticks run one at a time (a tick asked for during one runs right after it). */
  async tick(options: DispatchOptions & { quiet?: boolean }): Promise<DispatchReport> {
    if (options.dryRun) return this.#tick(options);
    while (this.#ticking) await this.#ticking.catch(() => undefined);
    this.#ticking = this.#tick(options);
    try {
      return await this.#ticking;
    } finally {
      this.#ticking = null;
    }
  }

  async #tick(options: DispatchOptions & { quiet?: boolean }): Promise<DispatchReport> {
    const config = this.#config();
    const dryRun = options.dryRun === true;
    const limits = { max_in_progress: Number(config.max_in_progress), max_in_progress_per_profile: Number(config.max_in_progress_per_profile) };
    const report: DispatchReport = { dryRun, spawned: [], skipped: [], ended: [], decomposing: [], running: 0, limits };
    if (this.#stopped) return report;
    if (!dryRun) await this.#reclaimDead(report, options.failureLimit);
    const running = this.#board.running();
    const perProfile = new Map<string, number>();
    for (const r of running) perProfile.set(r.assignee, (perProfile.get(r.assignee) ?? 0) + 1);
    let total = running.length;
    // A worker without a model would only fail: its task stays ready until the profile has one
    // (checked once per profile and tick).
    const problems = new Map<string, string | null>();
    const skip = (task: DispatchTask, reason: string) => {
      if (!options.quiet) report.skipped.push({ task_id: task.id, assignee: task.assignee, reason });
    };
    for (const task of this.#board.ready()) {
      // The dispatcher's own ticks only look for what they can start: none once the slots are taken.
      if (options.quiet && total >= limits.max_in_progress) break;
      if (options.board && task.board !== options.board) continue;
      const assignee = task.assignee;
      const wait = this.#notBefore.get(task.id);
      if (wait !== undefined && wait > Date.now()) {
        skip(task, `rate limited (its worker exited 75): waits until ${new Date(wait).toISOString()}`);
        continue;
      }
      this.#notBefore.delete(task.id);
      if (!problems.has(assignee)) problems.set(assignee, await this.#modelProblem(assignee));
      const problem = problems.get(assignee);
      if (problem) {
        skip(task, `profile ${assignee} has no model to run a worker: ${problem}`);
        continue;
      }
      if (total >= limits.max_in_progress) {
        skip(task, `kanban.max_in_progress reached (${total} of ${limits.max_in_progress} running)`);
        continue;
      }
      const mine = perProfile.get(assignee) ?? 0;
      if (mine >= limits.max_in_progress_per_profile) {
        skip(task, `profile ${assignee} is at kanban.max_in_progress_per_profile (${mine} of ${limits.max_in_progress_per_profile} running)`);
        continue;
      }
      if (dryRun) {
        report.spawned.push({ task_id: task.id, assignee, run_id: null, pid: null });
      } else {
        const runId = newRunId();
        const claim = await this.#board.claim(task, runId);
        if (!claim.ok) {
          skip(task, `claim refused: ${claim.reason}`);
          continue;
        }
        const started = await this.#start(claim.task, runId, options.failureLimit, report);
        if (!started) continue;
        report.spawned.push({ task_id: task.id, assignee: claim.task.assignee, run_id: runId, pid: started.pid });
      }
      total += 1;
      perProfile.set(assignee, mine + 1);
    }
    report.running = dryRun ? total : this.#live.size;
    if (!dryRun) report.decomposing = this.#decomposer.autoDecompose();
    if (!dryRun) this.#log.debug("dispatch tick done", { auto: options.quiet === true, spawned: report.spawned.length, running: report.running });
    return report;
  }

  async #start(task: DispatchTask, runId: string, failureLimit: number | undefined, report: DispatchReport) {
    const home = this.#ctx.home;
    const logPath = taskLogPath(home, task.id);
    const exitFile = join(this.#runDir, `${runId}.exit`);
    const pidFile = join(this.#runDir, `${runId}.pid`);
    const logs = this.#ctx.config.current().logs;
    let worker: SpawnedWorker | null = null;
    try {
      const redactor = this.#ctx.logSink.redactor;
      const limits = { maxBytes: logs.max_bytes, keep: logs.keep };
      // A worktree still to be made (a decomposer's child, a plan's task) is made now, from its parents' branches.
      const cwd = (await this.#board.ensureWorktree(task)) ?? task.workspace;
      startRunLog(logPath, limits, `=== ${new Date().toISOString()} run ${runId} of ${task.id} as ${task.assignee} ===`, redactor);
      worker = await spawnWorker({
        home,
        board: task.board,
        taskId: task.id,
        runId,
        profile: task.assignee,
        cwd,
        logPath,
        log: { ...limits, secrets: redactor.values() },
        exitFile,
        pidFile,
        env: this.#ctx.config.env(),
      });
      writeFileAtomicSync(join(this.#runDir, `${runId}.json`), JSON.stringify({ taskId: task.id, pid: worker.pid, failureLimit: failureLimit ?? null }));
      await this.#board.attachRun(task, runId, { pid: worker.pid, logPath });
    } catch (error) {
      // Not started, or started but not recorded (then it is stopped: an unrecorded worker would be unsupervised).
      if (worker) worker.group.kill();
      const detail = `could not start the worker: ${(error as Error).message}`;
      this.#log.warn("worker spawn failed", { task: task.id, run: runId, error: detail });
      await this.#board.endRun(task, runId, "spawn_failed", detail, failureLimit).catch(() => undefined);
      report.ended.push({ task_id: task.id, run_id: runId, outcome: "spawn_failed", detail });
      this.#forget(runId);
      return null;
    }
    const live: LiveRun = {
      taskId: task.id,
      board: task.board,
      runId,
      profile: task.assignee,
      pid: worker.pid,
      startedAt: Date.now(),
      deadline: task.max_runtime ? Date.now() + task.max_runtime * 1000 : null,
      logPath,
      exitFile,
      pidFile,
      child: true,
      group: worker.group,
      timedOut: null,
      killed: false,
      ending: false,
      lastSample: null,
      ...endSignal(),
    };
    this.#live.set(runId, live);
    this.#log.info("worker started", { task: task.id, run: runId, profile: task.assignee, pid: worker.pid });
    this.#armDeadline(live);
    worker.exited.then(({ code, signal }) => this.#ended(live, code ?? (signal ? 128 + signalNumber(signal) : null), failureLimit));
    return worker;
  }

  /** Why the profile cannot run a model turn (no provider configured, say), or null. */
  async #modelProblem(profile: string): Promise<string | null> {
    try {
      const profiles = this.#ctx.services.get("profiles");
      const view = await profiles.config(profile);
      resolveProvider(view.current(), view.env(), profilePaths(this.#ctx.home, profile).dir, {});
      return null;
    } catch (error) {
      return (toAgentError(error).message.split("\n")[0] ?? "").trim();
    }
  }

  /** The run's files in data/kanban/runs/ (exit status, pid, failure limit). */
  #forget(runId: string): void {
    for (const ext of ["exit", "pid", "json"]) rmSync(join(this.#runDir, `${runId}.${ext}`), { force: true });
  }

  #armDeadline(live: LiveRun): void {
    if (live.deadline === null) return;
    const left = Math.max(0, live.deadline - Date.now());
    const t = setTimeout(() => (left > MAX_TIMER_MS ? this.#armDeadline(live) : this.#timeout(live, "ran past its max_runtime")), Math.min(left, MAX_TIMER_MS));
    t.unref();
  }

  /** Past max_runtime (or its claim expired): SIGTERM to the group, SIGKILL after a grace period. */
  #timeout(live: LiveRun, why: string): void {
    if (live.ending || live.timedOut || !this.#live.has(live.runId)) return;
    live.timedOut = why;
    this.#log.warn("stopping a worker", { task: live.taskId, run: live.runId, pid: live.pid, why });
    live.group.stop();
  }

  /** A worker ended (our child's exit event, or an adopted worker found gone): classify and tell the board. */
  async #ended(live: LiveRun, code: number | null, failureLimit?: number): Promise<void> {
    // A daemon that is stopping leaves the run to the next start's reconcile.
    if (live.ending || this.#stopped) return;
    live.ending = true;
    // Whatever the wrapper left of the group (the worker's own children) goes with it.
    live.group.forget({ killLeftovers: true });
    const recorded = readExitFile(live.exitFile);
    const status = recorded ?? code;
    const { outcome, detail } = live.killed
      ? { outcome: "killed" as const, detail: "killed by agent kanban kill (SIGTERM, then SIGKILL after the grace period)" }
      : classify(status, live.timedOut);
    if (outcome === "requeue") this.#backOff(live.taskId);
    try {
      await this.#board.endRun({ id: live.taskId, board: live.board }, live.runId, outcome, detail, failureLimit ?? this.#savedFailureLimit(live.runId));
      this.#log.info("worker ended", { task: live.taskId, run: live.runId, outcome, detail });
    } catch (error) {
      this.#log.error("could not end a run", { task: live.taskId, run: live.runId, error: String(error) });
    }
    this.#live.delete(live.runId);
    this.#forget(live.runId);
    live.markEnded();
    this.wake();
  }

  /**
   * Every live worker with its process group's CPU and RSS (one pass over /proc for all of
   * them), runtime, last heartbeat and log size. CPU percent is against the previous ps of the
   * same run (the first: the run's whole life).
   */
  ps(board?: string): WorkerProcess[] {
    const runs = [...this.#live.values()].filter((l) => !board || l.board === board);
    const usage = usageOfGroups(runs.map((l) => l.group.pgid));
    const heartbeats = new Map(this.#board.running().map((r) => [r.runId, r]));
    const now = Date.now();
    return runs.map((l) => {
      const u = usage.get(l.group.pgid)!;
      const [since, before] = l.lastSample ?? [l.startedAt, 0];
      l.lastSample = [now, u.cpuSeconds];
      const elapsed = Math.max(0.001, (now - since) / 1000);
      let logBytes = 0;
      try {
        logBytes = statSync(l.logPath).size;
      } catch {}
      return {
        task_id: l.taskId,
        board: l.board,
        title: heartbeats.get(l.runId)?.title ?? "",
        profile: l.profile,
        run_id: l.runId,
        pid: l.pid,
        pgid: l.group.pgid,
        processes: u.processes,
        cpu_seconds: Math.round(u.cpuSeconds * 100) / 100,
        cpu_percent: Math.round((Math.max(0, u.cpuSeconds - before) / elapsed) * 1000) / 10,
        rss_bytes: u.rssBytes,
        started_at: l.startedAt,
        runtime_seconds: Math.round((now - l.startedAt) / 100) / 10,
        last_heartbeat: heartbeats.get(l.runId)?.lastHeartbeat ?? l.startedAt,
        log_path: l.logPath,
        log_bytes: logBytes,
        adopted: !l.child,
      };
    });
  }

  /**
   * `agent kanban kill`: the task's worker group is stopped by the one grace rule (SIGTERM, then
   * SIGKILL), and its run recorded as killed (the task blocked, no failure counted). Resolves
   * once the run's end is on the board.
   */
  async kill(taskId: string): Promise<void> {
    const live = [...this.#live.values()].find((l) => l.taskId === taskId);
    if (!live) throw new AgentError("kanban.not_running", `${taskId} has no running worker in this daemon (agent kanban ps lists them)`, { id: taskId });
    if (!live.ending) {
      live.killed = true;
      this.#log.info("killing a worker", { task: live.taskId, run: live.runId, pid: live.pid });
      live.group.stop();
      if (!live.child) this.#pollAdopted();
    }
    await live.ended;
  }

  /** A rate-limited task waits one dispatch interval before its next worker. */
  #backOff(taskId: string): void {
    this.#notBefore.set(taskId, Date.now() + Math.max(0.05, Number(this.#config().dispatch_interval_seconds) || 10) * 1000);
  }

  #savedFailureLimit(runId: string): number | undefined {
    try {
      const saved = JSON.parse(readFileSync(join(this.#runDir, `${runId}.json`), "utf8")) as { failureLimit: number | null };
      return saved.failureLimit ?? undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The board's running tasks that no live worker of ours backs: adopted when their worker still
   * runs, ended when it is gone, requeued when they never had one.
   */
  async #reclaimDead(report: DispatchReport | null, failureLimit?: number): Promise<void> {
    const ttl = Number(this.#config().claim_ttl_seconds) * 1000;
    for (const r of this.#board.running()) {
      const known = this.#live.get(r.runId);
      if (known) {
        if (!known.child && !isRunWorker(known.pid, known.runId)) await this.#ended(known, null);
        else {
          // Heartbeats extend the claim; a worker silent for longer than kanban.claim_ttl_seconds is stopped.
          if (ttl > 0 && Date.now() - Math.max(r.lastHeartbeat, known.startedAt) > ttl)
            this.#timeout(known, `sent no heartbeat for ${Math.round(ttl / 1000)} s (kanban.claim_ttl_seconds)`);
        }
        continue;
      }
      await this.#reconcileRun(r, report, failureLimit);
    }
  }

  async #reconcileRun(r: RunningRun, report: DispatchReport | null, failureLimit?: number): Promise<void> {
    const exitFile = join(this.#runDir, `${r.runId}.exit`);
    const pidFile = join(this.#runDir, `${r.runId}.pid`);
    const task = { id: r.taskId, board: r.board };
    // A worker the daemon started but did not get to record is found by the pid its wrapper wrote.
    const pid = r.pid ?? readPidFile(pidFile);
    if (pid === null && readExitFile(exitFile) === null) {
      // Claimed, but the worker was never started (the daemon stopped in between): no failure of the task's.
      const detail = "the worker was never started (the daemon stopped after the claim)";
      await this.#board.endRun(task, r.runId, "requeue", detail, failureLimit);
      report?.ended.push({ task_id: r.taskId, run_id: r.runId, outcome: "requeue", detail });
      this.#forget(r.runId);
      return;
    }
    if (pid !== null && isRunWorker(pid, r.runId)) {
      const logPath = r.logPath ?? taskLogPath(this.#ctx.home, r.taskId);
      if (r.pid === null) await this.#board.attachRun(task, r.runId, { pid, logPath });
      const live: LiveRun = {
        taskId: r.taskId,
        board: r.board,
        runId: r.runId,
        profile: r.assignee,
        pid,
        startedAt: r.startedAt,
        deadline: r.maxRuntime ? r.startedAt + r.maxRuntime * 1000 : null,
        logPath,
        exitFile,
        pidFile,
        child: false,
        group: ProcessGroup.adopt(pid),
        timedOut: null,
        killed: false,
        ending: false,
        lastSample: null,
        ...endSignal(),
      };
      this.#live.set(r.runId, live);
      this.#armDeadline(live);
      this.#pollAdopted();
      this.#log.info("worker adopted after a restart", { task: r.taskId, run: r.runId, pid });
      return;
    }
    const code = readExitFile(exitFile);
    const { outcome, detail } = code === null ? { outcome: "crashed" as const, detail: "the worker's process is gone" } : classify(code, null);
    if (outcome === "requeue") this.#backOff(r.taskId);
    await this.#board.endRun(task, r.runId, outcome, detail, failureLimit ?? this.#savedFailureLimit(r.runId));
    report?.ended.push({ task_id: r.taskId, run_id: r.runId, outcome, detail });
    this.#forget(r.runId);
    this.#log.info("run reclaimed", { task: r.taskId, run: r.runId, outcome, detail });
  }

  /** At start: every run the board thinks is live is checked against its process. */
  async reconcile(): Promise<void> {
    await this.#reclaimDead(null);
  }

  /** Adopted workers are not our children: their end is seen by polling their pid. */
  #pollAdopted(): void {
    if (this.#poll || this.#stopped) return;
    this.#poll = setInterval(() => {
      const adopted = [...this.#live.values()].filter((l) => !l.child);
      if (!adopted.length) {
        clearInterval(this.#poll!);
        this.#poll = null;
        return;
      }
      for (const l of adopted) if (!isRunWorker(l.pid, l.runId)) void this.#ended(l, null);
    }, ADOPTED_POLL_MS);
    this.#poll.unref();
  }

  /** The live runs (for `kanban.log --follow`: is the task's worker still writing?). */
  isRunning(taskId: string): boolean {
    for (const l of this.#live.values()) if (l.taskId === taskId) return true;
    return false;
  }

  /** Stop ticking. Workers keep running (they are detached); the next start adopts them. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    for (const t of [this.#timer, this.#wake]) if (t) clearTimeout(t);
    if (this.#poll) clearInterval(this.#poll);
    // A pending SIGKILL is dropped: the next start adopts the worker (and its deadline) again.
    for (const l of this.#live.values()) l.group.forget();
    await this.#ticking?.catch(() => undefined);
    await this.#decomposer.stop();
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  const table: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
  return table[signal] ?? 0;
}

/** A worker's exit status → the run's outcome. */
export function classify(code: number | null, timedOut: string | null): { outcome: "crashed" | "timed_out" | "exited_clean" | "requeue"; detail: string } {
  if (timedOut) return { outcome: "timed_out", detail: `${timedOut} (SIGTERM, then SIGKILL)` };
  if (code === 0) return { outcome: "exited_clean", detail: "exit code 0" };
  if (code === 75) return { outcome: "requeue", detail: "exit code 75 (rate limited)" };
  if (code === null) return { outcome: "crashed", detail: "the worker's process is gone" };
  return { outcome: "crashed", detail: code > 128 ? `killed by signal ${code - 128}` : `exit code ${code}` };
}

/** The kanban feature's hook: the dispatcher, started (reconciled and ticking). */
export async function startDispatcher(ctx: DaemonContext, kanban: KanbanService): Promise<Dispatcher> {
  const dispatcher = new Dispatcher(ctx, kanban);
  await dispatcher.start();
  return dispatcher;
}

export type { DecomposeReport };

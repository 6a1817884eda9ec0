/**
 * The decomposer: asks the model in the `auxiliary.kanban_decomposer` slot (its provider and/or
 * model; empty means the main model) to split a task into child tasks for the roster of
 * profiles, or to tighten it as one task, and hands the checked plan to the board, which
 * applies it in one atomic write. An answer that cannot be used (not JSON, an empty fan-out,
 * a bad index, a cycle) leaves the task in triage with the reason, and is reported as
 * `{ok: false, reason}`, not as an error.
 *
 * Manual: `kanban.decompose` (ids, or every triage task). Automatic: each dispatcher tick
 * starts at most `kanban.auto_decompose_per_tick` triage tasks when `kanban.auto_decompose` is
 * on; a task whose decomposition failed is not retried automatically until the daemon restarts
 * (a manual decompose retries it at once).
 */
import { AgentError, toAgentError } from "../../../shared/errors.js";
import type { DecomposeResult } from "../../../shared/protocol/kanban.js";
import { OpenAIChatModel } from "../../models/openai-chat.js";
import { RateLimitBook } from "../../models/rate-limits.js";
import { resolveProvider } from "../../models/resolve.js";
import type { DaemonContext } from "../../context.js";
import type { Logger } from "../../log/logger.js";
import type { KanbanService } from "../kanban-service.js";
import { boardView, type BoardView } from "../dispatch/view.js";
import { parseDecomposition } from "./parse.js";
import { decomposerMessages } from "./prompt.js";
import { profileRoster } from "./roster.js";

export type DecomposeReport = DecomposeResult;

const rateLimits = new RateLimitBook();

export class Decomposer {
  readonly #ctx: DaemonContext;
  readonly #log: Logger;
  readonly #board: BoardView;
  /** Decompositions in flight, by task id: a second request for one waits for the first. */
  readonly #inFlight = new Map<string, Promise<DecomposeResult>>();
  /** Tasks whose automatic decomposition failed (not retried automatically). */
  readonly #failed = new Set<string>();
  #stopping = new AbortController();

  constructor(ctx: DaemonContext, kanban: KanbanService) {
    this.#ctx = ctx;
    this.#log = ctx.logSink.logger("kanban");
    this.#board = boardView(ctx, kanban);
  }

  /** Decompose the given tasks, or every triage task (`all`), one after another. */
  async decomposeMany(request: { taskIds?: string[]; all?: boolean; board?: string }): Promise<DecomposeResult[]> {
    if (request.all && request.taskIds?.length) throw new AgentError("usage.invalid", "give task ids or --all, not both");
    if (!request.all && !request.taskIds?.length) throw new AgentError("usage.invalid", "name the tasks to decompose, or --all for every triage task");
    const ids = request.all ? this.#board.triage(request.board).map((t) => t.id) : request.taskIds!;
    // Unknown ids fail the whole request before any model call.
    for (const id of ids) await this.#board.task(id, request.board);
    const results: DecomposeResult[] = [];
    for (const id of ids) results.push(await this.decompose(id, request.board));
    return results;
  }

  /** One task: the model's plan applied, or the reason it was not. */
  decompose(taskId: string, board?: string): Promise<DecomposeResult> {
    const running = this.#inFlight.get(taskId);
    if (running) return running;
    const work = this.#decompose(taskId, board).finally(() => this.#inFlight.delete(taskId));
    this.#inFlight.set(taskId, work);
    return work;
  }

  async #decompose(taskId: string, board?: string): Promise<DecomposeResult> {
    const task = await this.#board.task(taskId, board);
    if (task.status !== "triage" && task.status !== "todo" && task.status !== "ready")
      throw new AgentError("kanban.invalid_transition", `${taskId} is ${task.status}: only triage, todo or ready tasks are decomposed`, {
        id: taskId,
        status: task.status,
      });
    if (task.decomposed) return { ok: false, task_id: taskId, reason: `${taskId} was decomposed already`, fanout: false, child_ids: [] };
    let reply: string;
    try {
      reply = await this.#ask(task);
    } catch (error) {
      const reason = `the decomposer's model call failed: ${toAgentError(error).message}`;
      this.#log.warn("decompose failed", { task: taskId, reason });
      return this.#board.rejectDecomposition(taskId, reason, board);
    }
    const parsed = parseDecomposition(reply);
    if (!parsed.ok) {
      this.#log.warn("decompose rejected", { task: taskId, reason: parsed.reason });
      return this.#board.rejectDecomposition(taskId, parsed.reason, board);
    }
    try {
      const result = await this.#board.applyDecomposition(taskId, parsed.plan, board);
      this.#log.info("task decomposed", { task: taskId, fanout: result.fanout, children: result.child_ids.length });
      return result;
    } catch (error) {
      const e = toAgentError(error);
      if (e.code !== "kanban.invalid_plan") throw e;
      return this.#board.rejectDecomposition(taskId, e.message, board);
    }
  }

  /** The model of the auxiliary.kanban_decomposer slot (its provider and/or model over the main model's). */
  #provider() {
    const config = this.#ctx.config.current();
    const slot = config.auxiliary.kanban_decomposer;
    const provider = resolveProvider(config, this.#ctx.config.env(), this.#ctx.home, slot.provider ? { provider: slot.provider } : {});
    if (slot.model) provider.model = slot.model;
    return provider;
  }

  async #ask(task: { id: string; title: string; body: string; assignee: string | null }): Promise<string> {
    const provider = this.#provider();
    const model = new OpenAIChatModel(provider, rateLimits);
    const roster = profileRoster(this.#ctx);
    const signal = AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(Math.max(provider.readTimeoutMs * 2, 60_000))]);
    const answer = await model.complete({ messages: decomposerMessages(task, roster), signal });
    return answer.content;
  }

  /**
   * Start the automatic decompositions of this tick (at most `kanban.auto_decompose_per_tick`
   * at once, oldest and most urgent first); returns the task ids started. They run in the
   * background: a tick does not wait for the model.
   */
  autoDecompose(): string[] {
    const config = this.#ctx.config.current().kanban;
    if (!config.auto_decompose) return [];
    const room = Number(config.auto_decompose_per_tick) - this.#inFlight.size;
    if (room <= 0) return [];
    // Without a model every attempt would fail: triage tasks wait (a manual decompose says why).
    try {
      this.#provider();
    } catch {
      return [];
    }
    const started: string[] = [];
    for (const { id, board } of this.#board.triage()) {
      if (started.length >= room) break;
      if (this.#inFlight.has(id) || this.#failed.has(id)) continue;
      started.push(id);
      this.decompose(id, board).then(
        (r) => {
          if (!r.ok) this.#failed.add(id);
        },
        (error) => {
          this.#failed.add(id);
          this.#log.warn("automatic decompose failed", { task: id, error: String(error) });
        },
      );
    }
    return started;
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    await Promise.allSettled([...this.#inFlight.values()]);
  }
}

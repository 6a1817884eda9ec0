import { existsSync } from "node:fs";
import type { Tinypool } from "tinypool";
import { AgentError } from "../../shared/errors.js";
import { threadScript } from "../thread-script.js";
import type { TaskKind, TaskOf, TaskOutcome } from "./messages.js";

/** Sized for a 2-core machine: one warm thread, a second under load, extra threads retire when idle. */
export const POOL_DEFAULTS = Object.freeze({
  minThreads: 1,
  maxThreads: 2,
  idleTimeoutMs: 30_000,
  /** A task running longer than this (a pathological regex, say) is killed with its thread. */
  taskTimeoutMs: 120_000,
});

export type PoolOptions = Partial<typeof POOL_DEFAULTS> & { workerPath?: string };

/** A pool-level failure (the task never produced an answer); tool code turns it into ok:false. */
export class PoolError extends AgentError {
  constructor(
    code: "pool.task_failed" | "pool.aborted" | "pool.timeout" | "pool.closed" | "pool.worker_missing",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, undefined, options);
    this.name = "PoolError";
  }
}

/**
 * The thread runs compiled JavaScript: next to this file in dist/, or dist/daemon/pool/pool-thread.js
 * when this module itself runs from source (tests under tsx).
 */
export function defaultWorkerPath(): string {
  return threadScript(import.meta.url, "pool-thread.js");
}

export class ToolPool {
  readonly options: Readonly<typeof POOL_DEFAULTS>;
  readonly workerPath: string;
  #pool: Tinypool | null = null;
  #closed = false;

  constructor(options: PoolOptions = {}) {
    const { workerPath, ...rest } = options;
    this.options = Object.freeze({ ...POOL_DEFAULTS, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) });
    this.workerPath = workerPath ?? defaultWorkerPath();
  }

  /** True once the first task started the threads. */
  get started(): boolean {
    return this.#pool !== null;
  }

  get threadCount(): number {
    return this.#pool?.threads.length ?? 0;
  }

  // Created on first use so a daemon that never runs a tool starts no threads, and loaded then
  // too: tinypool's modules cost a daemon start ~15 ms of CPU.
  #loading: Promise<typeof Tinypool> | null = null;
  async #get(): Promise<Tinypool> {
    if (this.#closed) throw new PoolError("pool.closed", "the tool pool is closed");
    if (!this.#pool) {
      if (!existsSync(this.workerPath)) {
        throw new PoolError("pool.worker_missing", `tool thread script not found at ${this.workerPath}; build first (npm run build)`);
      }
      this.#loading ??= import("tinypool").then((m) => m.Tinypool);
      const TinypoolClass = await this.#loading;
      if (this.#closed) throw new PoolError("pool.closed", "the tool pool is closed");
      this.#pool ??= new TinypoolClass({
        filename: this.workerPath,
        runtime: "worker_threads",
        minThreads: this.options.minThreads,
        maxThreads: this.options.maxThreads,
        idleTimeout: this.options.idleTimeoutMs,
      });
    }
    return this.#pool;
  }

  /** Run one task. Resolves with the thread's outcome; rejects only with a PoolError. */
  async run<K extends TaskKind>(task: TaskOf<K>, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<TaskOutcome<K>> {
    const pool = await this.#get();
    if (options.signal?.aborted) throw new PoolError("pool.aborted", `${task.kind} was interrupted`);
    const timeoutMs = options.timeoutMs ?? this.options.taskTimeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      return (await pool.run(task, { signal })) as TaskOutcome<K>;
    } catch (error) {
      if (timeout.aborted)
        throw new PoolError("pool.timeout", `${task.kind} took longer than ${Math.round(timeoutMs / 1000)} s and was stopped`, { cause: error });
      if (options.signal?.aborted) throw new PoolError("pool.aborted", `${task.kind} was interrupted`, { cause: error });
      if (this.#closed) throw new PoolError("pool.closed", "the tool pool was closed while the task ran", { cause: error });
      const message = error instanceof Error ? error.message : String(error);
      throw new PoolError("pool.task_failed", `${task.kind} failed in the tool thread: ${message}`, { cause: error });
    }
  }

  /** Stop the threads; later runs fail with pool.closed. Safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = null;
    await pool?.destroy();
  }
}

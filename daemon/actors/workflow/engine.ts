import { decodeValue, encodeValue } from "../codec.js";
import { ActorStopped, errorSummary } from "../errors.js";
import type { QueueMessage, WorkflowContext } from "../types.js";
import { locKey, type BranchStatus, type EntryKind, type EntryMetadata, type LocationSegment, type WorkflowEntry, type WorkflowHistory } from "./history.js";
import type { WorkflowHost } from "./host.js";

/**
 * Durable workflows. The workflow function is re-run from the start on every wake; each
 * `step`, `sleep`, `loop` and `queue.next` is an entry found by its location (the names on the
 * path to it, with loop iterations), and an entry already completed returns its recorded result
 * instead of running again. Results are on disk before the workflow goes on: a step's as one
 * line of the actor's step journal (step-journal.ts), everything else in the actor file.
 * A loop resumes at its recorded iteration; entries of iterations older than LOOP_KEEP are pruned
 * so an endless loop keeps a bounded history.
 */
const LOOP_KEEP = 20;

/** A join branch, as RivetKit spells it: `{ run: async (w) => value }`. */
type Branch = { run: (w: WorkflowContext) => Promise<unknown> };

class Runner {
  private readonly index = new Map<string, string>();
  /** Durable sleeps in progress (several at once inside a join or race), by entry id. */
  private readonly wakeAts = new Map<string, number>();
  constructor(
    private readonly host: WorkflowHost,
    private readonly h: WorkflowHistory,
    private readonly signal: AbortSignal,
  ) {
    for (const e of h.entries) this.index.set(locKey(e.location), e.id);
  }

  private nameIndex(name: string): number {
    let i = this.h.nameRegistry.indexOf(name);
    if (i < 0) i = this.h.nameRegistry.push(name) - 1;
    return i;
  }

  /** Stop at the next entry once the actor stops or, inside a race, once another branch won. */
  private checkAborted(signal: AbortSignal): void {
    if (signal.aborted) throw new ActorStopped();
  }

  /** The actor itself is stopping (not just a race branch being cancelled). */
  private get stopping(): boolean {
    return this.signal.aborted;
  }

  /** Find or create the entry at `loc`. */
  entry(loc: LocationSegment[], kind: EntryKind, name: string): { entry: WorkflowEntry; meta: EntryMetadata } {
    const key = locKey(loc);
    const id = this.index.get(key);
    if (id !== undefined) {
      const entry = this.h.entries.find((e) => e.id === id);
      const meta = this.h.entryMetadata[id];
      if (entry && meta) return { entry, meta };
    }
    const entry: WorkflowEntry = { id: `e${this.h.nextEntry++}`, location: loc, kind, name };
    const meta: EntryMetadata = { status: "pending", attempts: 0, error: null, createdAt: Date.now(), startedAt: null, completedAt: null };
    this.h.entries.push(entry);
    this.h.entryMetadata[entry.id] = meta;
    this.index.set(key, entry.id);
    return { entry, meta };
  }

  /** A context whose entries live under `prefix`; `signal` aborts it (the actor's, or a race branch's). */
  context(prefix: LocationSegment[], signal: AbortSignal = this.signal): WorkflowContext {
    const host = this.host;
    const used = new Map<string, number>();
    const locate = (name: string): LocationSegment[] => {
      const n = (used.get(name) ?? 0) + 1;
      used.set(name, n);
      return [...prefix, this.nameIndex(n === 1 ? name : `${name}#${n}`)];
    };
    const w = Object.create(host.context) as WorkflowContext;
    const complete = (meta: EntryMetadata, result: unknown) => {
      meta.status = "completed";
      meta.result = encodeValue(result);
      meta.completedAt = Date.now();
      meta.error = null;
    };
    Object.defineProperties(w, {
      step: {
        value: async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
          const { entry, meta } = this.entry(locate(name), "step", name);
          if (meta.status === "completed") return decodeValue(meta.result) as T;
          this.checkAborted(signal);
          meta.status = "running";
          meta.attempts++;
          meta.startedAt = Date.now();
          host.stepStarted();
          let result: T;
          try {
            result = await host.span("step", name, fn, { "workflow.entry_id": entry.id });
          } catch (error) {
            meta.status = "failed";
            meta.error = errorSummary(error).message;
            await host.recordStep(entry, meta);
            throw error;
          } finally {
            host.stepEnded();
          }
          complete(meta, result);
          await host.recordStep(entry, meta);
          return result;
        },
      },
      sleep: {
        value: (ms?: number): Promise<void> | void => {
          if (ms === undefined) return host.context.sleep();
          return (async () => {
            const name = "sleep";
            const { entry, meta } = this.entry(locate(name), "sleep", name);
            if (meta.status === "completed") return;
            if (meta.wakeAt === undefined) {
              meta.status = "running";
              meta.attempts++;
              meta.startedAt = Date.now();
              meta.wakeAt = Date.now() + Math.max(0, Number(ms) || 0);
              await host.persist();
            }
            const start = Date.now();
            this.sleeping(entry.id, meta.wakeAt);
            try {
              await delay(meta.wakeAt - Date.now(), signal);
            } finally {
              // An actor going to sleep keeps its alarm so it wakes for this; a cancelled race branch does not.
              if (!this.stopping) this.sleeping(entry.id, null);
            }
            complete(meta, null);
            host.trace("step", `sleep ${entry.id}`, start, Date.now(), { "workflow.entry_id": entry.id });
            await host.persist();
          })();
        },
      },
      loop: {
        value: async <T>(name: string, body: (w: WorkflowContext) => Promise<{ break: T } | { continue: true } | void>): Promise<T> => {
          const loc = locate(name);
          const { meta } = this.entry(loc, "loop", name);
          if (meta.status === "completed") return decodeValue(meta.result) as T;
          const nameIdx = loc[loc.length - 1] as number;
          if (meta.status === "pending") {
            meta.status = "running";
            meta.startedAt = Date.now();
            meta.iteration = 0;
          }
          meta.attempts++;
          for (;;) {
            this.checkAborted(signal);
            const iteration = meta.iteration ?? 0;
            const r = await body(this.context([...prefix, { loop: nameIdx, iteration }], signal));
            if (r && typeof r === "object" && "break" in r) {
              complete(meta, r.break);
              await host.persist();
              return r.break;
            }
            meta.iteration = iteration + 1;
            this.prune(loc, nameIdx, meta.iteration - LOOP_KEEP);
            await host.persist();
          }
        },
      },
      queue: {
        value: Object.assign(Object.create(host.context.queue), {
          next: async (options?: {
            name?: string | string[];
            names?: readonly string[];
            signal?: AbortSignal;
            timeout?: number;
          }): Promise<QueueMessage | undefined> => {
            const name = "queue.next";
            const { meta } = this.entry(locate(name), "message", name);
            if (meta.status === "completed") {
              const m = decodeValue(meta.result) as { id: number; name: string; body: unknown; createdAtMs: number } | null;
              if (!m) return undefined;
              return { ...m, complete: async (reply?: unknown) => host.completeMessage(m.id, reply) };
            }
            this.checkAborted(signal);
            meta.status = "running";
            meta.attempts++;
            meta.startedAt ??= Date.now();
            const m = await host.nextMessage({ ...options, signal });
            if (!m) {
              if (signal.aborted) throw new ActorStopped();
              complete(meta, null);
              await host.persist();
              return undefined;
            }
            // Record the message and remove it from the queue in the same write.
            complete(meta, { id: m.id, name: m.name, body: m.body, createdAtMs: m.createdAtMs });
            host.takeMessage(m.id);
            await host.persist();
            return { id: m.id, name: m.name, body: m.body, createdAtMs: m.createdAtMs, complete: async (reply?: unknown) => host.completeMessage(m.id, reply) };
          },
        }),
      },
      join: {
        value: <T extends Record<string, Branch>>(name: string, branches: T) => this.join(locate(name), name, branches, signal),
      },
      race: {
        value: <T>(name: string, branches: Array<{ name: string; run: (w: WorkflowContext) => Promise<T> }>) => this.race(locate(name), name, branches, signal),
      },
    });
    if (signal !== this.signal) Object.defineProperty(w, "abortSignal", { value: signal });
    return w;
  }

  /** The actor's alarm follows the earliest durable sleep in progress. */
  private sleeping(id: string, at: number | null): void {
    if (at === null) this.wakeAts.delete(id);
    else this.wakeAts.set(id, at);
    this.host.setWakeAt(this.wakeAts.size ? Math.min(...this.wakeAts.values()) : null);
  }

  /** Start (or resume) a join or race entry: its branches are recorded before any runs. */
  private async openBranches(loc: LocationSegment[], kind: "join" | "race", name: string, names: string[]) {
    const { entry, meta } = this.entry(loc, kind, name);
    if (meta.status === "completed") return { entry, meta, done: true };
    if (!meta.branches) {
      meta.branches = Object.fromEntries(names.map((n): [string, BranchStatus] => [n, { status: "pending" }]));
      if (kind === "race") meta.winner = null;
      meta.startedAt = Date.now();
    }
    // A branch the recorded entry lacks (the code changed): it starts now.
    for (const n of names) meta.branches[n] ??= { status: "pending" };
    meta.status = "running";
    meta.attempts++;
    await this.host.recordStep(entry, meta);
    return { entry, meta, done: false };
  }

  /**
   * Run every branch at once and wait for all of them. A completed branch is recorded as it
   * finishes, so a replay returns its output without running it again; a failed one runs
   * again on the next replay. Fails (with every branch's error) when any branch failed.
   */
  private async join<T extends Record<string, Branch>>(
    loc: LocationSegment[],
    name: string,
    branches: T,
    signal: AbortSignal,
  ): Promise<{ [K in keyof T]: Awaited<ReturnType<T[K]["run"]>> }> {
    const names = Object.keys(branches);
    const { entry, meta, done } = await this.openBranches(loc, "join", name, names);
    if (done) return decodeValue(meta.result) as never;
    const statuses = meta.branches!;
    const results: Record<string, unknown> = {};
    const errors: Record<string, unknown> = {};
    let stopped = false;
    const settled = await Promise.allSettled(
      names.map(async (b) => {
        const st = statuses[b]!;
        if (st.status === "completed") {
          results[b] = decodeValue(st.output);
          return;
        }
        if (signal.aborted) {
          stopped = true;
          return;
        }
        st.status = "running";
        delete st.error;
        try {
          const out = await branches[b]!.run(this.context([...loc, this.nameIndex(b)], signal));
          st.status = "completed";
          st.output = encodeValue(out);
          results[b] = out;
        } catch (error) {
          if (this.stopping || signal.aborted || error instanceof ActorStopped) {
            stopped = true;
            return;
          }
          st.status = "failed";
          st.error = errorSummary(error).message;
          errors[b] = error;
        }
        await this.host.recordStep(entry, meta);
      }),
    );
    if (stopped) throw new ActorStopped();
    rethrowRejected(settled);
    if (Object.keys(errors).length) {
      meta.status = "failed";
      meta.error = Object.entries(errors)
        .map(([b, e]) => `${b}: ${errorSummary(e).message}`)
        .join("; ");
      await this.host.recordStep(entry, meta);
      throw Object.assign(new Error(`join ${name} failed: ${meta.error}`), { name: "JoinError", errors });
    }
    const ordered = Object.fromEntries(names.map((b) => [b, results[b]]));
    meta.status = "completed";
    meta.result = encodeValue(ordered);
    meta.completedAt = Date.now();
    meta.error = null;
    await this.host.recordStep(entry, meta);
    return ordered as never;
  }

  /**
   * Run every branch at once; the first to complete wins and the others are cancelled (their
   * signal aborts, so their next entry stops them) and their entries dropped. The winner is
   * recorded the moment it wins: a replay returns it without running any branch. Fails when
   * every branch failed.
   */
  private async race<T>(
    loc: LocationSegment[],
    name: string,
    branches: Array<{ name: string; run: (w: WorkflowContext) => Promise<T> }>,
    signal: AbortSignal,
  ): Promise<{ winner: string; value: T }> {
    const names = branches.map((b) => b.name);
    const { entry, meta, done } = await this.openBranches(loc, "race", name, names);
    if (done) return decodeValue(meta.result) as { winner: string; value: T };
    const statuses = meta.branches!;
    if (!meta.winner) {
      const cancel = new AbortController();
      const branchSignal = AbortSignal.any([signal, cancel.signal]);
      const errors: Record<string, unknown> = {};
      let stopped = false;
      const settled = await Promise.allSettled(
        branches.map(async (b) => {
          const st = statuses[b.name]!;
          if (cancel.signal.aborted) {
            st.status = "cancelled";
            return;
          }
          st.status = "running";
          delete st.error;
          try {
            const out = await b.run(this.context([...loc, this.nameIndex(b.name)], branchSignal));
            if (meta.winner || this.stopping) {
              // Finished after another branch won: kept for the inspector, not the result.
              st.status = "completed";
              st.output = encodeValue(out);
              return;
            }
            st.status = "completed";
            st.output = encodeValue(out);
            meta.winner = b.name;
            await this.host.recordStep(entry, meta);
            cancel.abort();
          } catch (error) {
            if (this.stopping || signal.aborted) {
              stopped = true;
            } else if (cancel.signal.aborted) {
              st.status = "cancelled";
            } else {
              st.status = "failed";
              st.error = errorSummary(error).message;
              errors[b.name] = error;
              await this.host.recordStep(entry, meta);
            }
          }
        }),
      );
      // The winner (if any) is recorded: a replay finishes the race without running a branch.
      if (stopped || this.stopping) throw new ActorStopped();
      rethrowRejected(settled);
      if (!meta.winner) {
        meta.status = "failed";
        meta.error = Object.entries(errors)
          .map(([b, e]) => `${b}: ${errorSummary(e).message}`)
          .join("; ");
        await this.host.recordStep(entry, meta);
        throw Object.assign(new Error(`race ${name}: all branches failed: ${meta.error}`), { name: "RaceError", errors });
      }
    }
    const winner = meta.winner;
    for (const b of names) if (b !== winner && statuses[b]?.status !== "completed") statuses[b] = { status: "cancelled" };
    for (const b of names) if (b !== winner) this.dropUnder([...loc, this.nameIndex(b)]);
    const value = decodeValue(statuses[winner]?.output) as T;
    meta.status = "completed";
    meta.result = encodeValue({ winner, value });
    meta.completedAt = Date.now();
    meta.error = null;
    // A full write: the losers' entries are gone from the history.
    await this.host.persist();
    return { winner, value };
  }

  /** Remove every entry under `prefix` (a race's losing branch). */
  private dropUnder(prefix: LocationSegment[]): void {
    const p = `${locKey(prefix)}/`;
    const drop = new Set(this.h.entries.filter((e) => locKey(e.location).startsWith(p)).map((e) => e.id));
    if (!drop.size) return;
    this.h.entries = this.h.entries.filter((e) => !drop.has(e.id));
    for (const id of drop) delete this.h.entryMetadata[id];
    for (const [k, id] of this.index) if (drop.has(id)) this.index.delete(k);
  }

  private prune(loc: LocationSegment[], nameIdx: number, below: number): void {
    if (below <= 0) return;
    const prefix = loc.slice(0, -1);
    const p = locKey(prefix);
    const drop = new Set<string>();
    for (const e of this.h.entries) {
      if (e.location.length <= prefix.length) continue;
      if (locKey(e.location.slice(0, prefix.length)) !== p) continue;
      const seg = e.location[prefix.length];
      if (typeof seg === "object" && seg.loop === nameIdx && seg.iteration < below) drop.add(e.id);
    }
    if (!drop.size) return;
    this.h.entries = this.h.entries.filter((e) => !drop.has(e.id));
    for (const id of drop) {
      delete this.h.entryMetadata[id];
    }
    for (const [k, id] of this.index) if (drop.has(id)) this.index.delete(k);
  }
}

/** A write that failed inside a branch fails the whole entry. */
function rethrowRejected(settled: PromiseSettledResult<unknown>[]): void {
  for (const r of settled) if (r.status === "rejected") throw r.reason;
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new ActorStopped());
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const t = setTimeout(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.min(ms, 2 ** 31 - 1),
    );
    const onAbort = () => {
      clearTimeout(t);
      reject(new ActorStopped());
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Run (or resume) an instance's workflow. Rejections other than a stop are crashes (the caller decides). */
export async function runWorkflow(host: WorkflowHost, signal: AbortSignal): Promise<"completed" | "stopped"> {
  const fn = host.workflow;
  if (!fn) return "completed";
  const h = host.history();
  if (h.status === "completed") return "completed";
  h.status = "running";
  const runner = new Runner(host, h, signal);
  try {
    const out = await fn(runner.context([]));
    if (signal.aborted) return "stopped";
    h.status = "completed";
    h.output = encodeValue(out);
    await host.persist();
    return "completed";
  } catch (error) {
    if (signal.aborted || error instanceof ActorStopped) return "stopped";
    h.status = "failed";
    await host.persist().catch(() => undefined);
    throw error;
  }
}

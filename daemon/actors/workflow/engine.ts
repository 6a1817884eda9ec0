import { decodeValue, encodeValue } from "../codec.js";
import { ActorStopped, errorSummary } from "../errors.js";
import type { QueueMessage, WorkflowContext } from "../types.js";
import { locKey, type EntryKind, type EntryMetadata, type LocationSegment, type WorkflowEntry, type WorkflowHistory } from "./history.js";
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

class Runner {
  private readonly index = new Map<string, string>();
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

  private checkAborted(): void {
    if (this.signal.aborted) throw new ActorStopped();
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

  context(prefix: LocationSegment[]): WorkflowContext {
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
          this.checkAborted();
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
            host.setWakeAt(meta.wakeAt);
            await delay(meta.wakeAt - Date.now(), this.signal);
            host.setWakeAt(null);
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
            this.checkAborted();
            const iteration = meta.iteration ?? 0;
            const r = await body(this.context([...prefix, { loop: nameIdx, iteration }]));
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
            this.checkAborted();
            meta.status = "running";
            meta.attempts++;
            meta.startedAt ??= Date.now();
            const m = await host.nextMessage({ ...options, signal: this.signal });
            if (!m) {
              if (this.signal.aborted) throw new ActorStopped();
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
    });
    return w;
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

import { AgentError } from "../../../shared/errors.js";
import { decodeValue, encodeValue } from "../codec.js";
import { ActorStopped, errorSummary } from "../errors.js";
import type { ActorInstance } from "../instance/instance.js";
import type { QueueMessage, WorkflowContext } from "../types.js";

/**
 * Durable workflows. The workflow function is re-run from the start on every wake; each
 * `step`, `sleep`, `loop` and `queue.next` is an entry found by its location (the names on the
 * path to it, with loop iterations), and an entry already completed returns its recorded result
 * instead of running again. Results are on disk before the workflow goes on: a step's as one
 * line of the actor's step journal (step-journal.ts), everything else in the actor file.
 * A loop resumes at its recorded iteration; entries of iterations older than LOOP_KEEP are pruned
 * so an endless loop keeps a bounded history.
 */
export type LocationSegment = number | { loop: number; iteration: number };
export type EntryKind = "step" | "sleep" | "loop" | "message";

export interface WorkflowEntry {
  id: string;
  location: LocationSegment[];
  kind: EntryKind;
  name: string;
}

export interface EntryMetadata {
  status: "pending" | "running" | "completed" | "failed";
  attempts: number;
  error: string | null;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  /** Encoded result (codec.ts). */
  result?: string;
  wakeAt?: number;
  iteration?: number;
}

export interface WorkflowHistory {
  nameRegistry: string[];
  entries: WorkflowEntry[];
  entryMetadata: Record<string, EntryMetadata>;
  status: "running" | "completed" | "failed";
  output?: string;
  nextEntry: number;
}

const LOOP_KEEP = 20;

export function emptyHistory(): WorkflowHistory {
  return { nameRegistry: [], entries: [], entryMetadata: {}, status: "running", nextEntry: 1 };
}

const locKey = (loc: LocationSegment[]) => loc.map((s) => (typeof s === "number" ? String(s) : `${s.loop}#${s.iteration}`)).join("/");

/** The history as the inspector shows it (results decoded). */
export function publicHistory(h: WorkflowHistory | null): unknown {
  if (!h) return { nameRegistry: [], entries: [], entryMetadata: {}, status: "running" };
  const entryMetadata: Record<string, unknown> = {};
  for (const [id, m] of Object.entries(h.entryMetadata)) {
    const { result, ...rest } = m;
    entryMetadata[id] = { ...rest, ...(result !== undefined ? { output: decodeValue(result) } : {}) };
  }
  return { nameRegistry: h.nameRegistry, entries: h.entries, entryMetadata, status: h.status, ...(h.output !== undefined ? { output: decodeValue(h.output) } : {}) };
}

/** Discard the results of `entryId` and everything recorded after it (all without an id). */
export function discardFrom(h: WorkflowHistory, entryId?: string): void {
  if (entryId === undefined) {
    Object.assign(h, emptyHistory());
    return;
  }
  const at = h.entries.findIndex((e) => e.id === entryId);
  if (at < 0) throw new AgentError("workflow.entry_not_found", `no workflow entry ${entryId}`, { entryId });
  const removed = h.entries.splice(at);
  for (const e of removed) {
    delete h.entryMetadata[e.id];
    // Loops around a removed entry must run that iteration again.
    e.location.forEach((seg, i) => {
      if (typeof seg === "number") return;
      const loopKey = locKey([...e.location.slice(0, i), seg.loop]);
      const loop = h.entries.find((x) => x.kind === "loop" && locKey(x.location) === loopKey);
      const meta = loop && h.entryMetadata[loop.id];
      if (meta) {
        meta.status = "running";
        delete meta.result;
        meta.iteration = Math.min(meta.iteration ?? 0, seg.iteration);
      }
    });
  }
  h.status = "running";
  delete h.output;
}

class Runner {
  private readonly index = new Map<string, string>();
  constructor(
    private readonly inst: ActorInstance,
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
    const runner = this;
    const inst = this.inst;
    const used = new Map<string, number>();
    const locate = (name: string): LocationSegment[] => {
      const n = (used.get(name) ?? 0) + 1;
      used.set(name, n);
      return [...prefix, runner.nameIndex(n === 1 ? name : `${name}#${n}`)];
    };
    const w = Object.create(inst.c) as WorkflowContext;
    const complete = (meta: EntryMetadata, result: unknown) => {
      meta.status = "completed";
      meta.result = encodeValue(result);
      meta.completedAt = Date.now();
      meta.error = null;
    };
    Object.defineProperties(w, {
      step: {
        value: async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
          const { entry, meta } = runner.entry(locate(name), "step", name);
          if (meta.status === "completed") return decodeValue(meta.result) as T;
          runner.checkAborted();
          meta.status = "running";
          meta.attempts++;
          meta.startedAt = Date.now();
          inst.activeSteps++;
          let result: T;
          try {
            result = await inst.span("step", name, fn, { "workflow.entry_id": entry.id });
          } catch (error) {
            meta.status = "failed";
            meta.error = errorSummary(error).message;
            await inst.journalStep(entry, meta);
            throw error;
          } finally {
            inst.activeSteps--;
            inst.settled();
          }
          complete(meta, result);
          await inst.journalStep(entry, meta);
          return result;
        },
      },
      sleep: {
        value: (ms?: number): Promise<void> | void => {
          if (ms === undefined) return inst.c.sleep();
          return (async () => {
            const name = "sleep";
            const { entry, meta } = runner.entry(locate(name), "sleep", name);
            if (meta.status === "completed") return;
            if (meta.wakeAt === undefined) {
              meta.status = "running";
              meta.attempts++;
              meta.startedAt = Date.now();
              meta.wakeAt = Date.now() + Math.max(0, Number(ms) || 0);
              await inst.persist(true);
            }
            const start = Date.now();
            inst.workflowWakeAt = meta.wakeAt;
            inst.hostAlarm();
            await delay(meta.wakeAt - Date.now(), runner.signal);
            inst.workflowWakeAt = null;
            inst.hostAlarm();
            complete(meta, null);
            inst.traces.record("step", `sleep ${entry.id}`, start, Date.now(), undefined, { "workflow.entry_id": entry.id });
            await inst.persist(true);
          })();
        },
      },
      loop: {
        value: async <T>(name: string, body: (w: WorkflowContext) => Promise<{ break: T } | { continue: true } | void>): Promise<T> => {
          const loc = locate(name);
          const { meta } = runner.entry(loc, "loop", name);
          if (meta.status === "completed") return decodeValue(meta.result) as T;
          const nameIdx = loc[loc.length - 1] as number;
          if (meta.status === "pending") {
            meta.status = "running";
            meta.startedAt = Date.now();
            meta.iteration = 0;
          }
          meta.attempts++;
          for (;;) {
            runner.checkAborted();
            const iteration = meta.iteration ?? 0;
            const r = await body(runner.context([...prefix, { loop: nameIdx, iteration }]));
            if (r && typeof r === "object" && "break" in r) {
              complete(meta, r.break);
              await inst.persist(true);
              return r.break;
            }
            meta.iteration = iteration + 1;
            runner.prune(loc, nameIdx, meta.iteration - LOOP_KEEP);
            await inst.persist(true);
          }
        },
      },
      queue: {
        value: Object.assign(Object.create(inst.c.queue), {
          next: async (options?: { name?: string | string[]; names?: readonly string[]; signal?: AbortSignal; timeout?: number }): Promise<QueueMessage | undefined> => {
            const name = "queue.next";
            const { meta } = runner.entry(locate(name), "message", name);
            if (meta.status === "completed") {
              const m = decodeValue(meta.result) as { id: number; name: string; body: unknown; createdAtMs: number } | null;
              if (!m) return undefined;
              return { ...m, complete: async (reply?: unknown) => inst.completeRecorded(m.id, reply) };
            }
            runner.checkAborted();
            meta.status = "running";
            meta.attempts++;
            meta.startedAt ??= Date.now();
            const m = await inst.queueNext({ ...options, signal: runner.signal });
            if (!m) {
              if (runner.signal.aborted) throw new ActorStopped();
              complete(meta, null);
              await inst.persist(true);
              return undefined;
            }
            // Record the message and remove it from the queue in the same write.
            complete(meta, { id: m.id, name: m.name, body: m.body, createdAtMs: m.createdAtMs });
            await inst.removeMessage(m.id, false);
            await inst.persist(true);
            return { id: m.id, name: m.name, body: m.body, createdAtMs: m.createdAtMs, complete: async (reply?: unknown) => inst.completeRecorded(m.id, reply) };
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
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, Math.min(ms, 2 ** 31 - 1));
    const onAbort = () => {
      clearTimeout(t);
      reject(new ActorStopped());
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Run (or resume) an instance's workflow. Rejections other than a stop are crashes (the caller decides). */
export async function runWorkflow(inst: ActorInstance, signal: AbortSignal): Promise<"completed" | "stopped"> {
  const fn = inst.def.workflow;
  if (!fn) return "completed";
  const h = (inst.doc.data.workflow ??= emptyHistory());
  if (h.status === "completed") return "completed";
  h.status = "running";
  const runner = new Runner(inst, h, signal);
  try {
    const out = await fn(runner.context([]));
    if (signal.aborted) return "stopped";
    h.status = "completed";
    h.output = encodeValue(out);
    await inst.persist(true);
    return "completed";
  } catch (error) {
    if (signal.aborted || error instanceof ActorStopped) return "stopped";
    h.status = "failed";
    await inst.persist(true).catch(() => undefined);
    throw error;
  }
}

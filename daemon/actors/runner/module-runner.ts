/**
 * The daemon's side of one runner thread (runner/runner-thread.ts): the thread that runs one user
 * actor module. It sends calls, answers the worker's requests for what the daemon keeps (KV,
 * queue, schedule, saves, the workflow engine), and supervises the thread: a heartbeat watchdog
 * for endless loops, a heap limit, and on any death (process.exit, out of memory, the watchdog)
 * the actor whose code caused it crashes under its crash policy, the other actors of the worker
 * are put to sleep to be woken again, calls in flight fail with `actor.runner_failed`, and the
 * worker is started again with backoff.
 */
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { AgentError } from "../../../shared/errors.js";
import type { Logger } from "../../log/logger.js";
import { ActorStopped } from "../errors.js";
import type { ActorInstance } from "../instance/instance.js";
import type { QueueMessage, RawWebSocket } from "../types.js";
import { threadScript } from "../../thread-script.js";
import { THREAD_YOUNG_GENERATION_MB } from "../../heap-policy.js";
import { Outbox } from "./outbox.js";
import {
  type CallMessage,
  type CallOp,
  type CallOps,
  type EventMessage,
  type EventOp,
  type EventOps,
  type ExportShape,
  type FromWorker,
  type RpcMessage,
  type RpcOp,
  type RpcOps,
  SHARED,
  type ToWorker,
  fromWire,
  toWireError,
  type WireHandle,
  type WireMessage,
} from "./protocol.js";

export interface RunnerLimits {
  /** A worker whose event loop has not turned for this long is stopped (ms). */
  watchdogMs: number;
  /** The worker's heap limit (MB). */
  maxMemoryMb: number;
  /** Restart backoff: first delay, doubling to the cap (ms). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How long an import may take (ms). */
  loadTimeoutMs: number;
}

export const RUNNER_DEFAULTS: RunnerLimits = {
  watchdogMs: 10_000,
  maxMemoryMb: 512,
  backoffBaseMs: 100,
  backoffMaxMs: 5_000,
  loadTimeoutMs: 10_000,
};

/** What a runner needs from the runtime when its worker dies or its code misbehaves. */
export interface RunnerHost {
  crashed(actorId: string, error: unknown, where: string): void;
  /** The actor's runner went away under it (it did nothing wrong): stop it, keep it asleep until `rewake`. */
  runnerLost(actorId: string): Promise<void>;
  rewake(actorId: string): void;
  log: Logger;
  /** Connections (the gateway's): events the actor sends to its connections and raw sockets. */
  connections?: RunnerConnections;
}

export interface RunnerConnections {
  send(actorId: string, connId: string, event: string, args: unknown[]): void;
  close(actorId: string, connId: string, reason?: string): void;
}

const threadPath = () => threadScript(import.meta.url, "runner-thread.js");

interface Pending {
  actorId: string;
  op: CallOp;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

/** One attached actor: its instance and what crosses for it (queue messages, workflow handles). */
interface Link {
  inst: ActorInstance;
  slot: number;
  messages: Map<number, QueueMessage>;
  /** Workflow contexts of the engine (and their branches), reached by their methods' names. */
  handles: Map<number, Record<string, unknown>>;
  /** `queue.next` waits with a signal in the worker, by wait id. */
  waits: Map<number, AbortController>;
}

let handleSeq = 0;

/**
 * The daemon's side of the memory limit (the worker checks its own allocations, memory-guard.ts):
 * a worker stuck in a synchronous loop cannot check memory that came through an allocator the
 * guard does not see (TextEncoder, a file read, zlib). So every 100 ms the daemon reads
 * its own RSS, and a runner whose heartbeat has stopped while the process grew by more than the
 * runner's whole limit is stopped as out of memory (no other code of that runner can be running).
 */
const STALL_SAMPLE_MS = 100;
const stallWatched = new Set<ModuleRunner>();
let stallTimer: NodeJS.Timeout | null = null;

function watchStalls(runner: ModuleRunner, on: boolean): void {
  if (on) stallWatched.add(runner);
  else stallWatched.delete(runner);
  if (stallWatched.size > 0 && !stallTimer) {
    stallTimer = setInterval(() => {
      const rss = process.memoryUsage.rss();
      for (const r of stallWatched) r.sampleMemory(rss);
    }, STALL_SAMPLE_MS);
    stallTimer.unref();
  } else if (stallWatched.size === 0 && stallTimer) {
    clearInterval(stallTimer);
    stallTimer = null;
  }
}

export class ModuleRunner {
  private worker: Worker | null = null;
  /** Messages to the current worker, batched per turn of the event loop (outbox.ts). */
  private outbox: Outbox<ToWorker> | null = null;
  private shared = new Int32Array(new SharedArrayBuffer(SHARED.length * 4));
  private ready: Promise<void> | null = null;
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  /** Raw WebSockets whose onWebSocket runs in the worker, by id. */
  private readonly sockets = new Map<string, RawWebSocket>();
  private socketSeq = 0;
  /** Response bodies streaming out of onRequest, by stream id. */
  private readonly streams = new Map<number, ReadableStreamDefaultController<Uint8Array>>();
  /**
   * Chunks of a stream whose answer came in the same batch, before the body was taken
   * (`body()` runs a few promise steps after the answer): kept until it is, or cancelled at
   * the end of the turn.
   */
  private readonly early = new Map<number, FromWorker[]>();
  readonly links = new Map<string, Link>();
  private slotSeq = 0;
  private readonly slots = new Map<number, string>();
  private watchdog: NodeJS.Timeout | null = null;
  private lastTick = -1;
  private lastTickAt = 0;
  /** Why the daemon is stopping the worker (the watchdog), or "retire" for a planned stop. */
  private stopping: { where: string; message: string } | "retire" | null = null;
  /** The heartbeat last seen by the memory sampler, and the process's RSS when it stopped moving. */
  private sampledTick = -1;
  private stalledSamples = 0;
  private rssAtStall = 0;
  private restarts = 0;
  private failedRestarts = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private upSince = 0;
  retired = false;
  exports: ExportShape[] = [];

  constructor(
    readonly file: string,
    private readonly url: string,
    private readonly host: RunnerHost,
    private readonly limits: RunnerLimits = RUNNER_DEFAULTS,
  ) {}

  /** Start the worker and import the module; resolves with its actor exports. */
  async load(): Promise<ExportShape[]> {
    this.ready = this.spawn();
    await this.ready;
    return this.exports;
  }

  private spawn(): Promise<void> {
    const path = threadPath();
    if (!existsSync(path)) return Promise.reject(new Error(`the actor runner is not built (${path}); run npm run build`));
    this.shared = new Int32Array(new SharedArrayBuffer(SHARED.length * 4));
    const worker = new Worker(path, {
      workerData: { shared: this.shared.buffer, maxMemoryMb: this.limits.maxMemoryMb },
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxMemoryMb, maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
      stdout: false,
      stderr: false,
    });
    this.worker = worker;
    this.outbox = new Outbox<ToWorker>(worker, (m, error) => this.undeliverable(worker, m, error));
    this.stopping = null;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settle(new Error(`${this.file.split("/").pop()} did not finish loading within ${this.limits.loadTimeoutMs} ms`));
        this.stopping = "retire";
        void worker.terminate();
      }, this.limits.loadTimeoutMs);
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      let loaded = false;
      const receive = (m: FromWorker) => {
        if (m.t === "loaded") {
          loaded = true;
          this.exports = m.exports;
          this.upSince = Date.now();
          this.startWatchdog();
          settle();
        } else if (m.t === "loadFailed") {
          this.stopping = "retire";
          void worker.terminate();
          settle(fromWire(m.e));
        } else this.onMessage(m);
      };
      // The worker batches its messages: an array is several, in order.
      worker.on("message", (m: FromWorker | FromWorker[]) => {
        if (Array.isArray(m)) for (const one of m) receive(one);
        else receive(m);
      });
      let failure: Error | null = null;
      worker.on("error", (error) => {
        failure = error;
      });
      worker.on("exit", (code) => {
        settle(failure ?? new Error(`the module's runner exited with code ${code} while loading`));
        // Dying while loading is the load's failure (its caller decides); after it, a death.
        if (this.worker !== worker) return;
        if (loaded) this.died(code, failure);
        else {
          this.worker = null;
          this.stopWatchdog();
        }
      });
      worker.postMessage({ t: "load", url: this.url } satisfies ToWorker);
    });
  }

  private startWatchdog(): void {
    this.stopWatchdog();
    this.lastTick = Atomics.load(this.shared, SHARED.tick);
    this.lastTickAt = Date.now();
    const every = Math.max(50, Math.floor(this.limits.watchdogMs / 4));
    this.watchdog = setInterval(() => {
      const tick = Atomics.load(this.shared, SHARED.tick);
      const now = Date.now();
      if (tick !== this.lastTick) {
        this.lastTick = tick;
        this.lastTickAt = now;
        return;
      }
      if (now - this.lastTickAt < this.limits.watchdogMs || this.stopping) return;
      this.stopping = {
        where: "watchdog",
        message: `the actor's code did not return to the event loop for ${this.limits.watchdogMs} ms (an endless synchronous loop?); its runner was stopped`,
      };
      void this.worker?.terminate();
    }, every);
    this.watchdog.unref();
    this.sampledTick = -1;
    watchStalls(this, true);
  }

  private stopWatchdog(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    watchStalls(this, false);
  }

  /** See `watchStalls`: `rss` is the process's, sampled every 100 ms. */
  sampleMemory(rss: number): void {
    const tick = Atomics.load(this.shared, SHARED.tick);
    if (tick !== this.sampledTick) {
      this.sampledTick = tick;
      this.stalledSamples = 0;
      return;
    }
    // Two samples without a heartbeat (which comes every 100 ms): the worker is in a synchronous stretch.
    if (++this.stalledSamples === 2) this.rssAtStall = rss;
    if (this.stalledSamples < 2 || this.stopping) return;
    const grown = rss - this.rssAtStall;
    if (grown <= this.limits.maxMemoryMb * 1024 * 1024) return;
    this.stopping = {
      where: "out of memory",
      message: `the actor's runner went over its memory limit (the daemon grew by ${Math.round(grown / 1048576)} MB while the actor's code ran without returning; the limit is ${this.limits.maxMemoryMb} MB)`,
    };
    void this.worker?.terminate();
  }

  // ---------- calls ----------

  private async up(): Promise<Worker> {
    if (this.retired && !this.worker) throw this.unavailable("the module was replaced or removed");
    if (this.ready) await this.ready;
    if (!this.worker) throw this.unavailable("its runner is restarting");
    return this.worker;
  }

  private unavailable(why: string): AgentError {
    return new AgentError("actor.runner_failed", `the actor's runner is not available: ${why}`, { file: this.file });
  }

  /** Send a call about an actor; resolves with the worker's answer after applying the state it carried. */
  call<K extends CallOp>(actorId: string, op: K, p: CallOps[K]["p"], transfer?: ArrayBuffer[]): Promise<CallOps[K]["r"]> {
    const w = this.worker;
    // Being stopped (the watchdog, a retired module): this worker takes nothing more.
    if (w !== null && this.stopping !== null) return Promise.reject(this.unavailable("its runner is being stopped"));
    if (w === null) return this.up().then(() => this.call(actorId, op, p, transfer));
    const id = ++this.seq;
    const outbox = this.outbox!;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { actorId, op, resolve: resolve as (v: unknown) => void, reject });
      // `op` and `p` agree by the signature; TypeScript cannot carry that pairing into the union by itself.
      outbox.send({ t: "call", id, a: actorId, op, p } as CallMessage, transfer);
    });
  }

  /** A batched message that cannot be cloned: its call fails, or the worker's request does. */
  private undeliverable(worker: Worker, m: ToWorker, error: unknown): void {
    if (m.t === "call") {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.reject(error);
    } else if (m.t === "rpcDone" && this.worker === worker) worker.postMessage({ t: "rpcDone", id: m.id, ok: false, e: toWireError(error) } satisfies ToWorker);
  }

  /** Attach an instance before its first hook: the worker creates its context. */
  async attach(inst: ActorInstance): Promise<void> {
    await this.up();
    let slot = ++this.slotSeq;
    if (slot > 0x7fffffff) slot = this.slotSeq = 1;
    this.links.set(inst.id, { inst, slot, messages: new Map(), handles: new Map(), waits: new Map() });
    this.slots.set(slot, inst.id);
    await this.call(inst.id, "attach", { name: inst.record.name, key: inst.keyParts, slot, state: inst.doc.data.state });
  }

  /** The instance stopped: the worker forgets the actor. */
  detach(inst: ActorInstance): void {
    const link = this.links.get(inst.id);
    if (!link || link.inst !== inst) return;
    this.links.delete(inst.id);
    this.slots.delete(link.slot);
    if (this.worker) this.outbox?.send({ t: "detach", a: inst.id });
    if (this.retired && this.links.size === 0) void this.terminate();
  }

  /** Whether the actor's code can still run here (its worker is up and holds it): hooks at a stop need it. */
  canRun(actorId: string): boolean {
    return this.worker !== null && this.stopping === null && this.links.has(actorId);
  }

  /** The actor's connection states as its code left them (`c.conn.state`), by connection id. */
  connStates(actorId: string): Promise<Record<string, unknown>> {
    // The worker answers `states` with a record by connection id (worker.ts `connOp`).
    return this.call(actorId, "conn", { kind: "states" }) as Promise<Record<string, unknown>>;
  }

  /** The daemon replaced the actor's state (inspector): the worker takes it. */
  pushState(actorId: string, text: string): void {
    if (this.worker) this.outbox?.send({ t: "state", a: actorId, text });
  }

  /** A workflow context of the daemon's engine, as a handle the worker calls through. */
  handle(actorId: string, context: object): WireHandle {
    const w = context as Record<string, unknown>;
    const link = this.links.get(actorId);
    const id = ++handleSeq;
    link?.handles.set(id, w);
    const m = Object.getOwnPropertyNames(w).filter((k) => typeof w[k] === "function");
    const queue = Object.getOwnPropertyNames(w).includes("queue") ? (w.queue as Record<string, unknown>) : null;
    const q = queue ? Object.getOwnPropertyNames(queue).filter((k) => typeof queue[k] === "function") : [];
    return { $h: id, m, q };
  }

  dropHandle(actorId: string, h: number): void {
    this.links.get(actorId)?.handles.delete(h);
  }

  private apply(actorId: string, s: string | undefined): void {
    if (s === undefined) return;
    this.links.get(actorId)?.inst.applyRemoteState(s);
  }

  /** Hand a raw WebSocket to the actor's onWebSocket in the worker: frames go both ways as messages. */
  async openSocket(actorId: string, ws: RawWebSocket, request: Request, conn?: string): Promise<void> {
    const id = `ws${++this.socketSeq}`;
    this.sockets.set(id, ws);
    // A message or close still being handled (an async handler) is a call in flight: the actor does not sleep under it.
    const post = (p: CallOps["conn"]["p"]) => {
      const inst = this.links.get(actorId)?.inst;
      const seq = inst?.enter("websocket", { event: p.kind === "wsMessage" ? "message" : "close" });
      return this.call(actorId, "conn", p)
        .catch(() => undefined)
        .finally(() => {
          if (seq !== undefined) inst!.leave(seq);
        });
    };
    // The gateway's socket stops reading while too many messages wait for the worker (gateway/bounded-socket.ts).
    const flow = ws as { hold?(bytes: number): void; release?(bytes: number): void };
    ws.on("message", (data, isBinary) => {
      flow.hold?.(data.length);
      void post({ kind: "wsMessage", ws: id, data: isBinary ? new Uint8Array(data) : data.toString("utf8") }).finally(() => flow.release?.(data.length));
    });
    ws.on("close", (code, reason) => {
      this.sockets.delete(id);
      void post({ kind: "wsClosed", ws: id, code, reason: reason.toString("utf8") });
    });
    try {
      await this.call(actorId, "conn", {
        kind: "wsOpen",
        ws: id,
        request: { url: request.url, headers: [...request.headers.entries()] },
        ...(conn !== undefined ? { conn } : {}),
      });
    } catch (error) {
      this.sockets.delete(id);
      throw error;
    }
  }

  /** The body of a response the worker streams. */
  body(sid: number): ReadableStream<Uint8Array> {
    const worker = this.worker;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.streams.set(sid, controller);
        const early = this.early.get(sid);
        this.early.delete(sid);
        if (early) for (const m of early) this.onMessage(m);
      },
      cancel: () => {
        this.streams.delete(sid);
        if (this.worker === worker && worker) this.outbox?.send({ t: "cancel", sid });
      },
    });
  }

  private onMessage(m: FromWorker): void {
    switch (m.t) {
      case "chunk": {
        const c = this.streams.get(m.sid);
        if (!c) {
          this.early.get(m.sid)?.push(m);
          return;
        }
        try {
          if (m.d) c.enqueue(m.d);
          else {
            this.streams.delete(m.sid);
            if (m.e) c.error(fromWire(m.e));
            else c.close();
          }
        } catch {}
        return;
      }
      case "done": {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        this.apply(p.actorId, m.s);
        if (m.ok && p.op === "request") this.announced(m.v);
        if (m.ok) p.resolve(m.v);
        else p.reject(fromWire(m.e!));
        return;
      }
      case "rpc": {
        this.apply(m.a, m.s);
        const link = this.links.get(m.a);
        const worker = this.worker;
        const outbox = this.outbox;
        const reply = (ok: boolean, v?: unknown, e?: unknown) => {
          if (this.worker !== worker || !outbox) return;
          outbox.send(ok ? { t: "rpcDone", id: m.id, ok, v } : { t: "rpcDone", id: m.id, ok, e: toWireError(e) });
        };
        if (!link) {
          reply(false, undefined, new ActorStopped());
          return;
        }
        this.serve(link, m).then(
          (v) => reply(true, v),
          (e) => reply(false, undefined, e),
        );
        return;
      }
      case "ev": {
        this.apply(m.a, m.s);
        const link = this.links.get(m.a);
        if (link) this.event(link, m);
        return;
      }
      case "crash":
        if (this.links.has(m.a)) this.host.crashed(m.a, fromWire(m.e), m.where);
        return;
      case "uncaught": {
        const ids = [...this.links.keys()];
        this.host.log.error(`actor module code threw (${m.where}) outside any actor call`, { file: this.file, actors: ids, error: fromWire(m.e) });
        for (const id of ids) this.host.crashed(id, fromWire(m.e), m.where);
        return;
      }
    }
  }

  /** An onRequest answer: its body's chunks may follow in the same batch. */
  private announced(v: unknown): void {
    const sid = (v as { stream?: unknown } | null)?.stream;
    if (typeof sid !== "number") return;
    this.early.set(sid, []);
    const worker = this.worker;
    setImmediate(() => {
      // Nobody took the body (the call had already failed): the worker stops streaming it.
      if (this.early.delete(sid) && this.worker === worker && worker) this.outbox?.send({ t: "cancel", sid });
    });
  }

  /** What the daemon does for each of the worker's requests (protocol.ts `RpcOps`): request and answer typed per operation. */
  private readonly rpcHandlers: { [K in RpcOp]: (link: Link, p: RpcOps[K]["p"]) => Promise<RpcOps[K]["r"]> } = {
    "kv.get": (link, p) => link.inst.kv.get(p.key),
    "kv.put": (link, p) => link.inst.kv.put(p.key, p.value),
    "kv.delete": (link, p) => link.inst.kv.delete(p.key),
    "kv.list": (link, p) => link.inst.kv.list(p.prefix),
    "queue.next": async (link, p) => {
      if (p?.wait === undefined) return this.message(link, await link.inst.queue.nextForActor(p ?? undefined));
      // The worker's signal, aborted by its `queueAbort` event.
      const { wait, ...options } = p;
      const abort = new AbortController();
      link.waits.set(wait, abort);
      try {
        return this.message(link, await link.inst.queue.nextForActor({ ...options, signal: abort.signal }));
      } finally {
        link.waits.delete(wait);
      }
    },
    "queue.complete": async (link, p) => this.completeMessage(link, p.id, p.reply),
    saveState: (link) => link.inst.persist(false),
    "schedule.at": (link, p) => link.inst.c.schedule.at(p.at, p.action, ...(p.args ?? [])),
    h: (link, p) => this.handleCall(link, p.h, p.m, p.args),
  };

  /** A request of the worker for something the daemon keeps. */
  private serve(link: Link, m: RpcMessage): Promise<unknown> {
    const handler = this.rpcHandlers[m.op] as ((link: Link, p: RpcMessage["p"]) => Promise<unknown>) | undefined;
    if (!handler) return Promise.reject(new Error(`unknown runner request ${String(m.op).slice(0, 40)}`));
    return handler(link, m.p);
  }

  /** A queue message the worker was given is done: it completes here, where its `complete` is. */
  private async completeMessage(link: Link, id: number, reply: unknown): Promise<void> {
    const msg = link.messages.get(id);
    link.messages.delete(id);
    await msg?.complete(reply);
  }

  private message(link: Link, m: QueueMessage | undefined): WireMessage | undefined {
    if (!m) return undefined;
    link.messages.set(m.id, m);
    return { id: m.id, name: m.name, body: m.body, createdAtMs: m.createdAtMs };
  }

  /** A method of a workflow context called by the worker: callbacks in its arguments run in the worker. */
  private async handleCall(link: Link, h: number, m: string, args: unknown[]): Promise<unknown> {
    const w = link.handles.get(h);
    if (!w) throw new Error("the workflow context is gone");
    const actorId = link.inst.id;
    if (m === "queue.complete") {
      const [id, reply] = args as [number, unknown];
      return this.completeMessage(link, id, reply);
    }
    type Method = (...args: unknown[]) => unknown;
    const queue = w.queue as Record<string, Method | undefined>;
    const fn = m.startsWith("queue.") ? queue[m.slice(6)]?.bind(queue) : (w[m] as Method | undefined)?.bind(w);
    if (typeof fn !== "function") throw new Error(`the workflow context has no method ${m.slice(0, 40)}`);
    const made: number[] = [];
    try {
      const r = await fn(...(this.fromWorker(actorId, args) as unknown[]));
      return this.toWorker(link, r, made);
    } finally {
      for (const id of made) this.dropHandle(actorId, id);
    }
  }

  /** Callback ids in what the worker sent become functions that run the callback in the worker. */
  private fromWorker(actorId: string, v: unknown): unknown {
    if (Array.isArray(v)) return v.map((x) => this.fromWorker(actorId, x));
    if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
      const cb = (v as { $cb?: unknown }).$cb;
      if (typeof cb === "number") {
        return (...args: unknown[]) => {
          const link = this.links.get(actorId);
          if (!link) return Promise.reject(new ActorStopped());
          const made: number[] = [];
          return this.call(actorId, "cb", { cb, args: this.toWorker(link, args, made) as unknown[] })
            .then((r) => this.fromWorker(actorId, r))
            .finally(() => {
              for (const id of made) this.dropHandle(actorId, id);
            });
        };
      }
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.fromWorker(actorId, x);
      return out;
    }
    return v;
  }

  /** Workflow contexts in what goes to the worker become handles; queue messages keep their complete() here. */
  toWorker(link: Link, v: unknown, made: number[]): unknown {
    if (Array.isArray(v)) return v.map((x) => this.toWorker(link, x, made));
    if (v === null || typeof v !== "object" || v instanceof Uint8Array) return v;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      const h = this.handle(link.inst.id, v);
      made.push(h.$h);
      return h;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.complete === "function" && typeof o.id === "number") return this.message(link, o as unknown as QueueMessage);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) if (typeof x !== "function") out[k] = this.toWorker(link, x, made);
    return out;
  }

  /** What the daemon does with each of the worker's events (protocol.ts `EventOps`). */
  private readonly eventHandlers: { [K in EventOp]: (link: Link, p: EventOps[K]) => void } = {
    log: (link, p) => link.inst.c.log[p.level]?.(p.msg, p.fields as Record<string, unknown> | undefined),
    broadcast: (link, p) => link.inst.c.broadcast(p.event, ...((p.args as unknown[] | undefined) ?? [])),
    sleep: (link) => link.inst.c.sleep(),
    destroy: (link) => link.inst.c.destroy(),
    connSend: (link, p) => this.host.connections?.send(link.inst.id, p.conn, p.event, (p.args as unknown[] | undefined) ?? []),
    connClose: (link, p) => this.host.connections?.close(link.inst.id, p.conn, p.reason),
    wsSend: (_link, p) => this.sockets.get(p.ws)?.send(p.data),
    wsClose: (_link, p) => this.sockets.get(p.ws)?.close(p.code, p.reason),
    queueAbort: (link, p) => link.waits.get(p.wait)?.abort(),
  };

  private event(link: Link, m: EventMessage): void {
    const handler = this.eventHandlers[m.op] as ((link: Link, p: EventMessage["p"]) => void) | undefined;
    handler?.(link, m.p);
  }

  // ---------- death and restart ----------

  private died(code: number, failure: Error | null): void {
    this.stopWatchdog();
    const stopping = this.stopping;
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    if (stopping === "retire") {
      this.failPending(this.unavailable("the module was replaced or removed"));
      this.ready = null;
      return;
    }
    let where: string;
    let message: string;
    const overMb = Atomics.load(this.shared, SHARED.oom);
    if (stopping) ({ where, message } = stopping);
    else if (overMb > 0) {
      where = "out of memory";
      message = `the actor's runner went over its memory limit (${overMb} MB of heap and buffers; the limit is ${this.limits.maxMemoryMb} MB)`;
    } else if ((failure as NodeJS.ErrnoException | null)?.code === "ERR_WORKER_OUT_OF_MEMORY") {
      where = "out of memory";
      message = `the actor's runner ran out of memory (heap limit ${this.limits.maxMemoryMb} MB)`;
    } else if (failure) {
      where = "runner error";
      message = failure.message;
    } else {
      where = "process.exit";
      message = `the actor's code called process.exit(${code}); its runner stopped`;
    }
    const exiter = this.slots.get(Atomics.load(this.shared, SHARED.exiter));
    const running = this.slots.get(Atomics.load(this.shared, SHARED.running));
    let culprits: string[];
    if (where === "process.exit" && exiter) culprits = [exiter];
    else if ((where === "watchdog" || where === "out of memory") && running) culprits = [running];
    else {
      const busy = new Set<string>();
      for (const p of this.pending.values()) if (this.links.has(p.actorId)) busy.add(p.actorId);
      for (const link of this.links.values()) if (link.inst.inFlight > 0) busy.add(link.inst.id);
      culprits = busy.size ? [...busy] : [...this.links.keys()];
    }
    const error = new AgentError("actor.runner_failed", message, { file: this.file, where });
    this.host.log.error("an actor runner stopped", { file: this.file, where, actors: culprits, error: message });
    const bystanders = [...this.links.keys()].filter((id) => !culprits.includes(id));
    for (const id of culprits) this.host.crashed(id, error, where);
    const lost = bystanders.map((id) => this.host.runnerLost(id).then(() => id));
    this.links.clear();
    this.slots.clear();
    this.failPending(new AgentError("actor.runner_failed", `the call did not finish: ${message}`, { file: this.file, where }));
    this.scheduleRestart(lost);
  }

  private failPending(error: Error): void {
    for (const ws of this.sockets.values()) ws.close(1011, "actor.runner_failed");
    this.sockets.clear();
    for (const c of this.streams.values()) {
      try {
        c.error(error);
      } catch {}
    }
    this.streams.clear();
    this.early.clear();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(error);
  }

  private scheduleRestart(lost: Promise<string>[]): void {
    if (this.retired) return;
    // Healthy for a while: the backoff starts over.
    if (Date.now() - this.upSince > 60_000) this.restarts = 0;
    const delay = Math.min(this.limits.backoffMaxMs, this.limits.backoffBaseMs * 2 ** this.restarts++);
    let release!: () => void;
    let fail!: (e: unknown) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      release = resolve;
      fail = reject;
    });
    this.ready.catch(() => undefined);
    this.failReady = fail;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.retired) {
        fail(this.unavailable("the module was replaced or removed"));
        return;
      }
      this.spawn().then(
        async () => {
          this.host.log.info("an actor runner restarted", { file: this.file, restarts: this.restarts });
          this.failReady = null;
          this.failedRestarts = 0;
          release();
          for (const r of await Promise.allSettled(lost)) if (r.status === "fulfilled") this.host.rewake(r.value);
        },
        (error) => {
          this.host.log.error("an actor runner could not be restarted", { file: this.file, error });
          fail(this.unavailable(`restarting it failed: ${(error as Error).message}`));
          // A module that no longer loads waits for its file to change (the reload starts a new runner).
          if (++this.failedRestarts < 5) this.scheduleRestart(lost);
        },
      );
    }, delay);
    this.restartTimer.unref();
  }

  /** No new actor of this module starts here; the worker ends once its last actor is gone. */
  retire(): void {
    this.retired = true;
    if (this.links.size === 0) void this.terminate();
  }

  /** Fails the wait for a restart that will not happen. */
  private failReady: ((e: unknown) => void) | null = null;

  async terminate(): Promise<void> {
    this.retired = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.failReady?.(this.unavailable("the module was replaced or removed"));
    this.failReady = null;
    this.stopWatchdog();
    const w = this.worker;
    if (!w) return;
    this.stopping = "retire";
    await w.terminate();
  }
}

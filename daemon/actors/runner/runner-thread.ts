/**
 * A runner thread: one thread per user actor module (README, design notes "User actor
 * code runs in a runner"). It imports the module, keeps the actors' contexts (state, vars,
 * connections) and runs their code; everything durable (state on disk, KV, queue, schedule,
 * workflow history) stays with the daemon and is reached by messages (protocol.ts).
 *
 * What escapes an actor's code here (a throwing timer, an unhandled rejection) is charged to the
 * actor whose async context it came from and reported; `process.exit` ends only this thread and
 * names the actor that called it; an endless loop stops the heartbeat the daemon's watchdog reads.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { parentPort, workerData } from "node:worker_threads";
import { systemClock } from "../../../shared/clock.js";
import { callContext, hasState, makeActorContext } from "../actor-context.js";
import { decodeValue, encodeValue } from "../codec.js";
import { ActorStopped } from "../errors.js";
import type { ActorContext, ActorDefinition, ActorQueue, ConnView, QueueMessage, WorkflowContext } from "../types.js";
import {
  type CallMessage,
  type CallOp,
  type CallOps,
  type ConnOp,
  type EventOp,
  type EventOps,
  type ExportShape,
  type FromWorker,
  fromWire,
  HEARTBEAT_MS,
  type RpcOp,
  type RpcOps,
  SHARED,
  type ToWorker,
  toWireError,
  type WireMessage,
  type WireRequest,
  type WireRequestHead,
  type WireResponse,
} from "./protocol.js";
import { Outbox } from "./outbox.js";
import { installMemoryGuard } from "./memory-guard.js";

const port = parentPort!;
const shared = new Int32Array(workerData.shared as SharedArrayBuffer);
const als = new AsyncLocalStorage<Actor>();

// Memory outside the heap counts against the limit too (memory-guard.ts); before any user code.
const memory = installMemoryGuard(shared, Number(workerData.maxMemoryMb) || 512, process.exit.bind(process) as (code: number) => never);

setInterval(() => {
  Atomics.add(shared, SHARED.tick, 1);
  memory.check();
}, HEARTBEAT_MS);

// Everything for the daemon goes in one batch per turn of the event loop (outbox.ts).
const outbox = new Outbox<FromWorker>(port, (m, error) => {
  // A message that cannot cross: its call fails with why (the state it carried still goes).
  if (m.t === "done")
    port.postMessage({ t: "done", id: m.id, ok: false, e: toWireError(error), ...(m.s !== undefined ? { s: m.s } : {}) } satisfies FromWorker);
  else if (m.t === "rpc") {
    const p = rpcs.get(m.id);
    rpcs.delete(m.id);
    p?.reject(error);
  }
});
const post = (m: FromWorker, transfer?: ArrayBuffer[]) => outbox.send(m, transfer);

// ---------- the module ----------

const defs = new Map<string, ActorDefinition>();

async function load(url: string): Promise<ExportShape[]> {
  const mod = (await import(url)) as Record<string, unknown>;
  const file = decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "").replace(/\.(m?js)$/, "");
  const shapes: ExportShape[] = [];
  for (const [exportName, value] of Object.entries(mod)) {
    if (!value || typeof value !== "object" || !("actions" in value)) continue;
    const def = value as Record<string, any>;
    if (!def.actions || typeof def.actions !== "object") continue;
    const name = exportName === "default" ? file : exportName;
    defs.set(name, def as ActorDefinition);
    const hooks = Object.keys(def).filter((k) => typeof def[k] === "function");
    let state: unknown;
    if (def.state !== undefined) state = structuredClone(def.state);
    const connState = def.connState !== undefined ? structuredClone(def.connState) : undefined;
    shapes.push({
      name,
      actions: Object.keys(def.actions).filter((k) => typeof def.actions[k] === "function"),
      hooks,
      ...(state !== undefined ? { state } : {}),
      hasState: def.state !== undefined || typeof def.createState === "function",
      ...(connState !== undefined ? { connState } : {}),
      ...(def.options && typeof def.options === "object" ? { options: structuredClone(def.options) } : {}),
    });
  }
  return shapes;
}

// ---------- actors ----------

let rpcSeq = 0;
const rpcs = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
let cbSeq = 0;
let waitSeq = 0;

type Conn = ConnView;

class Actor {
  stateValue: unknown;
  vars: unknown;
  /** The state text the daemon has last seen. */
  known: string;
  /** See `abort`: made on first use (most actors never look at their signal). */
  private abortController: AbortController | null = null;
  /** The daemon detached the actor (it sleeps, or is destroyed or replaced). */
  stopped = false;
  readonly callbacks = new Map<number, (...args: unknown[]) => unknown>();
  readonly conns = new Map<string, Conn>();
  readonly sockets = new Map<string, RawSocket>();
  readonly c: ActorContext;

  constructor(
    readonly id: string,
    readonly name: string,
    readonly key: string[],
    readonly slot: number,
    readonly def: ActorDefinition,
    stateText: string | null,
  ) {
    if (stateText === null) {
      this.stateValue = def.state !== undefined ? structuredClone(def.state) : undefined;
      this.known = encodeValue(this.stateValue);
    } else {
      this.stateValue = decodeValue(stateText);
      this.known = stateText;
    }
    this.c = this.context();
  }

  /** Aborted when the actor stops (c.abortSignal). */
  get abort(): AbortController {
    if (!this.abortController) {
      this.abortController = new AbortController();
      if (this.stopped) this.abortController.abort(new ActorStopped());
    }
    return this.abortController;
  }

  stop(): void {
    this.stopped = true;
    this.abortController?.abort(new ActorStopped());
  }

  /** The state's text when the daemon has not seen it yet (after onStateChange), else undefined. */
  sync(): string | undefined {
    const text = encodeValue(this.stateValue);
    if (text === this.known) return undefined;
    this.known = text;
    if (typeof this.def.onStateChange === "function") {
      try {
        this.def.onStateChange(this.c, this.stateValue);
      } catch (error) {
        this.event("log", { level: "error", msg: "onStateChange threw", fields: { error: toWireError(error).message } });
      }
      // What onStateChange wrote belongs to this change: the next call must not fire it again.
      const after = encodeValue(this.stateValue);
      if (after !== text) {
        this.known = after;
        return after;
      }
    }
    return text;
  }

  /** Ask the daemon for something it keeps (protocol.ts `RpcOps`), with the state if it changed. */
  rpc<K extends RpcOp>(op: K, p: RpcOps[K]["p"]): Promise<RpcOps[K]["r"]> {
    const id = ++rpcSeq;
    const s = this.sync();
    return new Promise((resolve, reject) => {
      rpcs.set(id, { resolve: resolve as (v: unknown) => void, reject });
      // `op` and `p` agree by the signature; TypeScript cannot carry that pairing into the union by itself.
      post({ t: "rpc", id, a: this.id, op, p, ...(s !== undefined ? { s } : {}) } as FromWorker);
    });
  }

  /** Tell the daemon something about this actor (protocol.ts `EventOps`). */
  event<K extends EventOp>(op: K, p: EventOps[K]): void {
    post({ t: "ev", a: this.id, op, p } as FromWorker);
  }

  /** The context `c` (actor-context.ts), over messages to the daemon for all it keeps. */
  private context(): ActorContext {
    // A Buffer is a view of a shared pool: copied, so only its own bytes cross.
    const toBytes = (v: string | Uint8Array) => (typeof v === "string" ? v : new Uint8Array(v));
    const message = (m: WireMessage | undefined): QueueMessage | undefined =>
      m === undefined || m === null ? undefined : { ...m, complete: (reply?: unknown) => this.rpc("queue.complete", { id: m.id, reply }) };
    const next: ActorQueue["next"] = async (options) => {
      // The signal cannot cross: the wait gets an id, and the signal's abort is sent as `queueAbort`
      // (a message already there is still handed out, then the wait ends with actor.aborted, as RivetKit's).
      const { signal, ...rest } = options ?? {};
      if (!signal) return message(await this.rpc("queue.next", rest));
      const wait = ++waitSeq;
      const answer = this.rpc("queue.next", { ...rest, wait });
      const onAbort = () => this.event("queueAbort", { wait });
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      try {
        return message(await answer);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    };
    let queueSize = 0;
    const queue: ActorQueue = {
      next,
      async *iter(options) {
        for (;;) {
          const m = await next(options);
          if (!m) return;
          yield m;
        }
      },
      get size() {
        return queueSize;
      },
    };
    this.setQueueSize = (n: number) => {
      queueSize = n;
    };
    return makeActorContext({
      actorId: this.id,
      name: this.name,
      key: this.key,
      holder: this,
      stateEnabled: hasState(this.def),
      rivetKitKv: true,
      kv: {
        get: (key) => this.rpc("kv.get", { key: toBytes(key) }),
        put: (key, value) => this.rpc("kv.put", { key: toBytes(key), value: toBytes(value) }),
        delete: (key) => this.rpc("kv.delete", { key: toBytes(key) }),
        list: (prefix) => this.rpc("kv.list", { prefix: prefix === undefined ? undefined : toBytes(prefix) }),
      },
      queue,
      conns: this.conns,
      abortSignal: () => this.abort.signal,
      log: (level, msg, fields) => this.event("log", { level, msg, fields: safeClone(fields) }),
      broadcast: (event, args) => this.event("broadcast", { event, args: safeClone(args) }),
      saveState: () => this.rpc("saveState", null),
      sleep: () => this.event("sleep", null),
      destroy: () => this.event("destroy", null),
      // The daemon's runtime uses the system clock whenever actors run in a runner thread.
      now: () => systemClock.now(),
      scheduleAt: (at, action, args) => this.rpc("schedule.at", { at, action, args }),
    });
  }

  setQueueSize: (n: number) => void = () => undefined;

  /** A connection's view inside the actor (`c.conns`, hooks, `c.conn` in actions). */
  conn(id: string, params: unknown): Conn {
    let conn = this.conns.get(id);
    if (conn) return conn;
    conn = {
      id,
      params,
      state: undefined,
      send: (event: string, ...args: unknown[]) => this.event("connSend", { conn: id, event: String(event), args: safeClone(args) }),
      disconnect: async (reason?: string) => this.event("connClose", { conn: id, reason }),
    };
    this.conns.set(id, conn);
    return conn;
  }
}

function safeClone(v: unknown): unknown {
  try {
    return structuredClone(v);
  } catch {
    return JSON.parse(encodeValue(v));
  }
}

const actors = new Map<string, Actor>();

function actorOf(id: string): Actor {
  const a = actors.get(id);
  if (!a) throw new Error(`actor ${id} is not attached to this runner`);
  return a;
}

// ---------- values crossing to and from the daemon ----------

/** Functions in what the actor passes to the daemon become callback ids. */
function marshal(actor: Actor, v: unknown, made: number[]): unknown {
  if (typeof v === "function") {
    const id = ++cbSeq;
    actor.callbacks.set(id, v as (...args: unknown[]) => unknown);
    made.push(id);
    return { $cb: id };
  }
  if (Array.isArray(v)) return v.map((x) => marshal(actor, x, made));
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = marshal(actor, x, made);
    return out;
  }
  return v;
}

/** Handles to the daemon's workflow contexts become workflow contexts here. */
function unmarshal(actor: Actor, v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => unmarshal(actor, x));
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    const h = v as { $h?: number; m?: string[]; q?: string[] };
    if (typeof h.$h === "number") return workflowContext(actor, h.$h, h.m ?? [], h.q ?? []);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = unmarshal(actor, x);
    return out;
  }
  return v;
}

/** A workflow context: the actor's context plus the daemon engine's methods, called through the handle. */
function workflowContext(actor: Actor, handle: number, methods: string[], queueMethods: string[]): WorkflowContext {
  const call = async (m: string, args: unknown[]) => {
    const made: number[] = [];
    try {
      return unmarshal(actor, await actor.rpc("h", { h: handle, m, args: marshal(actor, args, made) as unknown[] }));
    } finally {
      for (const id of made) actor.callbacks.delete(id);
    }
  };
  const w = Object.create(actor.c);
  for (const m of methods) Object.defineProperty(w, m, { value: (...args: unknown[]) => call(m, args) });
  const q = Object.create(actor.c.queue);
  for (const m of queueMethods) {
    Object.defineProperty(q, m, {
      value: async (...args: unknown[]) => {
        const [options] = args as [{ signal?: AbortSignal } | undefined];
        // The signal cannot cross: the daemon's workflow engine aborts its own waits.
        const { signal: _signal, ...rest } = options ?? {};
        const r = (await call(`queue.${m}`, options === undefined ? [] : [rest])) as WireMessage | null | undefined;
        return r && typeof r === "object" && typeof r.id === "number" ? { ...r, complete: (reply?: unknown) => call("queue.complete", [r.id, reply]) } : r;
      },
    });
  }
  Object.defineProperty(w, "queue", { value: q });
  return w as WorkflowContext;
}

// ---------- raw WebSockets ----------

type Listener = NonNullable<Parameters<EventTarget["addEventListener"]>[1]>;

/** The actor's side of a raw WebSocket (onWebSocket): the daemon holds the socket. */
class RawSocket extends EventTarget {
  readyState = 1;
  onmessage: ((e: Event) => void) | null = null;
  onclose: ((e: Event) => void) | null = null;
  onerror: ((e: Event) => void) | null = null;
  onopen: ((e: Event) => void) | null = null;
  binaryType = "arraybuffer";
  constructor(
    private readonly actor: Actor,
    readonly id: string,
  ) {
    super();
  }
  send(data: string | ArrayBuffer | Uint8Array): void {
    if (this.readyState !== 1) return;
    const d = typeof data === "string" ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data);
    this.actor.event("wsSend", { ws: this.id, data: d });
  }
  close(code?: number, reason?: string): void {
    if (this.readyState > 1) return;
    this.readyState = 2;
    this.actor.event("wsClose", { ws: this.id, code, reason });
  }
  /** Promises returned by handlers while an event is dispatched (see `deliver`). */
  private running: Promise<unknown>[] | null = null;
  private readonly wrapped = new WeakMap<object, (e: Event) => void>();

  // A listener's promise is kept (RivetKit's tracked WebSocket): the event's delivery waits for it.
  override addEventListener(
    type: string,
    listener: Listener,
    options?: { once?: boolean; passive?: boolean; signal?: AbortSignal; capture?: boolean } | boolean,
  ): void {
    if (typeof listener !== "function") {
      super.addEventListener(type, listener, options);
      return;
    }
    let w = this.wrapped.get(listener);
    if (!w) {
      w = (e: Event) => this.track((listener as (e: Event) => unknown).call(this, e));
      this.wrapped.set(listener, w);
    }
    super.addEventListener(type, w, options);
  }

  override removeEventListener(type: string, listener: Listener, options?: { capture?: boolean } | boolean): void {
    const w = typeof listener === "function" ? this.wrapped.get(listener) : undefined;
    super.removeEventListener(type, w ?? listener, options);
  }

  private track(r: unknown): void {
    if (this.running && r !== null && typeof r === "object" && typeof (r as Promise<unknown>).then === "function") this.running.push(r as Promise<unknown>);
  }

  /**
   * Dispatch an event; resolves when the async handlers it started have finished, so the
   * daemon counts them as a call in flight (the actor does not sleep mid-handler, as RivetKit's).
   */
  deliver(type: string, init: Record<string, unknown>): Promise<unknown> | undefined {
    const e = Object.assign(new Event(type), init);
    const running: Promise<unknown>[] = [];
    this.running = running;
    try {
      const handler = (this as unknown as Record<string, ((e: Event) => unknown) | null | undefined>)[`on${type}`];
      if (typeof handler === "function") this.track(handler.call(this, e));
      this.dispatchEvent(e);
    } finally {
      this.running = null;
    }
    // A handler's failure is the handler's (logged as an unhandled rejection would be), not the delivery's.
    return running.length ? Promise.allSettled(running).then((results) => reportRejections(results)) : undefined;
  }
}

function reportRejections(results: PromiseSettledResult<unknown>[]): void {
  for (const r of results) if (r.status === "rejected") escaped(r.reason, "raw WebSocket handler");
}

// ---------- calls ----------

type Hook = (c: ActorContext, ...args: unknown[]) => unknown;

/** `c` with `c.conn` and/or `c.request`, as RivetKit's connection contexts have them. */
function connContext(actor: Actor, conn?: ConnView, request?: Request): ActorContext {
  const props: PropertyDescriptorMap = {};
  if (conn) props.conn = { value: conn, enumerable: true };
  if (request) props.request = { value: request, enumerable: true };
  // Each call its own context: its own queue guard, as each RivetKit context has its own ActorQueue.
  return callContext(actor.c, props);
}

const toRequest = (w: WireRequestHead) => new Request(w.url, { method: w.method, headers: w.headers });

async function hook(actor: Actor, name: string, args: unknown[], c: ActorContext): Promise<unknown> {
  // The daemon names the hook; the definition is the user's object (any member may be missing).
  const fn = (actor.def as unknown as Record<string, Hook | undefined>)[name];
  if (name === "createVars") {
    if (typeof fn === "function") actor.vars = await fn(actor.c);
    else if (actor.def.vars !== undefined) actor.vars = structuredClone(actor.def.vars);
    return undefined;
  }
  if (typeof fn !== "function") return undefined;
  const r = await fn(c, ...args);
  if (name === "createState") {
    actor.stateValue = r;
    // The initial state is not a change (onStateChange is for changes).
    actor.known = encodeValue(r);
    return safeClone(r);
  }
  return name === "createConnState" || name === "onBeforeConnect" ? safeClone(r) : undefined;
}

/** A member the daemon only calls when the module's shape listed it (remote-definition.ts): its absence is the daemon's mistake. */
function member<T>(fn: T | undefined, what: string): T {
  if (typeof fn !== "function") throw new Error(`the actor definition has no ${what}`);
  return fn;
}

let streamSeq = 0;
const streams = new Map<number, ReadableStreamDefaultReader<Uint8Array>>();

async function request(actor: Actor, w: WireRequest): Promise<{ value: WireResponse }> {
  const req = new Request(w.url, { method: w.method, headers: w.headers, ...(w.body ? { body: w.body } : {}) });
  const c = connContext(actor, w.conn === undefined ? undefined : actor.conns.get(w.conn), req);
  const res = await member(actor.def.onRequest, "onRequest")(c, req);
  if (!(res instanceof Response)) throw new Error("onRequest did not return a Response");
  let stream: number | null = null;
  if (res.body) {
    const sid = (stream = ++streamSeq);
    const reader = res.body.getReader();
    streams.set(sid, reader);
    // Streamed as it comes (server-sent events keep their pacing), after the answer that
    // announces the stream; the daemon may cancel.
    setImmediate(async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const d = new Uint8Array(value);
          post({ t: "chunk", sid, d }, [d.buffer as ArrayBuffer]);
        }
        post({ t: "chunk", sid, end: true });
      } catch (error) {
        post({ t: "chunk", sid, e: toWireError(error) });
      } finally {
        streams.delete(sid);
      }
    });
  }
  return { value: { status: res.status, statusText: res.statusText, headers: [...res.headers.entries()], stream } };
}

async function connOp(actor: Actor, p: ConnOp): Promise<unknown> {
  switch (p.kind) {
    case "open": {
      const conn = actor.conn(p.conn, p.params);
      conn.state = p.state;
      if (typeof actor.def.onConnect === "function") await actor.def.onConnect(connContext(actor, conn), conn);
      return undefined;
    }
    case "close": {
      const conn = actor.conns.get(p.conn);
      if (!conn) return undefined;
      actor.conns.delete(p.conn);
      if (typeof actor.def.onDisconnect === "function") await actor.def.onDisconnect(connContext(actor, conn), conn);
      return undefined;
    }
    case "action": {
      actor.setQueueSize(p.queueSize);
      const conn = actor.conns.get(p.conn);
      return actionOf(actor, p.name)(connContext(actor, conn), ...(p.args ?? []));
    }
    case "state":
      return safeClone(actor.conns.get(p.conn)?.state);
    case "states": {
      const out: Record<string, unknown> = {};
      for (const [id, conn] of actor.conns) out[id] = safeClone(conn.state);
      return out;
    }
    case "wsOpen": {
      const ws = new RawSocket(actor, p.ws);
      actor.sockets.set(p.ws, ws);
      const req = new Request(p.request.url, { method: "GET", headers: p.request.headers });
      // RivetKit's onWebSocket(c, websocket): `c.request` is the upgrade, `c.conn` the socket's connection.
      const c = connContext(actor, p.conn === undefined ? undefined : actor.conns.get(p.conn), req);
      await member(actor.def.onWebSocket, "onWebSocket")(c, ws, { request: req });
      ws.deliver("open", {});
      return undefined;
    }
    case "wsMessage":
      await actor.sockets.get(p.ws)?.deliver("message", { data: p.data });
      return undefined;
    case "wsClosed": {
      const ws = actor.sockets.get(p.ws);
      if (!ws) return undefined;
      actor.sockets.delete(p.ws);
      ws.readyState = 3;
      await ws.deliver("close", { code: p.code ?? 1005, reason: p.reason ?? "", wasClean: true });
      return undefined;
    }
  }
  throw new Error(`unknown connection operation ${String((p as { kind?: unknown }).kind).slice(0, 40)}`);
}

function actionOf(actor: Actor, name: string): (c: ActorContext, ...args: unknown[]) => unknown {
  const fn = Object.hasOwn(actor.def.actions, name) ? actor.def.actions[name] : undefined;
  if (typeof fn !== "function") throw Object.assign(new Error(`no action ${name}`), { name: "AgentError", code: "action.not_found" });
  return fn;
}

/** What a call's handler answers: the value, and buffers to transfer with it. */
interface Answer<K extends CallOp> {
  value: CallOps[K]["r"];
  transfer?: ArrayBuffer[];
}

/** What the worker does for each of the daemon's calls about an attached actor (protocol.ts `CallOps`), typed per operation. */
const calls: { [K in Exclude<CallOp, "attach">]: (actor: Actor, p: CallOps[K]["p"]) => Promise<Answer<K>> } = {
  async hook(actor, p) {
    actor.setQueueSize(p.queueSize);
    const c = connContext(actor, p.conn === undefined ? undefined : actor.conns.get(p.conn), p.request ? toRequest(p.request) : undefined);
    return { value: await hook(actor, p.hook, unmarshal(actor, p.args ?? []) as unknown[], c) };
  },
  async action(actor, p) {
    actor.setQueueSize(p.queueSize);
    return { value: await actionOf(actor, p.name)(connContext(actor), ...(p.args ?? [])) };
  },
  request: (actor, p) => request(actor, p),
  async workflow(actor, p) {
    return { value: await member(actor.def.workflow, "workflow")(unmarshal(actor, p.w) as WorkflowContext) };
  },
  async cb(actor, p) {
    const fn = actor.callbacks.get(p.cb);
    if (!fn) throw new Error("the workflow callback is gone");
    const made: number[] = [];
    return { value: marshal(actor, await fn(...(unmarshal(actor, p.args ?? []) as unknown[])), made) };
  },
  conn: async (actor, p) => ({ value: await connOp(actor, p) }),
};

async function run(m: CallMessage): Promise<{ value: unknown; transfer?: ArrayBuffer[] }> {
  if (m.op === "attach") {
    const def = defs.get(m.p.name);
    if (!def) throw new Error(`this runner has no actor definition named ${m.p.name}`);
    const prev = actors.get(m.a);
    prev?.stop();
    actors.set(m.a, new Actor(m.a, m.p.name, m.p.key, m.p.slot, def, m.p.state));
    return { value: undefined };
  }
  const actor = actorOf(m.a);
  const handler = calls[m.op] as ((actor: Actor, p: CallMessage["p"]) => Promise<{ value: unknown; transfer?: ArrayBuffer[] }>) | undefined;
  if (!handler) throw new Error(`unknown call ${String(m.op).slice(0, 40)}`);
  return handler(actor, m.p);
}

function handleCall(m: CallMessage): void {
  const actor = actors.get(m.a);
  Atomics.store(shared, SHARED.running, actor?.slot ?? 0);
  const finish = (ok: boolean, value: unknown, error: unknown, transfer?: ArrayBuffer[]) => {
    const a = actors.get(m.a);
    const s = a?.sync();
    let v = value;
    if (ok) {
      try {
        v = transfer?.length ? value : structuredCloneable(value);
      } catch (e) {
        ok = false;
        error = e;
      }
    }
    const msg: FromWorker = ok
      ? { t: "done", id: m.id, ok: true, v, ...(s !== undefined ? { s } : {}) }
      : { t: "done", id: m.id, ok: false, e: toWireError(error), ...(s !== undefined ? { s } : {}) };
    post(msg, transfer);
  };
  const go = () =>
    run(m).then(
      (r) => finish(true, r.value, undefined, r.transfer),
      (e) => finish(false, undefined, e),
    );
  if (actor) als.run(actor, go);
  else go();
  Atomics.store(shared, SHARED.running, 0);
}

/** Values the structured clone cannot carry (functions, class instances with methods) are sent as their JSON. */
function structuredCloneable(v: unknown): unknown {
  if (v === undefined || v === null || typeof v !== "object") return typeof v === "function" ? undefined : v;
  try {
    return structuredClone(v);
  } catch {
    return JSON.parse(encodeValue(v));
  }
}

// The daemon batches its messages too: an array is several, in order.
port.on("message", (m: ToWorker | ToWorker[]) => {
  if (Array.isArray(m)) for (const one of m) receive(one);
  else receive(m);
});

function receive(m: ToWorker): void {
  switch (m.t) {
    case "load":
      load(m.url).then(
        (exports) => post({ t: "loaded", exports }),
        (error) => post({ t: "loadFailed", e: toWireError(error) }),
      );
      return;
    case "call":
      handleCall(m);
      return;
    case "rpcDone": {
      const p = rpcs.get(m.id);
      if (!p) return;
      rpcs.delete(m.id);
      if (m.ok) p.resolve(m.v);
      else p.reject(fromWire(m.e!));
      return;
    }
    case "detach": {
      const a = actors.get(m.a);
      if (!a) return;
      actors.delete(m.a);
      a.stop();
      return;
    }
    case "cancel":
      void streams
        .get(m.sid)
        ?.cancel()
        .catch(() => undefined);
      streams.delete(m.sid);
      return;
    case "state": {
      const a = actors.get(m.a);
      if (a) {
        a.stateValue = decodeValue(m.text);
        a.known = m.text;
      }
      return;
    }
  }
}

// ---------- what escapes ----------

function escaped(error: unknown, where: string): void {
  const actor = als.getStore();
  if (actor) post({ t: "crash", a: actor.id, e: toWireError(error), where });
  else post({ t: "uncaught", e: toWireError(error), where });
}
process.on("uncaughtException", (error) => escaped(error, "uncaught exception"));
process.on("unhandledRejection", (error) => escaped(error, "unhandled rejection"));

// process.exit ends only this thread; the daemon learns whose code called it.
const exit = process.exit.bind(process);
process.exit = ((code?: number) => {
  const actor = als.getStore();
  if (actor) Atomics.store(shared, SHARED.exiter, actor.slot);
  // What was answered before the exit still reaches the daemon.
  outbox.flush();
  exit(code);
}) as typeof process.exit;

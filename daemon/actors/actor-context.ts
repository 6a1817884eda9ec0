/**
 * The context `c` an actor's code sees, built in one place for both places an actor's code runs:
 * the daemon's own thread (instance/instance.ts: built-in actors, and user actors with
 * AGENT_ACTORS_RUNNER=inline) and a runner thread (runner/runner-thread.ts). What differs between the
 * two (where the state lives, how KV, the queue, the schedule and saves are reached: directly, or
 * by messages to the daemon) is the backend each passes in; everything the actor's code can
 * observe of `c` (its members, argument checks, how `schedule.after` turns into a time) is here.
 *
 * This module is loaded into runner threads: it imports nothing but types and the error type.
 */
import { AgentError } from "../../shared/errors.js";
import type { ActorContext, ActorKv, ActorLog, ActorQueue, ConnView, QueueMessage } from "./types.js";

export type LogLevel = "debug" | "info" | "warn" | "error";

/** An actor's KV at the byte level: what a backend provides (`getJson`/`putJson` and the argument checks are the factory's). */
export interface KvBackend {
  get(key: string | Uint8Array): Promise<Uint8Array | null>;
  put(key: string | Uint8Array, value: string | Uint8Array): Promise<void>;
  delete(key: string | Uint8Array): Promise<void>;
  list(prefix?: string | Uint8Array): Promise<Array<{ key: Uint8Array; value: Uint8Array }>>;
}

/** The operations that differ between an actor run in the daemon's thread and one run in a runner thread. */
export interface ActorContextBackend {
  readonly actorId: string;
  readonly name: string;
  readonly key: string[];
  /** Where `c.state` and `c.vars` live (read and written through, so the owner sees every change). */
  readonly holder: { stateValue: unknown; vars: unknown };
  /** The definition has `state` or `createState`; without, `c.state` throws `actor.state_not_enabled` as RivetKit's does. */
  readonly stateEnabled: boolean;
  readonly kv: KvBackend;
  /**
   * `c.kv` in RivetKit's shape (text for text, `[key, value]` pairs, batches and ranges): what
   * user actors get. The daemon's built-in actors keep the byte-level `ActorKv`.
   */
  readonly rivetKitKv?: boolean;
  readonly queue: ActorQueue;
  /** The live connections, by id (`c.conns`). */
  readonly conns: Map<string, ConnView>;
  /** Aborted when the actor stops; read only when the actor's code asks (most never do). */
  abortSignal(): AbortSignal;
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  broadcast(event: string, args: unknown[]): void;
  saveState(): Promise<void>;
  sleep(): void;
  destroy(): void;
  /** The runtime's clock (shared/clock.ts): `schedule.after` counts from it, as the alarms do. */
  now(): number;
  /** Schedule `action(...args)` at `at` (ms since the epoch); resolves once it is recorded. */
  scheduleAt(at: number, action: string, args: unknown[]): Promise<void>;
}

/** The unguarded queue behind each context, for `callContext`. */
const rawQueues = new WeakMap<ActorContext, ActorQueue>();

/**
 * The context of one call (an action, a hook, a request): `c` with its own `c.queue` guard, as
 * each RivetKit context has its own ActorQueue (a completable message one call left uncompleted
 * does not stop another call's `next()`, which gets it again), plus `props` (`conn`, `request`).
 */
export function callContext(c: ActorContext, props: PropertyDescriptorMap = {}): ActorContext {
  const raw = rawQueues.get(c);
  if (raw) {
    // Made on first use: most calls never touch the queue.
    let q: ActorQueue | undefined;
    props.queue = { get: () => (q ??= guardedQueue(raw)), enumerable: true };
  }
  return Object.create(c, props) as ActorContext;
}

/** The one way an actor's context is made. */
export function makeActorContext(b: ActorContextBackend): ActorContext {
  const c = buildContext(b);
  rawQueues.set(c, b.queue);
  return c;
}

function buildContext(b: ActorContextBackend): ActorContext {
  const log = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => b.log(level, String(msg), fields);
  const logger: ActorLog = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
  return {
    get state() {
      if (!b.stateEnabled) throw stateNotEnabled();
      return b.holder.stateValue;
    },
    set state(v) {
      if (!b.stateEnabled) throw stateNotEnabled();
      b.holder.stateValue = v;
    },
    get vars() {
      return b.holder.vars;
    },
    set vars(v) {
      b.holder.vars = v;
    },
    key: b.key,
    name: b.name,
    actorId: b.actorId,
    // User code is untyped JavaScript written for RivetKit: its `c.kv` is RivetKit's shape.
    kv: b.rivetKitKv ? (rivetKitKv(b.kv) as unknown as ActorKv) : contextKv(b.kv),
    queue: guardedQueue(b.queue),
    log: logger,
    get abortSignal() {
      return b.abortSignal();
    },
    conns: b.conns,
    broadcast: (event, ...args) => b.broadcast(String(event), args),
    saveState: () => b.saveState(),
    sleep: () => b.sleep(),
    destroy: () => b.destroy(),
    schedule: {
      after: (ms, action, ...args) => b.scheduleAt(b.now() + Math.max(0, Number(ms) || 0), action, args),
      at: (ts, action, ...args) => b.scheduleAt(Number(ts), action, args),
    },
  };
}

/**
 * `c.queue` with RivetKit 2.2.1's guards: after `next({ completable: true })` handed a message
 * out, `next` throws `queue.previous_message_not_completed` until it is completed; a second
 * `complete()` of one message throws `queue.already_completed` (a failed one may be retried).
 */
function guardedQueue(q: ActorQueue): ActorQueue {
  const pending = new Set<number>();
  const wrap = (m: QueueMessage | undefined, completable: boolean): QueueMessage | undefined => {
    if (!m) return m;
    if (completable) pending.add(m.id);
    let completed = false;
    return {
      ...m,
      complete: async (reply?: unknown) => {
        if (completed) throw new AgentError("queue.already_completed", "Queue message was already completed.");
        completed = true;
        try {
          await m.complete(reply);
          pending.delete(m.id);
        } catch (error) {
          completed = false;
          throw error;
        }
      },
    };
  };
  const next: ActorQueue["next"] = async (options) => {
    if (pending.size > 0) {
      throw new AgentError(
        "queue.previous_message_not_completed",
        "Previous completable queue message is not completed. Call `message.complete(...)` before receiving the next message.",
      );
    }
    return wrap(await q.next(options), options?.completable === true);
  };
  return {
    next,
    async *iter(options) {
      for (;;) {
        let m: QueueMessage | undefined;
        try {
          m = await next(options);
        } catch (error) {
          // The actor stopped (or the signal aborted): the iteration ends, as RivetKit's does.
          if ((error as { code?: unknown } | null)?.code === "actor.aborted") return;
          throw error;
        }
        if (!m) return;
        yield m;
      }
    },
    get size() {
      return q.size;
    },
  };
}

/** RivetKit 2.2.1's StateNotEnabled, group, code and message. */
function stateNotEnabled(): AgentError {
  return new AgentError(
    "actor.state_not_enabled",
    "State not enabled. Must implement `createState` or `state` to use state. (https://www.rivet.dev/docs/actors/state/#initializing-state)",
  );
}

/** Whether an actor definition has state (`state` or `createState`). */
export function hasState(def: { state?: unknown; createState?: unknown }): boolean {
  return def.state !== undefined || typeof def.createState === "function";
}

/** What a value is, for an error message (never the value itself: it may be large or secret). */
function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return v.constructor?.name ? `a ${v.constructor.name}` : "an object";
  return `a ${typeof v}`;
}

function invalid(what: string, rule: string, got: unknown): AgentError {
  return new AgentError("actor.invalid_argument", `c.${what} must be ${rule} (got ${kindOf(got)})`, { argument: what });
}

/** A KV key or value: a string (UTF-8) or bytes. Anything else would be stored as something the caller did not mean. */
function checkBytes(v: unknown, what: string): string | Uint8Array {
  if (typeof v === "string" || v instanceof Uint8Array) return v;
  throw invalid(what, "a string or a Uint8Array", v);
}

/** `c.kv`: the backend's byte-level operations behind argument checks, plus the JSON conveniences. */
function contextKv(ops: KvBackend): ActorKv {
  // An argument check throws synchronously into an async API: reject instead, as the operation would.
  const guard = <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return fn();
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const kv: ActorKv = {
    get: (key) => guard(() => ops.get(checkBytes(key, "kv key"))),
    async getJson<T>(key: string | Uint8Array) {
      const v = await kv.get(key);
      return v === null ? null : (JSON.parse(Buffer.from(v).toString("utf8")) as T);
    },
    put: (key, value) => guard(() => ops.put(checkBytes(key, "kv key"), checkBytes(value, "kv value"))),
    putJson: (key, value) => kv.put(key, JSON.stringify(value)),
    delete: (key) => guard(() => ops.delete(checkBytes(key, "kv key"))),
    list: (prefix) => guard(() => ops.list(prefix === undefined ? undefined : checkBytes(prefix, "kv prefix"))),
  };
  return kv;
}

/** A KV value as RivetKit 2.2.1 takes it: a string (UTF-8), a Uint8Array or an ArrayBuffer. */
function rivetValue(v: unknown, type: unknown): string | Uint8Array {
  if (type === "text" && typeof v !== "string") throw invalid("kv value", "a string when type is text", v);
  if (type === "binary" && !(v instanceof Uint8Array)) throw invalid("kv value", "a Uint8Array when type is binary", v);
  if (type === "arrayBuffer" && !(v instanceof ArrayBuffer)) throw invalid("kv value", "an ArrayBuffer when type is arrayBuffer", v);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  return checkBytes(v, "kv value");
}

function rivetKey(k: unknown): string | Uint8Array {
  return checkBytes(k, "kv key");
}

const utf8 = new TextDecoder();

/** A stored value as RivetKit 2.2.1 returns it: text unless `type` says `binary` or `arrayBuffer`. */
function decodeRivetValue(v: Uint8Array, type: unknown): string | Uint8Array | ArrayBuffer {
  if (type === "binary") return v;
  if (type === "arrayBuffer") return v.slice().buffer;
  return utf8.decode(v);
}

const keyBytes = (k: string | Uint8Array) => (typeof k === "string" ? Buffer.from(k, "utf8") : Buffer.from(k.buffer, k.byteOffset, k.byteLength));

interface RivetKitListOptions {
  type?: "text" | "binary" | "arrayBuffer";
  keyType?: "text" | "binary";
  reverse?: boolean;
  limit?: number;
}

/**
 * `c.kv` as RivetKit 2.2.1's `ActorKv` (src/actor/instance/kv.ts): `get(key, {type})` returns
 * text unless asked for `binary`/`arrayBuffer`; `list(prefix, options)` and
 * `listRange(start, end, options)` return `[key, value]` pairs (keys as text unless
 * `keyType: "binary"`), in key order (`reverse`, `limit`); `deleteRange(start, end)` deletes the
 * half-open range; `getBatch`/`putBatch`/`deleteBatch`. `getJson`/`putJson` are kept as well.
 */
function rivetKitKv(ops: KvBackend) {
  const guard = <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return fn();
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const shape = (entries: Array<{ key: Uint8Array; value: Uint8Array }>, options?: RivetKitListOptions) => {
    let out = options?.reverse ? [...entries].reverse() : entries;
    if (options?.limit !== undefined && Number.isFinite(options.limit)) out = out.slice(0, Math.max(0, options.limit));
    return out.map(({ key, value }) => [options?.keyType === "binary" ? key : utf8.decode(key), decodeRivetValue(value, options?.type)] as const);
  };
  const inRange = async (start: unknown, end: unknown) => {
    const s = keyBytes(rivetKey(start));
    const e = keyBytes(rivetKey(end));
    const all = await ops.list();
    return all.filter(({ key }) => {
      const k = keyBytes(key);
      return Buffer.compare(k, s) >= 0 && Buffer.compare(k, e) < 0;
    });
  };
  const kv = {
    get: (key: unknown, options?: { type?: string }) =>
      guard(async () => {
        const v = await ops.get(rivetKey(key));
        return v === null ? null : decodeRivetValue(v, options?.type);
      }),
    getBatch: (keys: unknown[], options?: { type?: string }) => guard(() => Promise.all([...keys].map((k) => kv.get(k, options)))),
    async getJson<T>(key: string | Uint8Array): Promise<T | null> {
      const v = await ops.get(rivetKey(key));
      return v === null ? null : (JSON.parse(utf8.decode(v)) as T);
    },
    put: (key: unknown, value: unknown, options?: { type?: string }) => guard(() => ops.put(rivetKey(key), rivetValue(value, options?.type))),
    putBatch: (entries: Array<[unknown, unknown]>, options?: { type?: string }) =>
      guard(async () => {
        const checked = [...entries].map(([k, v]) => [rivetKey(k), rivetValue(v, options?.type)] as const);
        for (const [k, v] of checked) await ops.put(k, v);
      }),
    putJson: (key: string | Uint8Array, value: unknown) => kv.put(key, JSON.stringify(value)),
    delete: (key: unknown) => guard(() => ops.delete(rivetKey(key))),
    deleteBatch: (keys: unknown[]) =>
      guard(async () => {
        for (const k of [...keys].map(rivetKey)) await ops.delete(k);
      }),
    deleteRange: (start: unknown, end: unknown) =>
      guard(async () => {
        for (const { key } of await inRange(start, end)) await ops.delete(key);
      }),
    list: (prefix?: unknown, options?: RivetKitListOptions) =>
      guard(async () => shape(await ops.list(prefix === undefined ? undefined : checkBytes(prefix, "kv prefix")), options)),
    listRange: (start: unknown, end: unknown, options?: RivetKitListOptions) => guard(async () => shape(await inRange(start, end), options)),
  };
  return kv;
}

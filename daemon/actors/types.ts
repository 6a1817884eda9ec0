/**
 * The actor runtime's contract: definitions in the RivetKit shape, the context `c` an actor's
 * code sees, and the runtime interface the gateway, the RPC handlers and the agent runtime use.
 * The shapes follow RivetKit's, so an actor written for RivetKit and its clients work here
 * unchanged; the user-facing behaviour is in docs/actors.md and docs/actor-gateway.md.
 */

// ---------- records ----------

import type { ActorRecord, CrashPolicy } from "../../shared/protocol/actors.js";
import type { ActorConn, ConnTransport, ConnView } from "./instance/connections.js";

export type { ActorConn, ConnTransport, ConnView };

/** The actor record is declared once, in shared/ (the RPC surface shows it too). */
export type { ActorRecord, CrashPolicy };
export const CRASH_POLICIES: readonly CrashPolicy[] = ["restart", "sleep", "destroy"];

/** Named states derived from the markers, for UIs. */
export type ActorStateName = "starting" | "running" | "sleeping" | "crashed" | "destroyed";

// ---------- definitions ----------

export interface ActorOptions {
  /** Idle time before the actor sleeps (ms, default 30 000). */
  sleepTimeout?: number;
  /** Per-action timeout (ms, default 60 000). */
  actionTimeout?: number;
  /** Never sleep for idleness. */
  noSleep?: boolean;
}

export interface ActorDefinition<S = any, V = any, I = any> {
  state?: S;
  createState?: (c: ActorContext<S, V>, input: I) => S | Promise<S>;
  vars?: V;
  createVars?: (c: ActorContext<S, V>) => V | Promise<V>;
  actions: Record<string, (c: ActorContext<S, V>, ...args: any[]) => unknown>;
  onCreate?: (c: ActorContext<S, V>, input: I) => void | Promise<void>;
  onWake?: (c: ActorContext<S, V>) => void | Promise<void>;
  onSleep?: (c: ActorContext<S, V>) => void | Promise<void>;
  onDestroy?: (c: ActorContext<S, V>) => void | Promise<void>;
  onStateChange?: (c: ActorContext<S, V>, newState: S) => void;
  onRequest?: (c: ActorContext<S, V>, request: Request) => Response | Promise<Response>;
  /** A raw WebSocket at `/gateway/{id}/websocket/{path}` (the gateway holds the socket). */
  /** `c.request` is the upgrade and `c.conn` the socket's connection (RivetKit's); the third argument is kept for older actors. */
  onWebSocket?: (c: ActorContext<S, V>, websocket: any, options: { request: Request }) => void | Promise<void>;
  /** Connections (`handle.connect()`): a throw refuses the connection. */
  onBeforeConnect?: (c: ActorContext<S, V>, params: any) => void | Promise<void>;
  createConnState?: (c: ActorContext<S, V>, params: any) => unknown;
  connState?: unknown;
  onConnect?: (c: ActorContext<S, V>, conn: ConnView) => void | Promise<void>;
  onDisconnect?: (c: ActorContext<S, V>, conn: ConnView) => void | Promise<void>;
  /** A long-running loop started on wake; a rejection is a crash. */
  run?: (c: ActorContext<S, V>) => Promise<void>;
  /** A durable workflow started on wake; its history is recorded and replayable. */
  workflow?: (w: WorkflowContext<S, V>) => Promise<unknown>;
  options?: ActorOptions;
}

export interface ActorKv {
  get(key: string | Uint8Array): Promise<Uint8Array | null>;
  /** Convenience: the value decoded as UTF-8 JSON, or null. */
  getJson<T = unknown>(key: string | Uint8Array): Promise<T | null>;
  put(key: string | Uint8Array, value: string | Uint8Array): Promise<void>;
  putJson(key: string | Uint8Array, value: unknown): Promise<void>;
  delete(key: string | Uint8Array): Promise<void>;
  /** Entries whose key starts with `prefix`, in key order. */
  list(prefix?: string | Uint8Array): Promise<Array<{ key: Uint8Array; value: Uint8Array }>>;
}

export interface QueueMessage {
  id: number;
  name: string;
  body: unknown;
  createdAtMs: number;
  /** Marks the message done (removes it) and answers a waiting sender with `reply`. */
  complete(reply?: unknown): Promise<void>;
}

export interface ActorQueue {
  /** The next message (optionally only of `name`); waits until one arrives or the signal aborts. */
  /** `names` is RivetKit's spelling of `name` (a list), accepted too. */
  /** `completable: true` (RivetKit's): the next `next` throws until this message is completed. */
  next(options?: {
    name?: string | string[];
    names?: readonly string[];
    signal?: AbortSignal;
    timeout?: number;
    completable?: boolean;
  }): Promise<QueueMessage | undefined>;
  iter(options?: { name?: string | string[]; names?: readonly string[]; signal?: AbortSignal; completable?: boolean }): AsyncIterable<QueueMessage>;
  readonly size: number;
}

export interface ActorLog {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface ActorContext<S = any, V = any> {
  state: S;
  vars: V;
  readonly key: string[];
  readonly name: string;
  readonly actorId: string;
  readonly kv: ActorKv;
  readonly queue: ActorQueue;
  readonly log: ActorLog;
  /** Aborted when the actor sleeps or is destroyed. */
  readonly abortSignal: AbortSignal;
  broadcast(event: string, ...args: unknown[]): void;
  /** The live connections, by id. */
  readonly conns: Map<string, ConnView>;
  /** In an action called over a connection (and in onConnect, onDisconnect, onRequest, onWebSocket): that connection. */
  readonly conn?: ConnView;
  /** In onBeforeConnect, createConnState, onRequest and onWebSocket: the HTTP request (or upgrade) that made the connection. */
  readonly request?: Request;
  saveState(options?: { immediate?: boolean }): Promise<void>;
  sleep(): void;
  destroy(): void;
  readonly schedule: {
    after(ms: number, action: string, ...args: unknown[]): Promise<void>;
    at(timestampMs: number, action: string, ...args: unknown[]): Promise<void>;
  };
}

export interface WorkflowContext<S = any, V = any> extends ActorContext<S, V> {
  /** Runs `fn` once; its result is recorded, and a replay returns the recorded result. */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** A durable sleep: survives restarts (the wake time is recorded). */
  sleep(ms: number): Promise<void>;
  sleep(): void;
  /** Repeats `body` until it returns `{ break: value }`; each iteration's entries are recorded. */
  loop<T>(name: string, body: (w: WorkflowContext<S, V>) => Promise<{ break: T } | { continue: true } | void>): Promise<T>;
  /**
   * Runs every branch at once (each with its own context) and waits for all; the result maps
   * each branch name to its output. A branch's output is recorded when it finishes, so a replay
   * does not run a finished branch again. Rejects when any branch failed.
   */
  join<T extends Record<string, { run: (w: WorkflowContext<S, V>) => Promise<unknown> }>>(
    name: string,
    branches: T,
  ): Promise<{ [K in keyof T]: Awaited<ReturnType<T[K]["run"]>> }>;
  /**
   * Runs every branch at once; the first to complete wins, the others are cancelled (their
   * `abortSignal` aborts and their next entry stops them). The winner is recorded. Rejects when
   * every branch failed.
   */
  race<T>(name: string, branches: Array<{ name: string; run: (w: WorkflowContext<S, V>) => Promise<T> }>): Promise<{ winner: string; value: T }>;
  readonly queue: ActorQueue & {
    /** A durable receive: the message received is recorded in the history. */
    next(options?: { name?: string | string[]; signal?: AbortSignal; timeout?: number }): Promise<QueueMessage | undefined>;
  };
}

// ---------- the runtime, as its users see it ----------

export interface CreateActorRequest {
  namespace: string;
  name: string;
  /** Serialized key; `undefined`/`null` for POST without a key (a random one is made). */
  key?: string | null;
  runner_name_selector: string;
  crash_policy: CrashPolicy;
  /** Already decoded (the gateway decodes the base64-CBOR wire form). */
  input?: unknown;
  datacenter?: string | null;
}

export interface ListActorsQuery {
  namespace: string;
  actor_ids?: string[];
  name?: string;
  key?: string;
  /** Listing by name: at most this many (newest first), after `cursor` (a previous page's). */
  limit?: number;
  cursor?: string;
}

export interface InvokeOptions {
  /** Overrides the definition's actionTimeout. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Who is calling, recorded on the span. */
  source?: "gateway" | "inspector" | "rpc" | "internal" | "schedule";
  /** Connection params from `x-rivet-conn-params`, if any. */
  connParams?: unknown;
  /** The connection the call came over (`c.conn` in the action). */
  conn?: ActorConn;
  /**
   * A stateless HTTP call (the gateway's `action/{name}`): the request it came in, made only
   * when the actor has connection hooks, which then run around the call (`c.request` in them).
   */
  request?: () => Request;
}

export interface QueueStatus {
  size: number;
  maxSize: number;
  truncated: boolean;
  messages: Array<{ id: string; name: string; createdAtMs: number }>;
}

export interface ActorInspector {
  getState(): Promise<unknown>;
  /** The definition has `state` or `createState` (RivetKit's `isStateEnabled`). */
  isStateEnabled(): Promise<boolean>;
  /** Replaces the whole state and persists it before resolving. */
  setState(state: unknown): Promise<void>;
  connections(): Promise<Array<{ id: string; type: string; details: unknown }>>;
  rpcs(): Promise<string[]>;
  queue(limit: number): Promise<QueueStatus>;
  traces(query: { startMs: number; endMs: number; limit: number }): Promise<{ otlp: unknown; clamped: boolean }>;
  workflowHistory(): Promise<{ history: unknown; isWorkflowEnabled: boolean }>;
  replay(entryId?: string): Promise<{ history: unknown; isWorkflowEnabled: boolean }>;
  summary(): Promise<{
    state: unknown;
    connections: unknown[];
    rpcs: string[];
    queueSize: number;
    isStateEnabled: boolean;
    isDatabaseEnabled: boolean;
    isWorkflowEnabled: boolean;
    workflowHistory: unknown;
  }>;
}

export interface ActorModuleStatus {
  file: string;
  ok: boolean;
  error?: string;
  actors: string[];
  loadedAt: number;
}

export interface ActorRuntime {
  /** Register (or replace) a definition; `source` tells built-ins from user modules. */
  registerDefinition(name: string, definition: ActorDefinition, source?: "builtin" | "user"): void;
  unregisterDefinition(name: string): void;
  /** Whether a name's definition is built in or comes from a user module (undefined: none). */
  definitionSource?(name: string): "builtin" | "user" | undefined;
  definitionNames(): string[];
  hasDefinition(name: string): boolean;
  /** User modules and their load errors (for `agent actors list`). */
  moduleStatuses(): ActorModuleStatus[];

  getOrCreate(request: CreateActorRequest & { key: string }): Promise<{ actor: ActorRecord; created: boolean }>;
  create(request: CreateActorRequest): Promise<ActorRecord>;
  list(query: ListActorsQuery): ActorRecord[];
  /** The daemon reported ready: actors awake at the last stop are woken now, in batches. */
  daemonReady?(): void;
  /** `list` by name, one page: `cursor` is null on the last page. */
  listPage(query: ListActorsQuery & { name: string; limit: number }): { actors: ActorRecord[]; cursor: string | null };
  get(actorId: string): ActorRecord | undefined;
  destroy(actorId: string): Promise<ActorRecord>;
  kvGet(actorId: string, key: Uint8Array): Promise<Uint8Array | null>;

  /** Wakes the actor if it sleeps; rejects if it is destroyed or unknown. */
  ensureAwake(actorId: string): Promise<void>;
  action(actorId: string, name: string, args: unknown[], options?: InvokeOptions): Promise<unknown>;
  request(actorId: string, request: Request, options?: InvokeOptions): Promise<Response>;
  enqueue(
    actorId: string,
    name: string,
    body: unknown,
    options?: { wait?: boolean; timeoutMs?: number },
  ): Promise<{ status: "completed" | "timedOut"; response?: unknown; id: number }>;
  inspector(actorId: string): ActorInspector;
  /** A RivetKit connection: wakes the actor, runs onBeforeConnect/createConnState/onConnect. */
  connect?(actorId: string, params: unknown, transport: ConnTransport, request?: Request): Promise<ActorConn>;
  /** The connection's socket closed: onDisconnect runs. */
  disconnect?(actorId: string, conn: ActorConn): Promise<void>;
  /** A raw WebSocket for the actor's onWebSocket; resolves once the handler took it. */
  openWebSocket?(actorId: string, request: Request, websocket: RawWebSocket, params?: unknown): Promise<void>;

  /** Lifecycle and state changes, for RPC events and UIs. */
  onChange(
    listener: (event: { type: "record" | "state" | "broadcast"; actorId: string; record?: ActorRecord; event?: string; args?: unknown[] }) => void,
  ): () => void;

  start(): Promise<void>;
  /** Sleep every actor (persisting state) and stop timers. */
  stop(): Promise<void>;
}

/** The gateway's side of a raw WebSocket, as onWebSocket receives it (the `ws` library's socket). */
export interface RawWebSocket {
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): unknown;
  on(event: "close", listener: (code: number, reason: Buffer) => void): unknown;
  readonly readyState: number;
}

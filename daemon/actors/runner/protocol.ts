/**
 * The messages between the daemon and a runner thread (runner/runner-thread.ts), in one place. They
 * cross a thread boundary (structured clone): functions travel as callback ids (`{$cb}`), the
 * daemon's workflow contexts as handles (`{$h}`), errors as plain records.
 *
 * The actor's state lives in the worker while its code runs; every message the worker sends
 * about an actor carries the state's encoded text (`s`) when it changed since the last one the
 * daemon saw, so the daemon persists exactly what the code left, before it answers.
 */

import { AgentError } from "../../../shared/errors.js";
import { ActorStopped } from "../errors.js";

/** What the daemon learns about one actor export of a module. */
export interface ExportShape {
  name: string;
  actions: string[];
  /** Names of the definition's function members (hooks). */
  hooks: string[];
  /** A static `state` / `vars` / `connState` value (structured-cloned), when the definition has one. */
  state?: unknown;
  hasState: boolean;
  /** A static `connState`. */
  connState?: unknown;
  options?: { sleepTimeout?: number; actionTimeout?: number; noSleep?: boolean };
}

export interface WireError {
  message: string;
  name?: string;
  stack?: string;
  code?: string;
  public?: boolean;
  /** A public error's own group (RivetKit's ActorError has one); `user` when absent. */
  group?: string;
  metadata?: unknown;
  /** A public error's HTTP status (RivetKit's ActorError `statusCode`). */
  statusCode?: number;
  /** Set for the daemon's own errors (AgentError): their code is the whole `group.code`. */
  agent?: boolean;
}

/** A workflow context of the daemon, as the worker reaches it: its handle, method names and queue method names. */
export interface WireHandle {
  $h: number;
  m: string[];
  q: string[];
}

/** A queue message as it crosses (its `complete` stays with the daemon, reached by `queue.complete`). */
export interface WireMessage {
  id: number;
  name: string;
  body: unknown;
  createdAtMs: number;
}

/** What a connection operation (`conn` call) asks of the worker. */
export type ConnOp =
  | { kind: "open"; conn: string; params: unknown; state: unknown }
  | { kind: "close"; conn: string }
  | { kind: "action"; conn: string; name: string; args: unknown[]; queueSize: number }
  | { kind: "state"; conn: string }
  | { kind: "states" }
  | { kind: "wsOpen"; ws: string; request: { url: string; headers: [string, string][] }; conn?: string }
  | { kind: "wsMessage"; ws: string; data: string | Uint8Array }
  | { kind: "wsClosed"; ws: string; code?: number; reason?: string };

/**
 * The daemon's calls into the worker, by operation: what each carries (`p`) and what its
 * answer (`done.v`) is. Every call about an actor's code carries the queue's size, so
 * `c.queue.size` reads it synchronously in the worker.
 */
export interface CallOps {
  attach: { p: { name: string; key: string[]; slot: number; state: string | null }; r: void };
  /** `request`/`conn`: the hook's context is a connection's (`c.request`, `c.conn`), as RivetKit's. */
  hook: { p: { hook: string; args: unknown[]; queueSize: number; request?: WireRequestHead; conn?: string }; r: unknown };
  action: { p: { name: string; args: unknown[]; queueSize: number }; r: unknown };
  request: { p: WireRequest; r: WireResponse };
  workflow: { p: { w: WireHandle }; r: unknown };
  cb: { p: { cb: number; args: unknown[] }; r: unknown };
  conn: { p: ConnOp; r: unknown };
}
export type CallOp = keyof CallOps;
export type CallMessage = { [K in CallOp]: { t: "call"; id: number; a: string; op: K; p: CallOps[K]["p"] } }[CallOp];

/** The worker's requests for what the daemon keeps (KV, queue, schedule, saves, the workflow engine), by operation. */
export interface RpcOps {
  "kv.get": { p: { key: string | Uint8Array }; r: Uint8Array | null };
  "kv.put": { p: { key: string | Uint8Array; value: string | Uint8Array }; r: void };
  "kv.delete": { p: { key: string | Uint8Array }; r: void };
  "kv.list": { p: { prefix: string | Uint8Array | undefined }; r: Array<{ key: Uint8Array; value: Uint8Array }> };
  /** `wait`: the caller passed a signal; its abort comes as the `queueAbort` event with this id. */
  "queue.next": {
    p: { name?: string | string[]; names?: readonly string[]; timeout?: number; completable?: boolean; wait?: number };
    r: WireMessage | undefined;
  };
  "queue.complete": { p: { id: number; reply: unknown }; r: void };
  saveState: { p: null; r: void };
  "schedule.at": { p: { at: number; action: string; args: unknown[] }; r: void };
  /** A method `m` of the workflow context behind handle `h` (`queue.<name>` for its queue's). */
  h: { p: { h: number; m: string; args: unknown[] }; r: unknown };
}
export type RpcOp = keyof RpcOps;
export type RpcMessage = { [K in RpcOp]: { t: "rpc"; id: number; a: string; op: K; p: RpcOps[K]["p"]; s?: string } }[RpcOp];

/** What the worker tells the daemon about an actor without waiting for an answer, by operation. */
export interface EventOps {
  log: { level: "debug" | "info" | "warn" | "error"; msg: string; fields: unknown };
  broadcast: { event: string; args: unknown };
  sleep: null;
  destroy: null;
  connSend: { conn: string; event: string; args: unknown };
  connClose: { conn: string; reason?: string };
  wsSend: { ws: string; data: string | Uint8Array };
  wsClose: { ws: string; code?: number; reason?: string };
  /** The signal of a `queue.next` (its `wait`) aborted: the wait ends with `actor.aborted`. */
  queueAbort: { wait: number };
}
export type EventOp = keyof EventOps;
export type EventMessage = { [K in EventOp]: { t: "ev"; a: string; op: K; p: EventOps[K]; s?: string } }[EventOp];

export type ToWorker =
  | { t: "load"; url: string }
  | CallMessage
  | { t: "rpcDone"; id: number; ok: boolean; v?: unknown; e?: WireError }
  | { t: "detach"; a: string }
  | { t: "state"; a: string; text: string }
  | { t: "cancel"; sid: number };

export type FromWorker =
  | { t: "loaded"; exports: ExportShape[] }
  | { t: "loadFailed"; e: WireError }
  | { t: "done"; id: number; ok: boolean; v?: unknown; e?: WireError; s?: string }
  | RpcMessage
  | EventMessage
  | { t: "crash"; a: string; e: WireError; where: string }
  | { t: "uncaught"; e: WireError; where: string }
  /** A piece of a response body streamed out of onRequest (`d`), its end, or its failure (`e`). */
  | { t: "chunk"; sid: number; d?: Uint8Array; end?: boolean; e?: WireError };

/** Slots of the shared Int32Array: a heartbeat the watchdog reads, and who ran last. */
export const SHARED = {
  /** Incremented by the worker every HEARTBEAT_MS while its event loop runs. */
  tick: 0,
  /** The slot of the actor whose code the worker entered last (0 when it returned). */
  running: 1,
  /** The slot of the actor that called process.exit. */
  exiter: 2,
  /** Set (to the MB in use) when the worker ends itself for going over its memory limit (memory-guard.ts). */
  oom: 3,
  /** The worker's heap + external memory at its last heartbeat (MB). */
  memoryMb: 4,
  length: 5,
} as const;

export const HEARTBEAT_MS = 100;

/** A request without its body (`c.request` of a connection's hooks). */
export interface WireRequestHead {
  method: string;
  url: string;
  headers: [string, string][];
}

/** A serialized Request / Response (bodies buffered); `conn`: the connection the request is (`c.conn` in onRequest). */
export interface WireRequest extends WireRequestHead {
  body: ArrayBuffer | null;
  conn?: string;
}
export interface WireResponse {
  status: number;
  statusText: string;
  headers: [string, string][];
  /** The body follows as `chunk` messages of this stream id (null: no body). */
  stream: number | null;
}

export function toWireError(error: unknown): WireError {
  if (error instanceof Error) {
    const e = error as Error & { code?: unknown; public?: unknown; metadata?: unknown; group?: unknown; statusCode?: unknown };
    const out: WireError = { message: e.message, name: e.name, stack: e.stack };
    if (typeof e.code === "string") out.code = e.code;
    if (e.public === true) out.public = true;
    if (typeof e.group === "string") out.group = e.group;
    if (typeof e.statusCode === "number") out.statusCode = e.statusCode;
    if (e.metadata !== undefined) {
      try {
        out.metadata = structuredClone(e.metadata);
      } catch {}
    }
    if (e.name === "AgentError") out.agent = true;
    return out;
  }
  return { message: String(error) };
}

/**
 * An error that crossed the boundary (either way), rebuilt so the checks on this side work:
 * `ActorStopped` stays itself, the daemon's own errors (a full disk, say) stay AgentErrors when
 * the actor's code rethrows them, and a user error keeps its `public`, `code` and `metadata`.
 */
export function fromWire(e: WireError): Error {
  if (e.name === "ActorStopped") return new ActorStopped();
  if (e.agent && e.code) return AgentError.received(e.code, e.message, e.metadata as Record<string, unknown> | undefined);
  const err = new Error(e.message);
  if (e.name) err.name = e.name;
  if (e.stack) err.stack = e.stack;
  if (e.code !== undefined) Object.assign(err, { code: e.code });
  if (e.public) Object.assign(err, { public: true });
  if (e.group !== undefined) Object.assign(err, { group: e.group });
  if (e.statusCode !== undefined) Object.assign(err, { statusCode: e.statusCode });
  if (e.metadata !== undefined) Object.assign(err, { metadata: e.metadata });
  return err;
}

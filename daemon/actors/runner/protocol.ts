/**
 * The messages between the daemon and a runner worker (runner/worker.ts), in one place. They
 * cross a thread boundary (structured clone): functions travel as callback ids (`{$cb}`), the
 * daemon's workflow contexts as handles (`{$h}`), errors as plain records.
 *
 * The actor's state lives in the worker while its code runs; every message the worker sends
 * about an actor carries the state's encoded text (`s`) when it changed since the last one the
 * daemon saw, so the daemon persists exactly what the code left, before it answers.
 */

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
  metadata?: unknown;
  /** Set for the daemon's own errors (AgentError): their code is the whole `group.code`. */
  agent?: boolean;
}

export type ToWorker =
  | { t: "load"; url: string }
  | { t: "call"; id: number; a: string; op: CallOp; p: any }
  | { t: "rpcDone"; id: number; ok: boolean; v?: unknown; e?: WireError }
  | { t: "detach"; a: string }
  | { t: "state"; a: string; text: string }
  | { t: "cancel"; sid: number };

export type CallOp = "attach" | "hook" | "action" | "request" | "workflow" | "cb" | "conn";

export type FromWorker =
  | { t: "loaded"; exports: ExportShape[] }
  | { t: "loadFailed"; e: WireError }
  | { t: "done"; id: number; ok: boolean; v?: unknown; e?: WireError; s?: string }
  | { t: "rpc"; id: number; a: string; op: string; p: any; s?: string }
  | { t: "ev"; a: string; op: string; p: any; s?: string }
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

/** A serialized Request / Response (bodies buffered). */
export interface WireRequest {
  method: string;
  url: string;
  headers: [string, string][];
  body: ArrayBuffer | null;
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
    const e = error as Error & { code?: unknown; public?: unknown; metadata?: unknown; group?: unknown };
    const out: WireError = { message: e.message, name: e.name, stack: e.stack };
    if (typeof e.code === "string") out.code = e.code;
    if (e.public === true) out.public = true;
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

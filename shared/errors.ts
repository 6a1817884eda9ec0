/**
 * The one error type of the product. `code` is a stable machine code `group.code`
 * (for example `actor.not_found`); it crosses the socket and HTTP unchanged. Every code is
 * listed, with its exit code and HTTP status, in `error-codes.ts`. Subclasses exist only
 * where a catch needs to tell a kind apart (a tool failure, a pool failure); each carries a code.
 */
import type { ErrorCode } from "./error-codes.js";

export class AgentError extends Error {
  readonly code: ErrorCode;
  readonly metadata?: Record<string, unknown>;
  /** Expected errors are shown without a stack trace. */
  readonly expected: boolean;

  constructor(code: ErrorCode, message: string, metadata?: Record<string, unknown>, options?: { cause?: unknown; expected?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AgentError";
    this.code = code;
    this.metadata = metadata;
    this.expected = options?.expected ?? true;
  }

  /**
   * An error whose code crossed a process boundary (the daemon's socket, an HTTP reply, a worker
   * thread or child process, a recorded step): it was checked against the registry where it was
   * raised, so it is taken as it came.
   */
  static received(code: string, message: string, metadata?: Record<string, unknown>, options?: { cause?: unknown; expected?: boolean }): AgentError {
    return new AgentError(code as ErrorCode, message, metadata, options);
  }

  get group(): string {
    return this.code.split(".")[0] ?? "internal";
  }

  toJSON(): SerializedError {
    return { code: this.code, message: this.message, ...(this.metadata ? { metadata: this.metadata } : {}) };
  }
}

export interface SerializedError {
  code: string;
  message: string;
  metadata?: Record<string, unknown>;
}

/**
 * A failure a tool reports to the model as is (a missing file, an ambiguous patch): code
 * `tool.failed`; `reason` is the short code the model reads in the tool result (`not_found`).
 * Thrown by tool handlers and by the pool's tasks, where it becomes an `{ ok: false }` value.
 */
export class ToolFailure extends AgentError {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super("tool.failed", message, { reason });
    this.name = "ToolFailure";
    this.reason = reason;
  }
}

/**
 * The one place that decides whether something thrown by actor code is a user error meant for
 * the caller: any Error (or object) with `public: true`, as `UserError` from "agent" sets. It
 * becomes `<group>.<code>`: the thrower's own `group` when it has one (as RivetKit's ActorError
 * does, e.g. `connection.custom_error`), else `user` (default code `user_error`); anything else
 * is not public (null).
 */
export function publicUserError(error: unknown): AgentError | null {
  if (!error || typeof error !== "object" || (error as { public?: unknown }).public !== true) return null;
  const e = error as { message?: unknown; code?: unknown; metadata?: unknown; group?: unknown };
  const code = typeof e.code === "string" && e.code ? e.code : "user_error";
  const group = typeof e.group === "string" && /^[a-z][a-z0-9_]{0,63}$/.test(e.group) ? e.group : "user";
  const metadata = e.metadata === undefined ? undefined : isPlainRecord(e.metadata) ? e.metadata : { value: e.metadata };
  const out = new AgentError(`${group}.${code}` as `user.${string}`, typeof e.message === "string" ? e.message : String(e.message), metadata);
  // RivetKit's ActorError carries its HTTP status (`Forbidden` is a 403): a 4xx is kept.
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 499) userStatuses.set(out, status);
  return out;
}

const userStatuses = new WeakMap<AgentError, number>();

/** The HTTP status a public user error asked for (`statusCode`, a 4xx), if any; else the code's. */
export function userErrorStatus(error: AgentError): number | undefined {
  return userStatuses.get(error);
}

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Wrap anything thrown into an AgentError; unknown failures become `internal.error`. */
export function toAgentError(error: unknown): AgentError {
  if (error instanceof AgentError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AgentError("internal.error", message, undefined, { cause: error, expected: false });
}

/** JSON-RPC error codes used on the daemon socket. Application errors carry their `group.code` in `data`. */
export const RpcErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** An AgentError raised by a handler; `data` is its SerializedError. */
  ApplicationError: -32000,
  NotInitialized: -32002,
  ProtocolMismatch: -32003,
} as const;

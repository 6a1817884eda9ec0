/**
 * The one error type of the product. `code` is a stable machine code `group.code`
 * (for example `actor.not_found`); it crosses the socket and HTTP unchanged.
 */
export class AgentError extends Error {
  readonly code: string;
  readonly metadata?: Record<string, unknown>;
  /** Expected errors are shown without a stack trace. */
  readonly expected: boolean;

  constructor(code: string, message: string, metadata?: Record<string, unknown>, options?: { cause?: unknown; expected?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AgentError";
    this.code = code;
    this.metadata = metadata;
    this.expected = options?.expected ?? true;
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

export function isAgentError(error: unknown): error is AgentError {
  return error instanceof AgentError;
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

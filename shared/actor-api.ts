/**
 * What an actor module may import (`import { actor, UserError } from "agent"`). Nothing here is
 * required: a plain object with `actions` is an actor, and any Error with `public: true` is a
 * user error whose message, code and metadata reach the caller.
 */

/** An identity helper for typing an actor definition. */
export function actor<T extends { actions: Record<string, (...args: any[]) => unknown> }>(definition: T): T {
  return definition;
}

/** An error meant for the caller: reaches the client as `{group: "user", code, message, metadata}`. */
export class UserError extends Error {
  readonly public = true as const;
  readonly code: string;
  readonly metadata?: unknown;

  constructor(message: string, options?: { code?: string; metadata?: unknown }) {
    super(message);
    this.name = "UserError";
    this.code = options?.code ?? "user_error";
    this.metadata = options?.metadata;
  }
}

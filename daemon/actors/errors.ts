import { AgentError, publicUserError } from "../../shared/errors.js";
import type { Logger } from "../log/logger.js";

/**
 * What an actor's code throws, as the caller sees it. An AgentError passes unchanged (built-in
 * actors use them); an Error with `public: true` is a user error `user.<code>`; anything else
 * is logged with its detail and becomes a generic `internal.error`.
 */
export function toCallerError(error: unknown, log: Logger, context: Record<string, unknown>): AgentError {
  if (error instanceof AgentError) return error;
  const user = publicUserError(error);
  if (user) return user;
  log.error("actor code threw", { ...context, error });
  return new AgentError("internal.error", "internal error (details in the daemon log)", undefined, { cause: error, expected: false });
}

/**
 * An action's failure as its owner sees it. The local socket's user owns the actors, so an
 * action that threw shows what it threw (`actor.action_failed`) and where its stack is (the
 * actors log), where the gateway answers outsiders with the generic `internal.error`.
 */
export function forOwner(error: unknown, action: string, actorId: string): unknown {
  if (!(error instanceof AgentError) || error.code !== "internal.error" || error.cause === undefined) return error;
  const message = errorSummary(error.cause).message.slice(0, 2000) || "(no message)";
  return new AgentError(
    "actor.action_failed",
    `action ${action} of actor ${actorId.slice(0, 130)} threw: ${message}\n(the stack is in the actors log: agent logs --component actors)`,
    { actor_id: actorId.slice(0, 130), action },
  );
}

/** `actor.not_found`, the one place it is built (runtime, RPC and gateway). An id from a request is cut to a sane length. */
export function actorNotFound(actorId: string): AgentError {
  const id = actorId.slice(0, 130);
  return new AgentError("actor.not_found", `no actor with id ${id}`, { actor_id: id });
}

/** Thrown into aborted waits when an actor sleeps or is destroyed; never counted as a crash. */
export class ActorStopped extends Error {
  constructor() {
    // Control flow, made at every sleep: its stack would say nothing and costs a capture.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super("the actor stopped");
    Error.stackTraceLimit = limit;
    this.name = "ActorStopped";
  }
}

export function errorSummary(error: unknown): { message: string; code?: string } {
  if (error instanceof AgentError) return { message: error.message, code: error.code };
  if (error instanceof Error)
    return { message: error.message, ...(typeof (error as { code?: unknown }).code === "string" ? { code: (error as unknown as { code: string }).code } : {}) };
  return { message: String(error) };
}

/**
 * Constructors for the errors the gateway's routes throw. Every one is an `AgentError`; the
 * dispatcher (server.ts) turns it into a response through http-error.ts, the one place that
 * does so.
 */
import { AgentError } from "../../shared/errors.js";

/** 400 `api.bad_request`: a management call with a wrong parameter or body. */
export function badRequest(message: string, metadata?: Record<string, unknown>): AgentError {
  return new AgentError("api.bad_request", message, metadata);
}

/** 400 `request.invalid`: a malformed path, header or gateway body. */
export function invalidRequest(message: string): AgentError {
  return new AgentError("request.invalid", message);
}

/** 404 `route.not_found`. */
export function notFoundRoute(method: string, path: string): AgentError {
  return new AgentError("route.not_found", `no route for ${method} ${path.slice(0, 200)}`);
}

export { actorNotFound } from "../actors/api.js";

export function nameNotFound(name: string): AgentError {
  return new AgentError("actor.name_not_found", `no actor definition is named ${name.slice(0, 100)}`, { name: name.slice(0, 100) });
}

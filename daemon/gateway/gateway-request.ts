/** What the route modules need from the running gateway, and the actor lookup they share. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isBuiltinActorName } from "../actors/api.js";
import type { ActorRecord, ActorRuntime } from "../actors/api.js";
import type { Logger } from "../log/logger.js";
import type { InspectorAuthSettings } from "./auth.js";
import type { Encoding } from "../http/encoding.js";
import type { HeaderMap } from "../http/response.js";
import { actorNotFound } from "../http/request-errors.js";

export interface GatewayContext {
  /** The actor runtime; throws `internal.runtime_unavailable` when it is not running. */
  runtime(): ActorRuntime;
  /** The actor runtime, or undefined when it is not running. */
  runtimeIfRunning(): ActorRuntime | undefined;
  /** Current settings (they change on reload). */
  readonly maxBodyBytes: number;
  readonly inspectorAuth: InspectorAuthSettings;
  readonly log: Logger;
}

/** One request as the routes see it: parsed once by the server, passed along unchanged. */
export interface GatewayRequest {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** The path without the query. */
  path: string;
  /** The query with its leading `?`, or "". */
  search: string;
  /** The answer's encoding (`x-rivet-encoding`). */
  encoding: Encoding;
  cors: HeaderMap | null;
  /** The caller presented the gateway token: the product's own (internal) actors are visible. */
  trusted: boolean;
}

/**
 * The product's own actors (`session`, and every later built-in) are internal: over HTTP they
 * exist only for a caller with the gateway token. Internal by name: a built-in name (reserved,
 * so no user module can take it) or any definition a feature registered as built-in.
 */
export function isInternalActor(runtime: ActorRuntime, name: string): boolean {
  return isBuiltinActorName(name) || runtime.definitionSource?.(name) === "builtin";
}

/**
 * The live (not destroyed) actor with this id, or `actor.not_found`; an internal actor is
 * "not found" for an untrusted caller, the same answer as an id that never existed.
 */
export function requireActor(runtime: ActorRuntime, actorId: string, trusted: boolean): ActorRecord {
  const record = runtime.get(actorId);
  if (!record || record.destroy_ts !== null || (!trusted && isInternalActor(runtime, record.name))) throw actorNotFound(actorId);
  return record;
}

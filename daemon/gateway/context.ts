/** What the route modules need from the running gateway, and the actor lookup they share. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ActorRecord, ActorRuntime } from "../actors/types.js";
import type { Logger } from "../log/logger.js";
import type { InspectorAuthSettings } from "./auth.js";
import type { Encoding } from "./encoding.js";
import type { HeaderMap } from "./response.js";
import { actorNotFound } from "./request-errors.js";

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
}

/** The live (not destroyed) actor with this id, or `actor.not_found`. */
export function requireActor(runtime: ActorRuntime, actorId: string): ActorRecord {
  const record = runtime.get(actorId);
  if (!record || record.destroy_ts !== null) throw actorNotFound(actorId);
  return record;
}

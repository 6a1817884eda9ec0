/** What the route modules need from the running gateway, and the actor lookup they share. */
import type { ActorRecord, ActorRuntime } from "../actors/types.js";
import type { Logger } from "../log/logger.js";
import type { InspectorAuthSettings } from "./auth.js";
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

/** The live (not destroyed) actor with this id, or `actor.not_found`. */
export function requireActor(runtime: ActorRuntime, actorId: string): ActorRecord {
  const record = runtime.get(actorId);
  if (!record || record.destroy_ts !== null) throw actorNotFound(actorId);
  return record;
}

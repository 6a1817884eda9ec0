/**
 * What the actor runtime offers the features that define actors (sessions, the board, cron) and
 * its HTTP door (the gateway): the definition types, and the errors and names callers meet.
 */
export type * from "./types.js";
export { actorNotFound, ActorStopped } from "./errors.js";
export { isBuiltinActorName } from "./builtin-names.js";
export { builtinRefused } from "./feature/builtin-owners.js";

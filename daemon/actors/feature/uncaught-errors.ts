/**
 * The actors feature's claim on errors nothing caught (daemon/uncaught.ts): an error that comes
 * from user actor code fails that actor under its crash policy, and the daemon runs on.
 *
 * Attribution, first match wins:
 * 1. The async context the error was thrown in (or the rejected promise was made in) carries a
 *    user actor's id (runtime/user-code.ts): everything a user actor's code scheduled does.
 * 2. Its stack runs through a module the loader imported from `$AGENT_HOME/actors/` (module code
 *    that ran outside any actor, e.g. a timer set at import): every awake actor of that module's
 *    definitions fails; with none awake it is only logged.
 * Anything else is the daemon's own error.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Logger } from "../../log/logger.js";
import type { UncaughtClaim } from "../../uncaught.js";
import type { ActorRuntimeImpl } from "../runtime/runtime.js";
import { currentUserActor } from "../runtime/user-code.js";
import type { ActorModuleStatus } from "../types.js";

export function userActorErrorClaim(runtime: ActorRuntimeImpl, userActorsDir: string, modules: () => ActorModuleStatus[], log: Logger): UncaughtClaim {
  const prefix = `${pathToFileURL(userActorsDir).href}/`;
  return (error, kind) => {
    const where = kind === "exception" ? "uncaught exception" : "unhandled rejection";
    const actorId = currentUserActor();
    if (actorId !== undefined) {
      runtime.crashed(actorId, error, where);
      return true;
    }
    const file = userModuleInStack(error, prefix, userActorsDir);
    if (file === null) return false;
    const names = modules().find((m) => m.file === file)?.actors ?? [];
    const ids = names.flatMap((name) => runtime.awakeOf(name));
    log.error(`actor module code threw (${where}) outside any actor call`, { file, actors: ids, error });
    for (const id of ids) runtime.crashed(id, error, where);
    return true;
  };
}

/** The user module file a stack frame of `error` is in (the URL the loader imported, query cut off), or null. */
export function userModuleInStack(error: unknown, prefix: string, dir: string): string | null {
  const stack = error instanceof Error && typeof error.stack === "string" ? error.stack : "";
  let at = stack.indexOf(prefix);
  while (at >= 0) {
    const rest = stack.slice(at + prefix.length);
    const name = /^[^/?#:\s)]+/.exec(rest)?.[0];
    if (name) {
      try {
        return join(dir, decodeURIComponent(name));
      } catch {}
    }
    at = stack.indexOf(prefix, at + prefix.length);
  }
  return null;
}

/**
 * Which user actor a piece of running code belongs to. Every entry into a user actor's code
 * (hooks, actions, onRequest, run, workflow) runs in an async context carrying the actor's id,
 * and so does everything that code schedules (timers, promises, emitters it creates). An error
 * that escapes to the process (a throwing timer, an unhandled rejection) is then charged to that
 * actor (feature/uncaught-errors.ts). Built-in actors are daemon code and run without one, so
 * the context costs nothing until a user actor runs.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const current = new AsyncLocalStorage<string>();

/** Run `fn` as code of the user actor `actorId`. */
export function runAsUserActor<T>(actorId: string, fn: () => T): T {
  return current.run(actorId, fn);
}

/** The user actor whose code is running (or scheduled what is running), if any. */
export function currentUserActor(): string | undefined {
  return current.getStore();
}

/**
 * Names of the product's own actor definitions. They are reserved: a user module exporting one
 * is refused, so the name always means the built-in. The gateway treats their actors as
 * internal (reachable over HTTP only with the gateway token) from the moment the daemon starts,
 * before the feature that registers the definition has run. A new built-in adds its name here.
 */
export const BUILTIN_ACTOR_NAMES: ReadonlySet<string> = new Set(["session", "board"]);

export function isBuiltinActorName(name: string): boolean {
  return BUILTIN_ACTOR_NAMES.has(name);
}

import { AgentError } from "../../../shared/errors.js";
import { isBuiltinActorName } from "../builtin-names.js";
import type { ActorRecord } from "../types.js";

/**
 * The product's own actors (a kanban board, a profile's cron table, a chat session) hold data
 * that their feature manages: destroying one through `actors.destroy` would silently wipe a
 * board's tasks or every cron job of a profile. The RPC refuses and names the command that owns
 * the data, so the CLI and the TUI (which only relay the refusal) cannot get it wrong.
 */
export function isBuiltinActor(name: string, source?: (name: string) => "builtin" | "user" | undefined): boolean {
  return isBuiltinActorName(name) || source?.(name) === "builtin";
}

/** The command that manages what a built-in actor holds. */
export function owningCommand(record: Pick<ActorRecord, "name" | "key">): string {
  switch (record.name) {
    case "board":
      return `agent kanban boards delete ${record.key} (or agent kanban archive <id>... --board ${record.key} for some of its tasks)`;
    case "cron":
      return `agent cron list -p ${record.key} / agent cron remove <id>`;
    case "session":
      return `agent sessions delete ${record.key}`;
    default:
      return "the command of the feature that created it";
  }
}

/** The refusal of `actors.destroy` (and of `actors.call`: a cron actor's `add` would bypass the cron service). */
export function builtinRefused(record: Pick<ActorRecord, "actor_id" | "name" | "key">, op: "destroyed" | "called" = "destroyed"): AgentError {
  const what =
    record.name === "board"
      ? `it holds every task of the kanban board "${record.key}"`
      : record.name === "cron"
        ? `it holds every cron job of the profile "${record.key}"`
        : record.name === "session"
          ? `it holds the chat session ${record.key}`
          : "its data belongs to a feature of the product";
  return new AgentError(
    "actor.builtin_refused",
    `${record.actor_id} is a built-in ${record.name} actor and is not ${op} this way: ${what}. Use ${owningCommand(record)}`,
    { actor_id: record.actor_id, name: record.name, key: record.key },
  );
}

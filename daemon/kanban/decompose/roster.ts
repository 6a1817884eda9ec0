import type { DaemonContext } from "../../context.js";
import type { RosterEntry } from "./prompt.js";

/** The profiles a decomposed task's children can go to, with the descriptions that route them. */
export function profileRoster(ctx: DaemonContext): RosterEntry[] {
  return ctx.services
    .get("profiles")
    .list()
    .map((p) => ({ name: p.name, description: p.description }));
}

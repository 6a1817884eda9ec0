import type { DaemonContext } from "../../context.js";
import type { RosterEntry } from "./prompt.js";

/** The profiles a decomposed task's children can go to, with the descriptions that route them. */
export function profileRoster(ctx: DaemonContext): RosterEntry[] {
  const profiles = ctx.services.find("profiles");
  if (!profiles) return [{ name: "default", description: null }];
  return profiles.list().map((p) => ({ name: p.name, description: p.description }));
}

import type { DaemonContext } from "../../context.js";
import type { RosterEntry } from "./prompt.js";

/** The profiles a decomposed task's children can go to, with the descriptions that route them. */
export function profileRoster(ctx: DaemonContext): RosterEntry[] {
  const profiles = ctx.services.find("profiles");
  if (!profiles) return [{ name: "default", description: null }];
  return profiles.list().map((p) => ({ name: p.name, description: p.description }));
}

/**
 * `POST /api/plugins/kanban/profiles/<name>/describe-auto`: the model (auxiliary.profile_describer
 * slot) writes the profile's description; one the user wrote is kept unless `overwrite`.
 */
export function describeProfileAuto(ctx: DaemonContext, name: string, options: { overwrite?: boolean } = {}) {
  return ctx.services.get("profiles").describeAuto(name, options.overwrite ?? false);
}

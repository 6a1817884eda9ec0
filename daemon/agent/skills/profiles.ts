import { existsSync } from "node:fs";
import { AgentError } from "../../../shared/errors.js";
import { DEFAULT_PROFILE, profilePaths, type ProfilePaths } from "../../../shared/paths.js";

const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The folders of the profile a skills, bundles or memory call names (default: the home itself).
 * The name is checked here too, since it becomes a path; a profile that has no folder is refused
 * rather than created, so a typo never makes a profile.
 */
export function existingProfile(home: string, name: string | undefined, group: "skills" | "memory"): ProfilePaths {
  const profile = name ?? DEFAULT_PROFILE;
  if (profile !== DEFAULT_PROFILE && !PROFILE_NAME.test(profile)) {
    throw new AgentError(`${group}.invalid_profile`, `invalid profile name ${JSON.stringify(profile.slice(0, 80))}: names match [a-z0-9][a-z0-9_-]{0,63}`);
  }
  const paths = profilePaths(home, profile);
  if (!existsSync(paths.dir)) throw new AgentError(`${group}.profile_not_found`, `no profile "${profile}" (no folder ${paths.dir})`);
  return paths;
}

/** Like existingProfile, for the turn's context: null instead of an error (a session keeps working). */
export function profileOrNull(home: string, name: string | undefined): ProfilePaths | null {
  try {
    return existingProfile(home, name, "skills");
  } catch {
    return null;
  }
}

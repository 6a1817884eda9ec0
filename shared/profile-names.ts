import { AgentError } from "./errors.js";
import { DEFAULT_PROFILE } from "./paths.js";

/** Profile names: a lower-case letter or digit, then up to 63 of letters, digits, `_` and `-`. */
export const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Never a profile name: they collide with the command itself or with system accounts. */
const ALWAYS_RESERVED = ["agent", "test", "tmp", "root", "sudo"];

/**
 * What a name is checked for. `use` names an existing profile (default allowed); `new` names a
 * profile about to be made or removed (create, install, import, rename, delete), where
 * `default` is refused too: it is the home itself.
 */
export type NameUse = "use" | "new";

/** The name, or a clear error (exit 1) saying what is wrong with it. */
export function checkProfileName(name: string, use: NameUse, what = "profile name"): string {
  if (!PROFILE_NAME.test(name)) {
    const shown = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
    throw new AgentError(
      "profile.invalid_name",
      `invalid ${what} ${shown}: use 1 to 64 characters, lower-case letters, digits, "_" and "-", starting with a letter or digit`,
      { name: name.slice(0, 200) },
    );
  }
  if (ALWAYS_RESERVED.includes(name) || (use === "new" && name === DEFAULT_PROFILE)) {
    const why = name === DEFAULT_PROFILE ? "it is the home itself" : "it is reserved";
    throw new AgentError(
      "profile.reserved_name",
      `the ${what} "${name}" cannot be used: ${why} (reserved: ${[...ALWAYS_RESERVED, DEFAULT_PROFILE].join(", ")})`,
      { name },
    );
  }
  return name;
}

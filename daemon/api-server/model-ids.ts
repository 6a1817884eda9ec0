/**
 * The model ids the API server advertises: each profile is a model whose id is its name; the
 * default profile's id is `agent` (a reserved profile name, so no profile can take it).
 * API_SERVER_MODEL_NAME overrides either: in the home's environment or .env it names the
 * default profile; in a profile's own .env (a value other than the home's) it names that profile.
 */
import { envValue } from "../../shared/config/env.js";

export const DEFAULT_MODEL_ID = "agent";

export interface ModelIdEntry {
  id: string;
  profile: string;
}

export interface ModelIdSources {
  /** Every profile, `default` first. */
  profiles(): string[];
  /** The home's environment (the daemon's own, `.env` filling the gaps). */
  homeEnv(): NodeJS.ProcessEnv;
  /** A profile's environment (its .env over the home's). */
  profileEnv(profile: string): Promise<NodeJS.ProcessEnv>;
}

export async function modelIds(sources: ModelIdSources): Promise<ModelIdEntry[]> {
  const homeName = envValue("API_SERVER_MODEL_NAME", sources.homeEnv())?.trim() || undefined;
  const out: ModelIdEntry[] = [];
  const taken = new Set<string>();
  for (const profile of sources.profiles()) {
    let id: string;
    if (profile === "default") id = homeName ?? DEFAULT_MODEL_ID;
    else {
      const own = envValue("API_SERVER_MODEL_NAME", await sources.profileEnv(profile).catch(() => ({}) as NodeJS.ProcessEnv))?.trim();
      id = own && own !== homeName ? own : profile;
    }
    // Two profiles naming themselves alike: the first keeps the id, the other is served under its name.
    if (taken.has(id)) id = profile;
    taken.add(id);
    out.push({ id, profile });
  }
  return out;
}

/** The profile a request's `model` names: an advertised id, else a profile's own name; empty means the default profile. */
export function profileForModel(entries: readonly ModelIdEntry[], model: string | undefined): string | undefined {
  if (!model) return "default";
  return entries.find((e) => e.id === model)?.profile ?? entries.find((e) => e.profile === model)?.profile;
}

import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** Unix socket paths longer than this fail to bind on Linux (sun_path is 108 bytes with the NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/** Resolve AGENT_HOME (default `~/.agent`) from an environment. */
export function resolveHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.AGENT_HOME?.trim();
  return resolve(fromEnv ? fromEnv : join(env.HOME?.trim() || homedir(), ".agent"));
}

/** Every path under a home, defined once. */
export function homePaths(home: string) {
  return {
    home,
    socket: join(home, "daemon.sock"),
    lock: join(home, "daemon.lock"),
    config: join(home, "config.yaml"),
    env: join(home, ".env"),
    logs: join(home, "logs"),
    /** User actor modules (`*.js`, `*.mjs`). */
    userActors: join(home, "actors"),
    /** Durable data written by the daemon alone. */
    data: join(home, "data"),
    actorData: join(home, "data", "actors"),
    snapshots: join(home, "snapshots"),
    profiles: join(home, "profiles"),
    sessions: join(home, "sessions"),
    /** Language servers installed by `agent lsp install` (npm --prefix). */
    lsp: join(home, "lsp"),
  } as const;
}

export type HomePaths = ReturnType<typeof homePaths>;

/** The profile a home is itself. Every other profile is a folder under `profiles/`. */
export const DEFAULT_PROFILE = "default";

/**
 * Every path of one profile. `default` is the home itself; another profile is
 * `$AGENT_HOME/profiles/<name>/`, whose config.yaml and .env layer over the home's. The name must
 * already be validated (profile names are `[a-z0-9][a-z0-9_-]{0,63}`).
 */
export function profilePaths(home: string, name: string = DEFAULT_PROFILE) {
  const dir = name === DEFAULT_PROFILE ? home : join(home, "profiles", name);
  return {
    name,
    dir,
    config: join(dir, "config.yaml"),
    env: join(dir, ".env"),
    /** The profile's persona, loaded into the system prompt. */
    soul: join(dir, "SOUL.md"),
    /** `profile.yaml`: description, description_auto. */
    meta: join(dir, "profile.yaml"),
    /** `distribution.yaml` when the profile was installed from a distribution. */
    manifest: join(dir, "distribution.yaml"),
    skills: join(dir, "skills"),
    memories: join(dir, "memories"),
    sessions: join(dir, "sessions"),
    cron: join(dir, "cron"),
  } as const;
}

export type ProfilePaths = ReturnType<typeof profilePaths>;

export function logFile(home: string, component: string): string {
  return join(home, "logs", `${component}.log`);
}

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

export function logFile(home: string, component: string): string {
  return join(home, "logs", `${component}.log`);
}

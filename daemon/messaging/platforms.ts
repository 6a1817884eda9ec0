import type { AdapterFactory } from "./adapter.js";
import { teamsWanted } from "./teams/teams-settings.js";

/**
 * The platform adapters the channel layer can start, by config section name. Each is loaded
 * lazily (only when a profile configures it). Add a platform with one line.
 */
export const PLATFORMS: Record<string, () => Promise<AdapterFactory>> = {
  telegram: () => import("./telegram/telegram-adapter.js").then((m) => m.telegramFactory),
  line: () => import("./line/line-adapter.js").then((m) => m.lineFactory),
  teams: () => import("./teams/teams-adapter.js").then((m) => m.teamsFactory),
  discord: () => import("./discord/discord-adapter.js").then((m) => m.discordFactory),
  matrix: () => import("./matrix/matrix-adapter.js").then((m) => m.matrixFactory),
};

/**
 * Platforms a profile's environment starts without `<platform>.enabled` in its config (the
 * spec's names are environment variables): a cheap check, run before the adapter is loaded.
 */
export const STARTED_BY_ENV: Record<string, (env: NodeJS.ProcessEnv) => boolean> = {
  teams: teamsWanted,
};

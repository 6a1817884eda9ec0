import type { AdapterFactory } from "./adapter.js";

/**
 * The platform adapters the channel layer can start, by config section name. Each is loaded
 * lazily (only when a profile configures it). Add a platform with one line.
 */
export const PLATFORMS: Record<string, () => Promise<AdapterFactory>> = {
  telegram: () => import("./telegram/telegram-adapter.js").then((m) => m.telegramFactory),
  line: () => import("./line/line-adapter.js").then((m) => m.lineFactory),
  discord: () => import("./discord/discord-adapter.js").then((m) => m.discordFactory),
  matrix: () => import("./matrix/matrix-adapter.js").then((m) => m.matrixFactory),
};

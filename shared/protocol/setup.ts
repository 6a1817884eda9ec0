import { z } from "zod";
import { rpc } from "./define.js";

/** One provider choice offered by `agent setup` and the TUI's set-up form. */
export interface SetupPreset {
  id: string;
  label: string;
  /** The config name written under `providers`. */
  name: string;
  /** Empty for "any OpenAI-compatible URL" (asked for). */
  baseUrl: string;
  /** The `.env` variable holding the key; null when the endpoint takes none. */
  keyEnv: string | null;
  needsKey: boolean;
}

/** What is configured now (never the key itself). */
export interface SetupCurrent {
  configured: boolean;
  provider: string | null;
  model: string | null;
  baseUrl: string | null;
  keyEnv: string | null;
  keySet: boolean;
  problem: string | null;
}

/** The endpoint to talk to: the key is either given now or read from the daemon's env (`.env`). */
const endpoint = {
  baseUrl: z.string().min(1).max(2048),
  apiKey: z.string().max(4096).optional(),
  apiKeyEnv: z.string().max(128).optional(),
};

/** RPC methods of guided set-up: the daemon writes config.yaml and .env, the clients only ask. */
export const setupMethods = {
  /** The presets and the current setting. */
  "setup.status": rpc<{ presets: SetupPreset[]; current: SetupCurrent; configFile: string; envFile: string }>()(() => z.object({}).strict()),
  /** The models the endpoint lists (`GET <base_url>/models`), sorted. */
  "setup.models": rpc<{ baseUrl: string; models: string[] }>()(() => z.object({ ...endpoint }).strict()),
  /** A tiny chat completion against the endpoint and model. */
  "setup.test": rpc<{ ok: true; model: string; reply: string; ms: number }>()(() => z.object({ ...endpoint, model: z.string().min(1).max(256) }).strict()),
  /**
   * Test (unless `test: false`), then write `providers.<name>` and `model.provider` to config.yaml
   * and the key to `.env` (0600), and reload. A configured home needs `replace: true`. On any
   * error nothing changes.
   */
  "setup.apply": rpc<{
    provider: string;
    model: string;
    baseUrl: string;
    keyEnv: string | null;
    keyStored: boolean;
    tested: { reply: string; ms: number } | null;
    configFile: string;
    envFile: string;
    replaced: SetupCurrent | null;
    removed: string[];
  }>()(() =>
    z
      .object({
        ...endpoint,
        name: z.string().min(1).max(64),
        model: z.string().min(1).max(256),
        test: z.boolean().default(true),
        replace: z.boolean().default(false),
      })
      .strict(),
  ),
};

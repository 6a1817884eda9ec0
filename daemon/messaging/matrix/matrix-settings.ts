/**
 * The Matrix adapter's settings: the `matrix` section of config.yaml, with the environment
 * (MATRIX_*, through the one env table) winning. docs/messaging.md#matrix lists them. No I/O.
 */
import { envValue } from "../../../shared/config/env.js";
import { AgentError } from "../../../shared/errors.js";

export interface MatrixSettings {
  homeserver: string;
  /** Empty: asked of the homeserver (whoami). */
  userId: string;
  deviceId: string;
  accessToken: string;
  requireMention: boolean;
  autoThread: boolean;
  dmMentionThreads: boolean;
  recoveryKey: string | null;
}

const str = (v: unknown, d = "") => (typeof v === "string" ? v : d);

function flag(name: "MATRIX_REQUIRE_MENTION" | "MATRIX_AUTO_THREAD" | "MATRIX_DM_MENTION_THREADS", env: NodeJS.ProcessEnv, fallback: boolean): boolean {
  const raw = envValue(name, env)?.trim().toLowerCase();
  if (!raw) return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new AgentError("config.invalid_value", `${name} must be true or false, not ${JSON.stringify(raw.slice(0, 40))}`);
}

export function matrixToken(config: Record<string, unknown>, env: NodeJS.ProcessEnv): string | null {
  const t = env[str(config.token_env, "MATRIX_ACCESS_TOKEN")]?.trim();
  return t ? t : null;
}

export function matrixSettings(config: Record<string, unknown>, env: NodeJS.ProcessEnv): MatrixSettings {
  const homeserver = (envValue("MATRIX_HOMESERVER", env)?.trim() || str(config.homeserver)).replace(/\/+$/, "");
  const accessToken = matrixToken(config, env) ?? "";
  const missing = [!homeserver && "MATRIX_HOMESERVER (or matrix.homeserver)", !accessToken && str(config.token_env, "MATRIX_ACCESS_TOKEN")].filter(Boolean);
  if (missing.length)
    throw new AgentError("config.invalid_value", `matrix is enabled but ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not set`);
  let parsed: URL;
  try {
    parsed = new URL(homeserver);
  } catch {
    throw new AgentError("config.invalid_value", `MATRIX_HOMESERVER is not a URL: ${homeserver.slice(0, 200)}`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new AgentError("config.invalid_value", "MATRIX_HOMESERVER must be an https URL");
  return {
    homeserver,
    userId: envValue("MATRIX_USER_ID", env)?.trim() || str(config.user_id),
    deviceId: envValue("MATRIX_DEVICE_ID", env)?.trim() || str(config.device_id),
    accessToken,
    requireMention: flag("MATRIX_REQUIRE_MENTION", env, config.require_mention !== false),
    autoThread: flag("MATRIX_AUTO_THREAD", env, config.auto_thread !== false),
    dmMentionThreads: flag("MATRIX_DM_MENTION_THREADS", env, config.dm_mention_threads === true),
    recoveryKey: envValue("MATRIX_RECOVERY_KEY", env)?.trim() || null,
  };
}

/** Where the bot answers a message, or null when it does not (a room message without a mention). */
export interface RouteInput {
  dm: boolean;
  mentioned: boolean;
  /** The thread root, when the message is in a thread. */
  threadRoot: string | null;
  /** True when the bot has already answered in that thread. */
  knownThread: boolean;
  eventId: string;
}

/** The thread (root event id) an answer goes to, `null` for the room itself; `undefined`: no answer. */
export function route(s: Pick<MatrixSettings, "requireMention" | "autoThread" | "dmMentionThreads">, m: RouteInput): string | null | undefined {
  if (m.dm) {
    if (m.threadRoot) return m.threadRoot;
    return s.dmMentionThreads && m.mentioned ? m.eventId : null;
  }
  if (s.requireMention && !m.mentioned && !(m.threadRoot && m.knownThread)) return undefined;
  if (m.threadRoot) return m.threadRoot;
  return s.autoThread ? m.eventId : null;
}

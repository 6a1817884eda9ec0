/**
 * The LINE adapter's settings, read from the daemon's environment (its own, with `.env` filling
 * the gaps) through the one env table (shared/config/env.ts). docs/messaging.md#line lists them.
 */
import { envFlag, envNumber, envValue } from "../../../shared/config/env.js";
import { AgentError } from "../../../shared/errors.js";

export const DEFAULT_SLOW_RESPONSE_SECONDS = 45;
export const DEFAULT_INTERRUPTED_TEXT = "The answer was interrupted before it finished (the run was cancelled or the agent restarted). Please ask again.";
export const LINE_API_BASE_URL = "https://api.line.me";

export interface LineSettings {
  channelSecret: string;
  channelAccessToken: string;
  allowedUsers: ReadonlySet<string>;
  allowedGroups: ReadonlySet<string>;
  allowedRooms: ReadonlySet<string>;
  allowAll: boolean;
  /** `https://bot.example.com` (no trailing slash), or null: media URLs use the listener's own URL. */
  publicUrl: string | null;
  /** Own listener port, or null: mounted on the gateway under `/line/`. */
  port: number | null;
  host: string;
  /** Milliseconds; 0 disables the postback cache. */
  slowResponseMs: number;
  interruptedText: string;
  apiBaseUrl: string;
}

function idList(raw: string | undefined): Set<string> {
  return new Set(
    (raw ?? "")
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/** True when the environment holds both of the channel's credentials (the secret and the access token). */
export function lineConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(envValue("LINE_CHANNEL_SECRET", env)?.trim() && envValue("LINE_CHANNEL_ACCESS_TOKEN", env)?.trim());
}

/** The allowlists and the escape hatch from the environment (no credentials needed). */
export function lineAllowLists(env: NodeJS.ProcessEnv): Pick<LineSettings, "allowedUsers" | "allowedGroups" | "allowedRooms" | "allowAll"> {
  return {
    allowedUsers: idList(envValue("LINE_ALLOWED_USERS", env)),
    allowedGroups: idList(envValue("LINE_ALLOWED_GROUPS", env)),
    allowedRooms: idList(envValue("LINE_ALLOWED_ROOMS", env)),
    allowAll: envFlag("LINE_ALLOW_ALL_USERS", env),
  };
}

export function lineSettings(env: NodeJS.ProcessEnv): LineSettings {
  const channelSecret = envValue("LINE_CHANNEL_SECRET", env)?.trim() ?? "";
  const channelAccessToken = envValue("LINE_CHANNEL_ACCESS_TOKEN", env)?.trim() ?? "";
  const missing = [!channelSecret && "LINE_CHANNEL_SECRET", !channelAccessToken && "LINE_CHANNEL_ACCESS_TOKEN"].filter(Boolean);
  if (missing.length > 0) {
    throw new AgentError("config.invalid_value", `LINE is half configured: set ${missing.join(" and ")} (in $AGENT_HOME/.env) or remove the other`, {
      missing,
    });
  }
  const publicRaw = envValue("LINE_PUBLIC_URL", env)?.trim();
  let publicUrl: string | null = null;
  if (publicRaw) {
    let parsed: URL;
    try {
      parsed = new URL(publicRaw);
    } catch {
      throw new AgentError("config.invalid_value", `LINE_PUBLIC_URL is not a URL: ${publicRaw.slice(0, 200)}`);
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new AgentError("config.invalid_value", "LINE_PUBLIC_URL must be an https URL");
    publicUrl = `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
  }
  const portRaw = envValue("LINE_WEBHOOK_PORT", env)?.trim();
  const port = portRaw ? envNumber("LINE_WEBHOOK_PORT", Number.NaN, (n) => Number.isInteger(n) && n >= 0 && n < 65536, env) : null;
  if (port !== null && Number.isNaN(port)) throw new AgentError("config.invalid_value", `LINE_WEBHOOK_PORT is not a port number: ${portRaw}`);
  return {
    channelSecret,
    channelAccessToken,
    ...lineAllowLists(env),
    publicUrl,
    port,
    host: envValue("LINE_WEBHOOK_HOST", env)?.trim() || "127.0.0.1",
    slowResponseMs: envNumber("LINE_SLOW_RESPONSE_THRESHOLD", DEFAULT_SLOW_RESPONSE_SECONDS, (n) => n >= 0, env) * 1000,
    interruptedText: envValue("LINE_INTERRUPTED_TEXT", env)?.trim() || DEFAULT_INTERRUPTED_TEXT,
    apiBaseUrl: envValue("LINE_API_BASE_URL", env)?.trim() || LINE_API_BASE_URL,
  };
}

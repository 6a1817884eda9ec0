/**
 * Teams' settings, read from the profile's environment (the process's, `.env` filling the gaps)
 * through the one env table (shared/config/env.ts). docs/messaging.md#teams lists them.
 *
 * Two parts, each optional: the meeting-summary delivery (`TEAMS_DELIVERY_MODE`) and the Graph
 * change-notification listener (`MSGRAPH_WEBHOOK_ENABLED`). Setting either starts the Teams
 * adapter; a variable the chosen part needs and lacks is named at start.
 */
import { envFlag, envValue } from "../../../shared/config/env.js";
import { AgentError } from "../../../shared/errors.js";

export const GRAPH_BASE_URL = "https://graph.microsoft.com";

export type TeamsDelivery =
  | { mode: "graph"; token: string; baseUrl: string; target: { kind: "channel"; teamId: string; channelId: string } | { kind: "chat"; chatId: string } }
  | { mode: "incoming_webhook"; url: string };

export interface ListenerSettings {
  port: number;
  host: string;
  clientState: string;
  /** Patterns (`*` wildcards; an entry also matches what lies under it); empty: every resource. */
  acceptedResources: string[];
  cidrs: string[];
}

export interface TeamsSettings {
  delivery: TeamsDelivery | null;
  listener: ListenerSettings | null;
  /** The Graph access for fetching transcripts (the same token and root as graph delivery). */
  graph: { token: string; baseUrl: string } | null;
}

const get = (name: Parameters<typeof envValue>[0], env: NodeJS.ProcessEnv) => envValue(name, env)?.trim() ?? "";
const list = (raw: string) =>
  raw
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** True when the environment asks for Teams at all (the cheap check the channel layer runs per profile). */
export function teamsWanted(env: NodeJS.ProcessEnv): boolean {
  return get("TEAMS_DELIVERY_MODE", env) !== "" || envFlag("MSGRAPH_WEBHOOK_ENABLED", env);
}

function missing(names: string[], what: string): AgentError {
  return new AgentError("teams.not_configured", `${what} needs ${names.join(", ")} (set in $AGENT_HOME/.env); see docs/messaging.md#teams`, {
    missing: names,
  });
}

/** A URL a secret may be sent to: https, or http to this machine only (a local fake). */
function checkedUrl(raw: string, name: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AgentError("config.invalid_value", `${name} is not a URL`);
  }
  const local = u.hostname === "127.0.0.1" || u.hostname === "localhost" || u.hostname === "[::1]";
  if (u.protocol !== "https:" && !(u.protocol === "http:" && local)) throw new AgentError("config.invalid_value", `${name} must be an https URL`);
  return u;
}

/** Reads and checks everything; throws an AgentError naming each missing or malformed variable. */
export function teamsSettings(env: NodeJS.ProcessEnv): TeamsSettings {
  const token = get("TEAMS_GRAPH_ACCESS_TOKEN", env);
  const baseRaw = get("TEAMS_GRAPH_BASE_URL", env) || GRAPH_BASE_URL;
  const baseUrl = `${checkedUrl(baseRaw, "TEAMS_GRAPH_BASE_URL").href.replace(/\/+$/, "")}/`;
  let delivery: TeamsDelivery | null = null;
  const mode = get("TEAMS_DELIVERY_MODE", env);
  if (mode === "graph") {
    const teamId = get("TEAMS_TEAM_ID", env);
    const channelId = get("TEAMS_CHANNEL_ID", env);
    const chatId = get("TEAMS_CHAT_ID", env);
    const need: string[] = [];
    if (!token) need.push("TEAMS_GRAPH_ACCESS_TOKEN");
    if (!chatId) {
      if (!teamId && !channelId) need.push("TEAMS_TEAM_ID and TEAMS_CHANNEL_ID (a channel) or TEAMS_CHAT_ID (a chat)");
      else if (!teamId) need.push("TEAMS_TEAM_ID");
      else if (!channelId) need.push("TEAMS_CHANNEL_ID");
    }
    if (need.length) throw missing(need, "TEAMS_DELIVERY_MODE=graph");
    delivery = {
      mode: "graph",
      token,
      baseUrl,
      target: teamId && channelId ? { kind: "channel", teamId, channelId } : { kind: "chat", chatId },
    };
  } else if (mode === "incoming_webhook") {
    const url = get("TEAMS_INCOMING_WEBHOOK_URL", env);
    if (!url) throw missing(["TEAMS_INCOMING_WEBHOOK_URL"], "TEAMS_DELIVERY_MODE=incoming_webhook");
    checkedUrl(url, "TEAMS_INCOMING_WEBHOOK_URL");
    delivery = { mode: "incoming_webhook", url };
  } else if (mode !== "") {
    throw new AgentError("config.invalid_value", `TEAMS_DELIVERY_MODE is ${JSON.stringify(mode.slice(0, 40))}; use graph or incoming_webhook`);
  }

  let listener: ListenerSettings | null = null;
  if (envFlag("MSGRAPH_WEBHOOK_ENABLED", env)) {
    const portRaw = get("MSGRAPH_WEBHOOK_PORT", env);
    if (!portRaw) throw missing(["MSGRAPH_WEBHOOK_PORT"], "MSGRAPH_WEBHOOK_ENABLED=true");
    const port = Number(portRaw);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new AgentError("config.invalid_value", `MSGRAPH_WEBHOOK_PORT is not a port number: ${portRaw.slice(0, 20)}`);
    listener = {
      port,
      host: get("MSGRAPH_WEBHOOK_HOST", env) || "127.0.0.1",
      clientState: get("MSGRAPH_WEBHOOK_CLIENT_STATE", env),
      acceptedResources: list(get("MSGRAPH_WEBHOOK_ACCEPTED_RESOURCES", env)),
      cidrs: list(get("MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS", env)),
    };
  }
  return { delivery, listener, graph: token ? { token, baseUrl } : null };
}

/**
 * True when `resource` is one of `patterns` (empty: all): an entry matches the resource itself, a
 * resource under it (`communications/onlineMeetings` matches `communications/onlineMeetings('x')/…`),
 * and `*` stands for any characters. Keys match in both forms (`chats('19:x')/messages` and
 * `chats/19:x/messages`). Case-insensitive, like Graph's paths.
 */
export function resourceAccepted(resource: string, patterns: readonly string[]): boolean {
  if (patterns.length === 0) return true;
  const raw = resource.replace(/^\/+/, "");
  // Graph writes keys as `chats('19:x')/messages('1')`; the pattern may use either that or `chats/19:x/messages/1`.
  const forms = [raw, raw.replace(/\('([^']*)'\)|\("([^"]*)"\)/g, (_m, a?: string, b?: string) => `/${a ?? b ?? ""}`)];
  return patterns.some((p) => {
    const body = p
      .replace(/^\/+/, "")
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    const re = new RegExp(`^${body}(?:$|[/(])`, "i");
    return forms.some((r) => re.test(r));
  });
}

/**
 * Posting to Teams, in the two delivery modes:
 *
 * - `graph`: a chatMessage through Microsoft Graph, to a team's channel
 *   (`POST /teams/{team}/channels/{channel}/messages`) or a chat (`POST /chats/{chat}/messages`),
 *   with the agent's Markdown rendered to the small HTML subset Teams shows (escaped first: the
 *   text is the model's, untrusted).
 * - `incoming_webhook`: an Adaptive Card (a TextBlock per part; Adaptive Cards render a Markdown
 *   subset themselves) POSTed to the webhook URL. The URL is a secret: it never reaches a log or
 *   an error message.
 */
import { AgentError } from "../../../shared/errors.js";
import { markdownToTelegramHtml } from "../markdown.js";
import { splitText } from "../split.js";
import { graphClient, graphError, type GraphClientHandle } from "./graph-client.js";
import type { TeamsDelivery } from "./teams-settings.js";

/** Teams refuses a chatMessage body over about 28 KB; cards have a similar limit. */
export const MAX_TEXT_CHARS = 20_000;

/** Where one post goes in graph mode. */
export type GraphTarget = { kind: "channel"; teamId: string; channelId: string } | { kind: "chat"; chatId: string };

/** Markdown → the HTML of a Teams chatMessage (Telegram's subset is a subset of what Teams shows; newlines become breaks). */
export function teamsHtml(md: string): string {
  const html = markdownToTelegramHtml(md);
  // Keep <pre> blocks' own newlines; elsewhere a newline is a line break.
  return html
    .split(/(<pre>[\s\S]*?<\/pre>)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/\n/g, "<br>")))
    .join("");
}

/** The Adaptive Card an incoming webhook takes, as Teams' "message with attachments" envelope. */
export function adaptiveCard(text: string, title?: string): Record<string, unknown> {
  const body: Record<string, unknown>[] = [];
  if (title) body.push({ type: "TextBlock", text: title, weight: "Bolder", size: "Medium", wrap: true });
  body.push({ type: "TextBlock", text, wrap: true });
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: { $schema: "http://adaptivecards.io/schemas/adaptive-card.json", type: "AdaptiveCard", version: "1.4", body },
      },
    ],
  };
}

export class TeamsSender {
  private graph: Promise<GraphClientHandle> | null = null;

  constructor(readonly delivery: TeamsDelivery) {}

  /** The configured destination, for status (ids only, never the webhook URL). */
  describe(): string {
    const d = this.delivery;
    if (d.mode === "incoming_webhook") return "incoming webhook (Adaptive Cards)";
    return d.target.kind === "channel" ? `graph → channel ${d.target.channelId} of team ${d.target.teamId}` : `graph → chat ${d.target.chatId}`;
  }

  /**
   * Post `text` (Markdown), split into parts Teams takes, to `target` (graph mode; default: the
   * configured one). `title` heads the first part.
   */
  async post(text: string, opts: { title?: string; target?: GraphTarget } = {}): Promise<void> {
    const parts = splitText(text, MAX_TEXT_CHARS);
    for (const [i, part] of parts.entries()) {
      const title = i === 0 ? opts.title : undefined;
      if (this.delivery.mode === "incoming_webhook") await this.postCard(this.delivery.url, part, title);
      else await this.postGraph(opts.target ?? this.delivery.target, title ? `**${title}**\n\n${part}` : part);
    }
  }

  private async postGraph(target: GraphTarget, md: string): Promise<void> {
    if (this.delivery.mode !== "graph") throw new AgentError("teams.not_configured", "graph delivery is not configured");
    const delivery = this.delivery;
    this.graph ??= graphClient({ token: delivery.token, baseUrl: delivery.baseUrl });
    const { client } = await this.graph;
    const path =
      target.kind === "channel"
        ? `/teams/${encodeURIComponent(target.teamId)}/channels/${encodeURIComponent(target.channelId)}/messages`
        : `/chats/${encodeURIComponent(target.chatId)}/messages`;
    try {
      await client.api(path).post({ body: { contentType: "html", content: teamsHtml(md) } });
    } catch (error) {
      throw graphError(target.kind === "channel" ? "channel message" : "chat message", error);
    }
  }

  private async postCard(url: string, text: string, title?: string): Promise<void> {
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(adaptiveCard(text, title)),
        redirect: "error",
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      // The URL is the webhook's secret: say what failed, not where.
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new AgentError("teams.api_error", `the Teams incoming webhook could not be reached (${cause})`);
    }
    const body = (await res.text().catch(() => "")).slice(0, 200);
    // Teams' classic connector answers 200 with "1"; Workflows webhooks answer 202. An error text in a 200 is a failure too.
    if (!res.ok || /error|fail/i.test(body)) {
      const err = new AgentError("teams.api_error", `the Teams incoming webhook answered HTTP ${res.status}${body ? `: ${body.replace(/\s+/g, " ")}` : ""}`, {
        status: res.status,
      });
      if (res.status >= 400 && res.status < 500 && res.status !== 429) Object.assign(err, { permanent: true });
      throw err;
    }
  }
}

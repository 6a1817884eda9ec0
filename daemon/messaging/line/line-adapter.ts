/**
 * The LINE adapter (official @line/bot-sdk): a signed webhook in, the Messaging API out, media
 * links, and the slow-response postback cache. The channel layer (daemon/messaging/) owns
 * sessions, commands, queueing, access and the inbound store; this file owns only LINE.
 * docs/messaging.md#line is the user's reference.
 */
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { messagingApi } from "@line/bot-sdk";
import { type Clock, type ClockTimer, systemClock } from "../../../shared/clock.js";
import { envValue } from "../../../shared/config/env.js";
import { AgentError } from "../../../shared/errors.js";
import { resolveHome } from "../../../shared/paths.js";
import {
  newAdapterStatus,
  noteAdapterError,
  type AccessList,
  type AdapterContext,
  type AdapterFactory,
  type AdapterStatus,
  type InboundImage,
  type InboundMessage,
  type MessagingAdapter,
  type OutboundMessage,
  type PlatformLimits,
} from "../adapter.js";
import { markdownToPlain } from "../markdown.js";
import { LineMedia } from "./line-media.js";
import { LinePostbackCache, POSTBACK_PREFIX } from "./line-postback-cache.js";
import { LineSender, type LineMessage, MAX_MESSAGES_PER_CALL, MAX_TEXT_CHARS, textMessages } from "./line-sender.js";
import { type LineSettings, lineAllowLists, lineConfigured, lineSettings } from "./line-settings.js";
import { type LineWebhookEvent, lineRoutes, WEBHOOK_PATH } from "./line-webhook.js";
import { closeServer } from "../../http/server-close.js";

export const LINE_LIMITS: PlatformLimits = { maxTextChars: MAX_TEXT_CHARS, maxMessagesPerCall: MAX_MESSAGES_PER_CALL };
/** LINE's data API (message content) in production; tests point both APIs at one fake. */
const LINE_DATA_API = "https://api-data.line.me";
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** A message waiting for its answer: the slow timer, then (once it fired) its postback entry. */
interface SlowTracker {
  chatId: string;
  timer: ClockTimer | null;
  firing: Promise<void> | null;
  entryId: string | null;
}

function ids(config: Record<string, unknown>, key: string, envList: ReadonlySet<string>): string[] {
  const fromConfig = Array.isArray(config[key]) ? (config[key] as unknown[]).map(String) : [];
  return [...new Set([...envList, ...fromConfig])];
}

export function lineAccess(config: Record<string, unknown>, env: NodeJS.ProcessEnv): AccessList {
  const s = lineAllowLists(env);
  return {
    users: ids(config, "allow_users", s.allowedUsers),
    groups: ids(config, "allow_groups", s.allowedGroups),
    rooms: ids(config, "allow_rooms", s.allowedRooms),
    allowAll: s.allowAll || config.allow_all_users === true,
  };
}

export class LineAdapter implements MessagingAdapter {
  readonly platform = "line";
  readonly limits = LINE_LIMITS;
  private ctx: AdapterContext | null = null;
  private settings: LineSettings | null = null;
  private sender: LineSender | null = null;
  private client: messagingApi.MessagingApiClient | null = null;
  private blob: messagingApi.MessagingApiBlobClient | null = null;
  private media: LineMedia | null = null;
  private cache: LinePostbackCache | null = null;
  private server: Server | null = null;
  private unmount: (() => void) | null = null;
  private ownUrl: string | null = null;
  private readonly slow = new Map<string, SlowTracker>();
  /** When the loading animation was last started, per chat. */
  private readonly loadingShown = new Map<string, number>();
  private readonly st: AdapterStatus = newAdapterStatus("stopped");

  constructor(private readonly clock: Clock = systemClock) {}

  async start(ctx: AdapterContext): Promise<void> {
    this.ctx = ctx;
    this.setState("starting");
    const settings = lineSettings(ctx.env);
    this.settings = settings;
    this.client = new messagingApi.MessagingApiClient({ channelAccessToken: settings.channelAccessToken, baseURL: settings.apiBaseUrl });
    const dataBase = settings.apiBaseUrl === "https://api.line.me" ? LINE_DATA_API : settings.apiBaseUrl;
    this.blob = new messagingApi.MessagingApiBlobClient({ channelAccessToken: settings.channelAccessToken, baseURL: dataBase });
    this.sender = new LineSender(this.client, this.clock, (what, fn) => ctx.retry(`line ${what}`, fn, { attempts: 3 }));
    this.media = new LineMedia({ roots: [resolveHome(ctx.env)], clock: this.clock });
    this.cache = await LinePostbackCache.open(join(ctx.dataDir, "postback-cache.json"), { clock: this.clock, interruptedText: settings.interruptedText });
    const routes = lineRoutes({
      channelSecret: settings.channelSecret,
      media: this.media,
      onEvents: (events) => this.onEvents(events),
      onRefused: (reason, status) => {
        this.st.counts.refused++;
        ctx.log.warn("line webhook request refused", { reason, status });
      },
    });
    if (settings.port !== null) {
      const server = createServer((req, res) => {
        const url = req.url ?? "/";
        const q = url.indexOf("?");
        routes(req, res, q < 0 ? url : url.slice(0, q)).catch((error) => {
          ctx.log.error("line webhook failed", { error: String(error) });
          if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
          res.end('{"error":{"code":"internal.error","message":"internal error"}}');
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once("error", (error) =>
          reject(new AgentError("line.api_error", `the LINE webhook cannot listen on ${settings.host}:${settings.port}: ${error.message}`)),
        );
        server.listen(settings.port ?? 0, settings.host, resolve);
      });
      this.server = server;
      const address = server.address() as AddressInfo;
      this.ownUrl = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
      this.setState("running", `webhook ${this.ownUrl}${WEBHOOK_PATH}`);
    } else if (ctx.http) {
      this.unmount = ctx.http.mountOpen("/line/", routes);
      this.setState("running", `webhook on the gateway at ${WEBHOOK_PATH}`);
    } else {
      throw new AgentError("config.invalid_value", "the LINE webhook has nowhere to listen: set LINE_WEBHOOK_PORT (the gateway is not running)");
    }
    ctx.log.info("line adapter started", { detail: this.st.detail, slow_response_ms: settings.slowResponseMs, public_url: settings.publicUrl });
  }

  async stop(): Promise<void> {
    for (const t of this.slow.values()) this.clock.clearTimeout(t.timer);
    this.slow.clear();
    this.unmount?.();
    this.unmount = null;
    const server = this.server;
    this.server = null;
    if (server) {
      await closeServer(server);
    }
    this.setState("stopped");
  }

  status(): AdapterStatus {
    return { ...this.st, counts: { ...this.st.counts } };
  }

  /** Where the webhook listens on its own port (null when mounted on the gateway). */
  get url(): string | null {
    return this.ownUrl;
  }

  /** The postback cache (tests and `channels status` read it). */
  get postbacks(): LinePostbackCache | null {
    return this.cache;
  }

  private setState(state: AdapterStatus["state"], detail?: string): void {
    this.st.state = state;
    if (detail !== undefined) this.st.detail = detail;
    this.ctx?.setState(state, detail);
  }

  /** The layer counts errors (ctx.error); the adapter keeps the last one for its status. */
  private noteError(error: unknown): void {
    noteAdapterError(this.st, error, this.clock.now());
    this.ctx?.error(error);
  }

  // ---------- inbound ----------

  private async onEvents(events: LineWebhookEvent[]): Promise<void> {
    const ctx = this.ctx;
    if (!ctx) throw new AgentError("internal.error", "the LINE adapter is not running");
    for (const event of events) {
      if (event.mode === "standby") continue;
      if (event.type === "postback" && event.postback?.data?.startsWith(POSTBACK_PREFIX)) {
        if (event.webhookEventId && (await ctx.dedup.seen(`line-postback:${event.webhookEventId}`))) continue;
        // Answered after the webhook's 200: the tap's state is on disk, the reply is a call out.
        void this.onTap(event).catch((error) => this.noteError(error));
        continue;
      }
      if (event.type !== "message" || !event.message || !event.source) continue;
      const msg = await this.inbound(event);
      if (!msg) continue;
      const stored = await ctx.receive(msg);
      if (stored.duplicate || stored.refused) continue;
      this.st.counts.inbound++;
      if (/^\/stop\b/i.test(msg.text.trim())) await this.cancelChat(msg.chatId);
      else if (event.replyToken && this.settings && this.settings.slowResponseMs > 0) this.watchSlow(msg.chatId, event.replyToken);
    }
  }

  private async inbound(event: LineWebhookEvent): Promise<InboundMessage | null> {
    const source = event.source as NonNullable<LineWebhookEvent["source"]>;
    const message = event.message as NonNullable<LineWebhookEvent["message"]>;
    const chatType = source.type === "group" || source.type === "room" ? source.type : "user";
    const chatId = (chatType === "group" ? source.groupId : chatType === "room" ? source.roomId : source.userId) ?? "";
    if (!chatId) return null;
    let text = "";
    const images: InboundImage[] = [];
    if (message.type === "text") text = message.text ?? "";
    else if (message.type === "image") {
      const image = await this.download(message.id);
      if (!image) return null; // logged and counted by download
      images.push(image);
    } else {
      this.ctx?.log.debug("line message type not handled", { type: message.type });
      return null;
    }
    const now = this.clock.now();
    return {
      eventId: event.webhookEventId ?? `line-message:${message.id}`,
      chatId,
      chatType,
      senderId: source.userId ?? chatId,
      ...(chatType !== "user" ? { groupId: chatId } : {}),
      text,
      ...(images.length > 0 ? { images } : {}),
      ...(event.replyToken ? { reply: { replyToken: event.replyToken, replyTokenAt: String(now) } } : {}),
      at: typeof event.timestamp === "number" ? event.timestamp : now,
    };
  }

  private async download(messageId: string): Promise<InboundImage | null> {
    const blob = this.blob;
    const ctx = this.ctx;
    if (!blob || !ctx) return null;
    try {
      const { httpResponse, body } = await ctx.retry("line get content", () => blob.getMessageContentWithHttpInfo(messageId), { attempts: 3 });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of body) {
        size += (chunk as Buffer).length;
        if (size > MAX_IMAGE_BYTES) throw new AgentError("line.api_error", `an image from LINE is over ${MAX_IMAGE_BYTES} bytes`);
        chunks.push(chunk as Buffer);
      }
      const mime = httpResponse.headers.get("content-type")?.split(";")[0]?.trim() || "image/jpeg";
      return { mime, base64: Buffer.concat(chunks).toString("base64"), name: `${messageId}.${mime.split("/")[1] ?? "jpg"}` };
    } catch (error) {
      this.noteError(error);
      return null;
    }
  }

  // ---------- the slow-response postback cache ----------

  private watchSlow(chatId: string, replyToken: string): void {
    const ms = this.settings?.slowResponseMs ?? 0;
    const tracker: SlowTracker = { chatId, timer: null, firing: null, entryId: null };
    tracker.timer = this.clock.setTimeout(() => {
      tracker.timer = null;
      tracker.firing = this.offerButton(tracker, replyToken).catch((error) => this.noteError(error));
    }, ms);
    tracker.timer.unref();
    this.slow.set(replyToken, tracker);
  }

  /** The answer is slow: a PENDING entry, and a get-answer button sent with the reply token. */
  private async offerButton(tracker: SlowTracker, replyToken: string): Promise<void> {
    const cache = this.cache;
    const sender = this.sender;
    if (!cache || !sender) return;
    const entry = await cache.create(tracker.chatId);
    tracker.entryId = entry.id;
    await sender.send({ to: tracker.chatId, replyToken }, [
      answerButton(entry.id, "This is taking a while. Tap the button to get the answer when it is ready."),
    ]);
    this.st.counts.outbound++;
  }

  /** `/stop` in a chat: its waiting answers are cancelled (PENDING → ERROR), their timers dropped. */
  private async cancelChat(chatId: string): Promise<void> {
    for (const [token, tracker] of this.slow) {
      if (tracker.chatId !== chatId) continue;
      this.clock.clearTimeout(tracker.timer);
      this.slow.delete(token);
      if (tracker.firing) await tracker.firing;
      if (tracker.entryId) await this.cache?.cancelled(tracker.entryId);
    }
  }

  private async onTap(event: LineWebhookEvent): Promise<void> {
    const cache = this.cache;
    const sender = this.sender;
    const chatId = event.source ? (event.source.groupId ?? event.source.roomId ?? event.source.userId) : undefined;
    if (!cache || !sender || !chatId) return;
    const id = (event.postback?.data ?? "").slice(POSTBACK_PREFIX.length);
    // An answer is given only in the chat it was asked in.
    const tapped = cache.get(id)?.chatId === chatId ? await cache.tap(id) : undefined;
    const target = { to: chatId, replyToken: event.replyToken, replyTokenAt: this.clock.now() };
    let messages: LineMessage[];
    if (!tapped) messages = textMessages("That answer is no longer available.");
    else if (tapped.state === "PENDING") messages = [answerButton(id, "Still working on it. Tap again in a moment.")];
    else messages = textMessages(tapped.text ?? "");
    await sender.send(target, messages);
    this.st.counts.outbound++;
  }

  // ---------- outbound ----------

  async send(chatId: string, msg: OutboundMessage): Promise<void> {
    const sender = this.sender;
    if (!sender) throw new AgentError("internal.error", "the LINE adapter is not running");
    const text = toLineText(msg.text);
    // An answer ends LINE's loading animation: the next turn starts a new one.
    this.loadingShown.delete(chatId);
    const replyToken = msg.reply?.replyToken;
    const tracker = replyToken ? this.slow.get(replyToken) : undefined;
    if (tracker && replyToken) {
      this.slow.delete(replyToken);
      this.clock.clearTimeout(tracker.timer);
      if (tracker.firing) await tracker.firing;
    }
    const images = await this.imageMessages(msg.images ?? []);
    if (tracker?.entryId && this.cache) {
      // The user was offered the button: the answer waits for the tap (its reply token is used).
      await this.cache.ready(tracker.entryId, text);
      if (images.length > 0) await sender.send({ to: chatId }, images);
      return;
    }
    const usable = tracker?.entryId ? undefined : replyToken;
    const at = Number(msg.reply?.replyTokenAt);
    const messages = [...(text ? textMessages(text) : []), ...images];
    if (messages.length === 0) return;
    try {
      const report = await sender.send({ to: chatId, replyToken: usable, ...(Number.isFinite(at) ? { replyTokenAt: at } : {}) }, messages);
      if (report.replyError) this.ctx?.log.warn("line reply failed; the answer went by push", { error: report.replyError });
    } catch (error) {
      this.noteError(error);
      throw error;
    }
    this.st.counts.outbound += messages.length;
  }

  /** Image messages for files under the allowed roots (a refused one becomes a note in text). */
  private async imageMessages(paths: string[]): Promise<LineMessage[]> {
    const media = this.media;
    const base = this.settings?.publicUrl ?? this.ownUrl;
    if (!media || paths.length === 0) return [];
    if (!base) return textMessages("(An image was not sent: set LINE_PUBLIC_URL so LINE can fetch it.)");
    const out: LineMessage[] = [];
    for (const path of paths) {
      try {
        const url = LineMedia.url(base, await media.register(path));
        out.push({ type: "image", originalContentUrl: url, previewImageUrl: url } as LineMessage);
      } catch (error) {
        this.ctx?.log.warn("line image refused", { error: error instanceof Error ? error.message : String(error) });
      }
    }
    return out;
  }

  async typing(chatId: string): Promise<void> {
    // LINE shows a loading animation in one-to-one chats only; one call covers 20 s, so the
    // layer's calls every few seconds are thinned to one per 15 s per chat.
    if (!this.client || !chatId.startsWith("U")) return;
    const now = this.clock.now();
    if (now - (this.loadingShown.get(chatId) ?? Number.NEGATIVE_INFINITY) < 15_000) return;
    this.loadingShown.set(chatId, now);
    if (this.loadingShown.size > 1000) this.loadingShown.delete(this.loadingShown.keys().next().value as string);
    await this.client.showLoadingAnimation({ chatId, loadingSeconds: 20 }).catch(() => undefined);
  }
}

function lineSettingsSecret(env: NodeJS.ProcessEnv): string {
  return envValue("LINE_CHANNEL_SECRET", env)?.trim() ?? "";
}

/** A buttons template with one postback action: `agent-answer:<id>`. */
function answerButton(id: string, text: string): LineMessage {
  return {
    type: "template",
    altText: "Tap to get the answer",
    template: { type: "buttons", text, actions: [{ type: "postback", label: "Get answer", data: `${POSTBACK_PREFIX}${id}`, displayText: "Get answer" }] },
  } as LineMessage;
}

/** LINE shows plain text: Markdown is flattened (the layer's one converter). */
function toLineText(markdown: string): string {
  return markdownToPlain(markdown).trim();
}

export const lineFactory: AdapterFactory = {
  platform: "line",
  limits: LINE_LIMITS,
  identity(_config, env) {
    // Null (the layer says "enabled but has no credential") unless both credentials are set.
    if (!lineConfigured(env)) return null;
    const secret = lineSettingsSecret(env);
    // The channel, by a digest of its secret (never the secret): two profiles cannot share it.
    return `channel ${createHash("sha256").update(secret).digest("hex").slice(0, 12)}`;
  },
  access: lineAccess,
  create: () => new LineAdapter(),
};

import { timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, get as httpGet, type Agent, type Server } from "node:http";
import { get as httpsGet } from "node:https";
import { basename } from "node:path";
import { AgentError } from "../../../shared/errors.js";
import {
  newAdapterStatus,
  type AccessList,
  type AdapterContext,
  type AdapterFactory,
  type AdapterStatus,
  type InboundImage,
  type MessagingAdapter,
  type OutboundMessage,
} from "../adapter.js";
import { markdownToPlain, markdownToTelegramHtml } from "../markdown.js";
import { splitText } from "../split.js";
import { proxyAgent } from "./proxy-agent.js";

const LIMIT = 4096;
/** Markdown pieces are cut below the limit: the HTML tags and entities grow them. */
const MD_PIECE = 3500;
const MAX_WEBHOOK_BODY = 1024 * 1024;
const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

type Grammy = typeof import("grammy");
type Bot = InstanceType<Grammy["Bot"]>;

const str = (v: unknown, d = "") => (typeof v === "string" ? v : d);
const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);

function token(config: Record<string, unknown>, env: NodeJS.ProcessEnv): string | null {
  const t = env[str(config.token_env, "TELEGRAM_BOT_TOKEN")]?.trim();
  return t ? t : null;
}

/** The proxy the Bot API is reached through: TELEGRAM_PROXY wins over `telegram.proxy_url`. */
export function telegramProxy(config: Record<string, unknown>, env: NodeJS.ProcessEnv): string | null {
  return env.TELEGRAM_PROXY?.trim() || str(config.proxy_url).trim() || null;
}

export const telegramFactory: AdapterFactory = {
  platform: "telegram",
  limits: { maxTextChars: LIMIT },
  identity(config, env) {
    const t = token(config, env);
    // The bot id (before the colon) names the bot without its secret.
    return t ? `bot${t.split(":")[0]}` : null;
  },
  access(config, env): AccessList {
    const allowAll = config.allow_all_users === true || /^(1|true)$/i.test(env.TELEGRAM_ALLOW_ALL_USERS ?? "");
    return { users: list(config.allow_users), groups: list(config.allow_groups), rooms: [], allowAll };
  },
  create: () => new TelegramAdapter(),
};

/** Telegram through grammY: long polling (default) or a webhook; HTML replies with a plain-text fallback. */
export class TelegramAdapter implements MessagingAdapter {
  readonly platform = "telegram";
  readonly limits = { maxTextChars: LIMIT };
  private bot: Bot | null = null;
  private grammy: Grammy | null = null;
  private ctx: AdapterContext | null = null;
  private server: Server | null = null;
  private agent: Agent | undefined;
  private apiRoot = "https://api.telegram.org";
  private token = "";
  private polling: Promise<void> | null = null;
  private readonly st: AdapterStatus = newAdapterStatus("starting");

  async start(ctx: AdapterContext): Promise<void> {
    this.ctx = ctx;
    const cfg = ctx.config;
    const t = token(cfg, ctx.env);
    if (!t) throw new AgentError("messaging.no_adapter", `telegram: ${str(cfg.token_env, "TELEGRAM_BOT_TOKEN")} is not set`);
    this.token = t;
    this.grammy = await import("grammy");
    this.apiRoot = str(cfg.api_root).replace(/\/+$/, "") || "https://api.telegram.org";
    const proxy = telegramProxy(cfg, ctx.env);
    this.agent = proxy ? proxyAgent(proxy, this.apiRoot.startsWith("https:") ? "https:" : "http:") : undefined;
    const bot = new this.grammy.Bot(t, {
      client: { apiRoot: this.apiRoot, ...(this.agent ? { baseFetchConfig: { agent: this.agent } } : {}) },
    });
    this.bot = bot;
    bot.on("message", async (c) => {
      const m = c.message;
      const chat = m.chat;
      const thread = m.is_topic_message && m.message_thread_id ? `:${m.message_thread_id}` : "";
      const images: InboundImage[] = [];
      if (m.photo?.length) {
        const biggest = m.photo[m.photo.length - 1];
        if (biggest) images.push(await this.downloadPhoto(biggest.file_id));
      }
      const chatType = chat.type === "private" ? "user" : "group";
      await ctx.receive({
        eventId: String(c.update.update_id),
        chatId: `${chat.id}${thread}`,
        chatType,
        senderId: String(m.from?.id ?? chat.id),
        ...(m.from ? { senderName: [m.from.first_name, m.from.last_name].filter(Boolean).join(" ") || m.from.username || String(m.from.id) } : {}),
        ...(chatType === "group" ? { groupId: String(chat.id) } : {}),
        text: m.text ?? m.caption ?? "",
        ...(images.length ? { images } : {}),
        at: m.date * 1000,
      });
    });
    bot.catch((err) => {
      ctx.error(err.error);
      ctx.log.error("telegram: handling an update failed", { profile: ctx.profile, error: (err.error as Error)?.message });
    });
    await ctx.retry("getMe", () => bot.init());
    await ctx
      .retry("setMyCommands", () => bot.api.setMyCommands(ctx.commands.map((c) => ({ command: c.name, description: c.description.slice(0, 256) }))), {
        attempts: 2,
      })
      .catch(() => undefined);
    if (str(cfg.mode) === "webhook") await this.startWebhook(ctx, bot);
    else {
      await ctx.retry("deleteWebhook", () => bot.api.deleteWebhook());
      this.polling = bot
        .start({ drop_pending_updates: false, allowed_updates: ["message"] })
        .then(() => ctx.setState("stopped"))
        .catch((error: unknown) => {
          ctx.error(error);
          ctx.setState("error", `long polling stopped: ${(error as Error).message}`);
        });
      ctx.setState("running", `long polling${proxy ? " through a proxy" : ""}`);
    }
  }

  private async startWebhook(ctx: AdapterContext, bot: Bot): Promise<void> {
    const url = str(ctx.config.webhook_url);
    const secret = ctx.env[str(ctx.config.webhook_secret_env, "TELEGRAM_WEBHOOK_SECRET")] ?? "";
    if (!url) throw new AgentError("messaging.no_adapter", "telegram.mode is webhook but telegram.webhook_url is empty");
    if (!/^[A-Za-z0-9_-]{16,256}$/.test(secret))
      throw new AgentError("messaging.no_adapter", "telegram webhook: the secret (TELEGRAM_WEBHOOK_SECRET) must be 16-256 of A-Z a-z 0-9 _ -");
    const expected = Buffer.from(secret);
    this.server = createServer((req, res) => {
      const got = Buffer.from(String(req.headers["x-telegram-bot-api-secret-token"] ?? ""));
      // The secret is checked first, in constant time; nothing else runs for a request without it.
      if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
        res.writeHead(401).end();
        req.resume();
        return;
      }
      if (req.method !== "POST") {
        res.writeHead(405).end();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_WEBHOOK_BODY) {
          res.writeHead(413).end();
          req.destroy();
        } else chunks.push(c);
      });
      req.on("end", () => {
        if (size > MAX_WEBHOOK_BODY) return;
        let update: unknown;
        try {
          update = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          res.writeHead(400).end();
          return;
        }
        // Answered only after the update is stored: a failure makes Telegram send it again.
        bot.handleUpdate(update as Parameters<Bot["handleUpdate"]>[0]).then(
          () => res.writeHead(200, { "content-type": "application/json" }).end("{}"),
          () => res.writeHead(500).end(),
        );
      });
    });
    const host = str(ctx.config.webhook_host, "127.0.0.1");
    const port = typeof ctx.config.webhook_port === "number" ? ctx.config.webhook_port : 8443;
    await new Promise<void>((resolve, reject) => {
      this.server?.once("error", reject);
      this.server?.listen(port, host, () => resolve());
    });
    await ctx.retry("setWebhook", () => bot.api.setWebhook(url, { secret_token: secret, allowed_updates: ["message"] }));
    const addr = this.server.address();
    ctx.setState("running", `webhook ${url} (listening on ${host}:${typeof addr === "object" && addr ? addr.port : port})`);
  }

  /** The webhook listener's port (tests). */
  get webhookPort(): number | null {
    const a = this.server?.address();
    return typeof a === "object" && a ? a.port : null;
  }

  private async downloadPhoto(fileId: string): Promise<InboundImage> {
    const bot = this.bot as Bot;
    const ctx = this.ctx as AdapterContext;
    const file = await ctx.retry("getFile", () => bot.api.getFile(fileId));
    if (!file.file_path) throw new Error("telegram: the photo has no file path");
    const url = `${this.apiRoot}/file/bot${this.token}/${file.file_path}`;
    const bytes = await ctx.retry("download photo", () => download(url, this.agent));
    const mime = /\.png$/i.test(file.file_path) ? "image/png" : /\.webp$/i.test(file.file_path) ? "image/webp" : "image/jpeg";
    return { mime, base64: bytes.toString("base64"), name: basename(file.file_path) };
  }

  async stop(): Promise<void> {
    const bot = this.bot;
    if (bot?.isRunning()) await bot.stop().catch(() => undefined);
    await this.polling;
    if (this.server) await new Promise<void>((resolve) => this.server?.close(() => resolve()));
    this.server?.closeAllConnections();
    this.st.state = "stopped";
  }

  async typing(chatId: string): Promise<void> {
    const { chat, thread } = target(chatId);
    await this.bot?.api.sendChatAction(chat, "typing", thread ? { message_thread_id: thread } : {});
  }

  async send(chatId: string, msg: OutboundMessage): Promise<void> {
    const bot = this.bot;
    const ctx = this.ctx;
    if (!bot || !ctx || !this.grammy) throw new AgentError("messaging.no_adapter", "telegram: the adapter is not running");
    const { chat, thread } = target(chatId);
    const extra = thread ? { message_thread_id: thread } : {};
    for (const piece of splitText(msg.text, MD_PIECE)) {
      const html = markdownToTelegramHtml(piece);
      if (html.length <= LIMIT) {
        try {
          await this.call(ctx, "sendMessage", () => bot.api.sendMessage(chat, html, { parse_mode: "HTML", ...extra }));
          continue;
        } catch (error) {
          if (!(error instanceof this.grammy.GrammyError && error.error_code === 400)) throw error;
          ctx.log.warn("telegram: the formatted reply was rejected; sending it as plain text", { profile: ctx.profile, error: error.description });
        }
      }
      for (const plain of splitText(markdownToPlain(piece), LIMIT)) await this.call(ctx, "sendMessage", () => bot.api.sendMessage(chat, plain, extra));
    }
    for (const path of msg.images ?? []) {
      const data = await readFile(path);
      await this.call(ctx, "sendPhoto", () => bot.api.sendPhoto(chat, new (this.grammy as Grammy).InputFile(data, basename(path)), extra));
    }
  }

  /** A Bot API call with the layer's retry: a 4xx other than 429 is not retried. */
  private call<T>(ctx: AdapterContext, what: string, fn: () => Promise<T>): Promise<T> {
    const G = this.grammy as Grammy;
    return ctx.retry(what, async () => {
      try {
        const r = await fn();
        this.st.counts.outbound++;
        return r;
      } catch (error) {
        if (error instanceof G.GrammyError && error.error_code >= 400 && error.error_code < 500 && error.error_code !== 429)
          Object.assign(error, { permanent: true });
        throw error;
      }
    });
  }

  status(): AdapterStatus {
    return { ...this.st, state: this.bot ? (this.st.state === "stopped" ? "stopped" : "running") : this.st.state };
  }
}

function target(chatId: string): { chat: string; thread: number | null } {
  const m = /^(-?\d+):(\d+)$/.exec(chatId);
  return m ? { chat: m[1] as string, thread: Number(m[2]) } : { chat: chatId, thread: null };
}

function download(url: string, agent: Agent | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith("https:") ? httpsGet : httpGet;
    get(url, agent ? { agent } : {}, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`download failed: HTTP ${res.statusCode}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_PHOTO_BYTES) res.destroy(new Error("the photo is too large"));
        else chunks.push(c);
      });
      res.on("end", () => resolve(Buffer.concat(chunks)));
      res.on("error", reject);
    }).on("error", reject);
  });
}

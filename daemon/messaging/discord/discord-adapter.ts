/**
 * The Discord adapter (discord.js, loaded on first use): the gateway in (guild messages, DMs,
 * message content), REST out. The channel layer owns sessions, commands, queueing, access and
 * the inbound store; this file owns only Discord: mentions, threads, attachments, the 2,000
 * character limit and reply references. docs/messaging.md#discord is the user's reference.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { envFlag } from "../../../shared/config/env.js";
import { AgentError } from "../../../shared/errors.js";
import {
  newAdapterStatus,
  type AccessList,
  type AdapterContext,
  type AdapterFactory,
  type AdapterStatus,
  type ChatType,
  type InboundImage,
  type InboundMessage,
  type MessagingAdapter,
  type OutboundMessage,
  type PlatformLimits,
} from "../adapter.js";
import { KnownThreads } from "../known-threads.js";
import { splitText } from "../split.js";
import { withTimeout } from "../start-timeout.js";
import { type AttachmentInfo, attachmentKind, attachmentRefusal, type DiscordSettings, discordAccessLists, discordSettings } from "./discord-settings.js";

type DiscordJs = typeof import("discord.js");
type Client = InstanceType<DiscordJs["Client"]>;

export const DISCORD_LIMITS: PlatformLimits = { maxTextChars: 2000 };
/** A text attachment reaches the model as text, cut at this many characters. */
const MAX_TEXT_ATTACHMENT_CHARS = 100_000;
/** Thread/channel kinds remembered (one REST call per new channel). */
const MAX_CHANNEL_CACHE = 2000;
/** Discord's thread channel types: announcement, public and private threads. */
const THREAD_TYPES = new Set([10, 11, 12]);
/** discord.js bounds each gateway step itself; this bounds them all (guilds included). */
const READY_TIMEOUT_MS = 120_000;

const str = (v: unknown, d = "") => (typeof v === "string" ? v : d);

function token(config: Record<string, unknown>, env: NodeJS.ProcessEnv): string | null {
  const t = env[str(config.token_env, "DISCORD_BOT_TOKEN")]?.trim();
  return t ? t : null;
}

export const discordFactory: AdapterFactory = {
  platform: "discord",
  limits: DISCORD_LIMITS,
  identity(config, env) {
    const t = token(config, env);
    // A bot token starts with the base64 of the bot's id: that part names the bot without its secret.
    return t ? `bot:${t.split(".")[0]}` : null;
  },
  access(config, env): AccessList {
    const { users, channels } = discordAccessLists(config);
    const allowAll = config.allow_all_users === true || envFlag("DISCORD_ALLOW_ALL_USERS", env);
    return { users, groups: channels, rooms: [], allowAll };
  },
  create: () => new DiscordAdapter(),
  groupList: { key: "allow_channels", access: "groups" },
};

interface RawAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  content_type?: string;
}

interface RawMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: { id: string; username?: string; global_name?: string | null; bot?: boolean };
  content: string;
  timestamp?: string;
  mentions?: Array<{ id: string }>;
  attachments?: RawAttachment[];
}

interface ChannelKind {
  thread: boolean;
  parent: string | null;
}

/** Discord through discord.js: raw gateway dispatches (no caches needed), REST for sending. */
export class DiscordAdapter implements MessagingAdapter {
  readonly platform = "discord";
  readonly limits = DISCORD_LIMITS;
  private client: Client | null = null;
  private djs: DiscordJs | null = null;
  private ctx: AdapterContext | null = null;
  private settings: DiscordSettings | null = null;
  private botId = "";
  private readonly channelKinds = new Map<string, ChannelKind>();
  private knownThreads: KnownThreads | null = null;
  private readonly st: AdapterStatus = newAdapterStatus("starting");

  async start(ctx: AdapterContext): Promise<void> {
    this.ctx = ctx;
    const t = token(ctx.config, ctx.env);
    if (!t) throw new AgentError("messaging.no_adapter", `discord: ${str(ctx.config.token_env, "DISCORD_BOT_TOKEN")} is not set`);
    const settings = discordSettings(ctx.config, ctx.env);
    this.settings = settings;
    this.knownThreads = await KnownThreads.open(join(ctx.dataDir, "threads.json"));
    const djs = await import("discord.js");
    this.djs = djs;
    const { Client, GatewayIntentBits, Events } = djs;
    const client = new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages, GatewayIntentBits.MessageContent],
      ...(settings.apiRoot ? { rest: { api: settings.apiRoot } } : {}),
    });
    this.client = client;
    client.ws.on(djs.GatewayDispatchEvents.MessageCreate, (d: RawMessage) => {
      this.onMessage(d).catch((error: unknown) => {
        ctx.error(error);
        ctx.log.error("discord: handling a message failed", { profile: ctx.profile, error: (error as Error).message });
      });
    });
    client.on(Events.Error, (error) => ctx.error(error));
    client.on(Events.ShardDisconnect, (ev) => {
      ctx.setState("error", `the gateway closed the connection for good (code ${ev.code}); check the token and the intents`);
    });
    client.on(Events.ShardReconnecting, () => ctx.setState("retrying", "reconnecting to the gateway"));
    client.on(Events.ShardResume, () => ctx.setState("running", "gateway"));
    const ready = new Promise<void>((resolve) =>
      client.once(Events.ClientReady, (c) => {
        // Set before any message is handled: mentions are recognised by it.
        this.botId = c.user.id;
        resolve();
      }),
    );
    await ctx.retry("login", async () => {
      try {
        await client.login(t);
      } catch (error) {
        // A refused token or a disallowed intent does not get better by retrying.
        if (/TokenInvalid|DisallowedIntents|invalid token/i.test(String((error as Error).message ?? error)))
          Object.assign(error as object, { permanent: true });
        throw error;
      }
    });
    await withTimeout(ready, READY_TIMEOUT_MS, "discord: the gateway did not become ready");
    ctx.setState("running", `gateway${client.user ? ` as ${client.user.username}` : ""}`);
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.destroy().catch(() => undefined);
    this.st.state = "stopped";
  }

  status(): AdapterStatus {
    return { ...this.st, counts: { ...this.st.counts } };
  }

  /** Whether a channel is a thread (and of which channel), asked once per channel. */
  private async channelKind(id: string): Promise<ChannelKind> {
    const known = this.channelKinds.get(id);
    if (known) return known;
    const client = this.client as Client;
    const djs = this.djs as DiscordJs;
    const ch = (await (this.ctx as AdapterContext).retry("get channel", () => client.rest.get(djs.Routes.channel(id)), { attempts: 3 })) as {
      type: number;
      parent_id?: string | null;
    };
    const kind = { thread: THREAD_TYPES.has(ch.type), parent: ch.parent_id ?? null };
    if (this.channelKinds.size >= MAX_CHANNEL_CACHE) this.channelKinds.delete(this.channelKinds.keys().next().value as string);
    this.channelKinds.set(id, kind);
    return kind;
  }

  private async onMessage(d: RawMessage): Promise<void> {
    const ctx = this.ctx;
    const settings = this.settings;
    if (!ctx || !settings || !this.client) return;
    if (d.author.bot || d.author.id === this.botId) return;
    const inGuild = Boolean(d.guild_id);
    let chatId = d.channel_id;
    let channelForRules = d.channel_id;
    if (inGuild) {
      const kind = await this.channelKind(d.channel_id);
      // A thread is its own conversation (its own session), ruled by its parent channel's lists.
      if (kind.thread && kind.parent) {
        chatId = `${kind.parent}:${d.channel_id}`;
        channelForRules = kind.parent;
      }
    }
    let text = d.content ?? "";
    if (!this.botId) return;
    const mentionRe = new RegExp(`<@!?${this.botId}>`, "g");
    const mentioned = (d.mentions ?? []).some((m) => m.id === this.botId) || text.search(mentionRe) >= 0;
    text = text.replace(mentionRe, "").trim();
    // In a guild the bot answers only when mentioned, unless the channel is listed for free talk
    // or this is a thread it has answered in.
    const free = settings.freeChannels.has(channelForRules) || settings.freeChannels.has(d.channel_id) || this.knownThreads?.has(d.channel_id) === true;
    if (inGuild && !mentioned && !free) return;
    const chatType: ChatType = inGuild ? "group" : "user";
    const base = {
      eventId: d.id,
      chatId,
      chatType,
      senderId: d.author.id,
      senderName: d.author.global_name || d.author.username || d.author.id,
      ...(inGuild ? { groupId: channelForRules } : {}),
      reply: { messageId: d.id },
      at: d.timestamp ? Date.parse(d.timestamp) || Date.now() : Date.now(),
    } satisfies Omit<InboundMessage, "text">;
    const refusals: string[] = [];
    const images: InboundImage[] = [];
    const notes: string[] = [];
    const allowed = isAllowed(ctx.access, base);
    for (const a of d.attachments ?? []) {
      const info: AttachmentInfo = { filename: a.filename, size: a.size, contentType: a.content_type ?? null };
      const refusal = attachmentRefusal(info, settings);
      if (refusal) {
        refusals.push(refusal);
        continue;
      }
      // Nothing is downloaded for a sender who gets no turn.
      if (!allowed) continue;
      const kind = attachmentKind(info);
      let data: Buffer;
      try {
        data = await this.download(a.url, settings.maxAttachmentBytes);
      } catch (error) {
        if (!(error as { oversize?: boolean }).oversize) throw error;
        refusals.push(
          `Attachment "${a.filename.replace(/[\r\n\t]/g, " ").slice(0, 100)}" refused: it is larger than the ${a.size} bytes it said, over the limit of ${settings.maxAttachmentBytes} bytes.`,
        );
        continue;
      }
      if (kind === "image") images.push({ mime: info.contentType?.split(";")[0] ?? "image/png", base64: data.toString("base64"), name: a.filename });
      else if (kind === "text") {
        const body = data.toString("utf8");
        const cut = body.length > MAX_TEXT_ATTACHMENT_CHARS;
        notes.push(
          `[attached file ${a.filename}${cut ? `, first ${MAX_TEXT_ATTACHMENT_CHARS} characters` : ""}]\n${cut ? body.slice(0, MAX_TEXT_ATTACHMENT_CHARS) : body}`,
        );
      } else {
        const dir = join(ctx.dataDir, "attachments");
        await mkdir(dir, { recursive: true, mode: 0o700 });
        const file = join(dir, `${d.id}-${a.filename.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 100)}`);
        await writeFile(file, data, { mode: 0o600 });
        notes.push(`[attached file ${a.filename} (${info.contentType ?? "unknown type"}, ${a.size} bytes), saved at ${file}]`);
      }
    }
    const fullText = [text, ...notes].filter(Boolean).join("\n\n");
    const tell = async () => {
      if (refusals.length && allowed) await this.send(chatId, { text: refusals.join("\n"), reply: { messageId: d.id } });
    };
    if (!fullText && images.length === 0) {
      // Only refused attachments: the sender hears why, and no turn runs.
      if (refusals.length && !(await ctx.dedup.seen(`refusal:${d.id}`))) await tell();
      return;
    }
    const r = await ctx.receive({ ...base, text: fullText, ...(images.length ? { images } : {}) });
    if (!r.duplicate && !r.refused) {
      this.st.counts.inbound++;
      await tell();
    }
  }

  private async download(url: string, max: number): Promise<Buffer> {
    const ctx = this.ctx as AdapterContext;
    return ctx.retry(
      "download attachment",
      async () => {
        const res = await fetch(url);
        if (!res.ok) {
          const e = new Error(`attachment download failed: HTTP ${res.status}`);
          if (res.status >= 400 && res.status < 500 && res.status !== 429) Object.assign(e, { permanent: true });
          throw e;
        }
        return readCapped(res, max);
      },
      { attempts: 3 },
    );
  }

  async typing(chatId: string): Promise<void> {
    const client = this.client;
    if (!client || !this.djs) return;
    await client.rest.post(this.djs.Routes.channelTyping(target(chatId)));
  }

  async send(chatId: string, msg: OutboundMessage): Promise<void> {
    const client = this.client;
    const ctx = this.ctx;
    const djs = this.djs;
    if (!client || !ctx || !djs || !this.settings) throw new AgentError("messaging.no_adapter", "discord: the adapter is not running");
    const channel = target(chatId);
    const replyTo = msg.reply?.messageId;
    const mode = this.settings.replyToMode;
    // A thread the bot answers in is remembered first: a reply to this answer may arrive before the last piece is acknowledged.
    if (chatId.includes(":")) await this.knownThreads?.add(channel);
    const pieces = splitText(msg.text, DISCORD_LIMITS.maxTextChars);
    const files = msg.images ?? [];
    for (const [i, content] of pieces.entries()) {
      const ref = replyTo && (mode === "all" || (mode === "first" && i === 0));
      const body = {
        content,
        // Model output never pings anyone (@everyone, roles, users).
        allowed_mentions: { parse: [], replied_user: false },
        ...(ref ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } } : {}),
      };
      await this.call(ctx, "send message", () => client.rest.post(djs.Routes.channelMessages(channel), { body }));
    }
    for (const path of files) {
      const data = await readFile(path);
      await this.call(ctx, "send image", () =>
        client.rest.post(djs.Routes.channelMessages(channel), {
          body: { allowed_mentions: { parse: [] }, attachments: [{ id: 0, filename: basename(path) }] },
          files: [{ name: basename(path), data }],
        }),
      );
    }
  }

  /** A REST call with the layer's retry: a 4xx other than 429 is not retried. */
  private call<T>(ctx: AdapterContext, what: string, fn: () => Promise<T>): Promise<T> {
    return ctx.retry(what, async () => {
      try {
        const r = await fn();
        this.st.counts.outbound++;
        return r;
      } catch (error) {
        const status = (error as { status?: number }).status;
        if (typeof status === "number" && status >= 400 && status < 500 && status !== 429) Object.assign(error as object, { permanent: true });
        throw error;
      }
    });
  }
}

/** The channel a chat id sends to: `<channel>` or `<channel>:<thread>` (the thread). */
function target(chatId: string): string {
  const i = chatId.indexOf(":");
  return i < 0 ? chatId : chatId.slice(i + 1);
}

/** The layer's allowlist rule, for a message that never reaches the layer (only refused attachments). */
function isAllowed(a: AccessList, m: { senderId: string; chatType: ChatType; groupId?: string; chatId: string }): boolean {
  if (a.allowAll || a.users.includes(m.senderId)) return true;
  return m.chatType === "group" && a.groups.includes(m.groupId ?? m.chatId);
}

/**
 * A download's body, refused (`oversize`, permanent) once it is over `max` bytes (0: no limit):
 * by its declared Content-Length before anything is read, else as soon as the bytes read pass
 * the limit (the rest is never read: a body that never ends costs at most `max`).
 */
async function readCapped(res: Response, max: number): Promise<Buffer> {
  const tooLarge = () => Object.assign(new Error("the attachment is larger than it said"), { permanent: true, oversize: true });
  const declared = Number(res.headers.get("content-length") ?? "");
  if (max > 0 && Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (max > 0 && total > max) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

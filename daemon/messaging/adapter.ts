import type { Logger } from "../log/logger.js";
import type { HttpPlugins } from "../http/plugins.js";

/**
 * The contract between the channel layer (daemon/messaging/) and one platform adapter
 * (Telegram, LINE, ...). The layer owns sessions, commands, queueing, access, delivery and the
 * inbound store; an adapter owns only its platform: receiving, acknowledging, sending within the
 * platform's limits, and rendering Markdown the way the platform shows it.
 *
 * An adapter is registered with one line in daemon/messaging/platforms.ts (lazy import).
 * Changes to this file are additive only (another adapter depends on it).
 */

/** Who may talk to the bot: per platform (and profile), from config `<platform>.allow_*`. */
export interface AccessList {
  /** Platform user ids allowed in direct chats and anywhere else. */
  users: string[];
  /** Group chat ids (Telegram groups/supergroups, LINE groups) whose members are allowed. */
  groups: string[];
  /** Room ids (LINE rooms; platforms without rooms leave it empty). */
  rooms: string[];
  /** The development escape hatch: everyone is allowed (a warning is logged at start). */
  allowAll: boolean;
}

/** Where an inbound message was written: a direct chat, a group, or a room. */
export type ChatType = "user" | "group" | "room";

/** An image the user sent, already downloaded by the adapter. */
export interface InboundImage {
  /** e.g. image/jpeg */
  mime: string;
  /** The bytes, base64 (the layer stores them before acknowledging, then hands them to the model). */
  base64: string;
  name?: string;
}

/** One inbound event, normalised by the adapter. */
export interface InboundMessage {
  /** The platform's unique id of the event (update id, webhook event id): the dedup key. */
  eventId: string;
  /**
   * The conversation: a chat id, or `<chat>:<thread>` where the platform has threads. Replies
   * and delivery address this string back to the same adapter's `send`.
   */
  chatId: string;
  chatType: ChatType;
  /** The sender's platform user id (logged when refused, so the owner can allow it). */
  senderId: string;
  senderName?: string;
  /** For groups/rooms: the group or room id the allowlist checks (usually the chatId). */
  groupId?: string;
  text: string;
  images?: InboundImage[];
  /** Platform data the adapter wants back when replying (LINE: replyToken, its expiry). Opaque to the layer. */
  reply?: Record<string, string>;
  /** Epoch ms the platform says it was sent (or receipt time). */
  at: number;
}

/** What the layer hands an adapter to send. */
export interface OutboundMessage {
  /** Markdown, as the agent wrote it. The adapter renders it for the platform and splits it (splitText). */
  text: string;
  /** Absolute paths of images to send as images (after the text). */
  images?: string[];
  /** The `reply` data of the inbound message this answers, when it answers one. */
  reply?: Record<string, string>;
}

/** The platform's hard limits, used by the layer's splitter and shown in `channels status`. */
export interface PlatformLimits {
  /** Characters per text message (Telegram 4096, LINE 4500 per bubble). */
  maxTextChars: number;
  /** Messages per API call (LINE: 5); omit when one per call. */
  maxMessagesPerCall?: number;
}

export type AdapterState = "starting" | "running" | "retrying" | "stopped" | "error" | "refused";

/** One adapter's state for `agent channels status` and the TUI. */
export interface AdapterStatus {
  state: AdapterState;
  /** The last platform error (message only; never a token), and when. */
  lastError: string | null;
  lastErrorAt: number | null;
  counts: { inbound: number; outbound: number; refused: number; errors: number };
  /** e.g. "long polling", "webhook https://…/telegram/…". */
  detail?: string;
}

/** A fresh status: nothing counted, no error yet. */
export function newAdapterStatus(state: AdapterState): AdapterStatus {
  return { state, lastError: null, lastErrorAt: null, counts: { inbound: 0, outbound: 0, refused: 0, errors: 0 } };
}

/** Keeps an adapter's last error for its status (the layer counts errors through ctx.error). */
export function noteAdapterError(status: AdapterStatus, error: unknown, at: number): void {
  status.lastError = error instanceof Error ? error.message : String(error);
  status.lastErrorAt = at;
}

/** A chat command the layer understands (for a platform's command menu). */
export interface ChatCommand {
  name: string;
  description: string;
}

/** Result of storing an inbound message: the adapter acknowledges the platform only after this resolves. */
export interface StoreResult {
  /** True when the event id was seen before (the adapter acknowledges and does nothing else). */
  duplicate: boolean;
  /** True when the sender is outside the allowlists: no turn will run (LINE then offers no get-answer button). */
  refused?: boolean;
}

/** What the layer gives an adapter at start. */
export interface AdapterContext {
  platform: string;
  profile: string;
  log: Logger;
  /** The adapter's own directory for state (created; inside the home, mode 0700). */
  dataDir: string;
  /** The platform's section of the profile's effective config (e.g. `config.telegram`). */
  config: Record<string, unknown>;
  /** The profile's environment (process env, `.env` filling gaps): credentials live here. */
  env: NodeJS.ProcessEnv;
  access: AccessList;
  /**
   * Hand an inbound event to the layer. Resolves once it is durably stored (and deduplicated by
   * `eventId`); only then may the adapter acknowledge it to the platform. The turn runs later.
   */
  receive(msg: InboundMessage): Promise<StoreResult>;
  /** A durable "seen" set for ids the adapter dedups itself (survives a restart). */
  dedup: DedupStore;
  /** Run `fn`, retrying platform API errors with exponential backoff; errors are logged and counted. */
  retry<T>(what: string, fn: () => Promise<T>, opts?: { attempts?: number; signal?: AbortSignal }): Promise<T>;
  /** Record an error for status (already done by `retry`). */
  error(err: unknown): void;
  /** Set the state shown in `channels status`. */
  setState(state: AdapterState, detail?: string): void;
  /** The chat commands (for Telegram's menu). */
  commands: ChatCommand[];
  /** Routes on the daemon's HTTP listener (webhooks); optional: the adapter may listen on its own port. */
  http?: HttpPlugins;
}

/** A durable set of event ids with an age limit. */
export interface DedupStore {
  /** True when `id` was already marked; marks it otherwise (durably, before resolving). */
  seen(id: string): Promise<boolean>;
}

/** A platform adapter. One instance per (platform, profile). */
export interface MessagingAdapter {
  readonly platform: string;
  readonly limits: PlatformLimits;
  /** Connect and begin receiving; resolve once receiving (a failure keeps retrying in the background). */
  start(ctx: AdapterContext): Promise<void>;
  /** Stop receiving and sending; resolve when nothing of the adapter runs. */
  stop(): Promise<void>;
  /** Send a reply or a delivery to a chat; throws (an AgentError) when the platform refuses for good. */
  send(chatId: string, msg: OutboundMessage): Promise<void>;
  /** Show "typing…" in the chat while a turn runs (called every few seconds); optional. */
  typing?(chatId: string): Promise<void>;
  status(): AdapterStatus;
  /**
   * The chat a delivery that names only the platform goes to (`deliver: teams`), or null/absent
   * when the platform has no such default (Telegram, LINE: a chat must be named).
   */
  readonly defaultChat?: string | null;
}

/** What platforms.ts registers: builds an adapter (no I/O until `start`). */
export interface AdapterFactory {
  platform: string;
  limits: PlatformLimits;
  /**
   * The credential identity of this platform's config (e.g. the bot token's id part), or null
   * when the profile does not configure the platform. Two profiles with the same identity: the
   * second is refused by name.
   */
  identity(config: Record<string, unknown>, env: NodeJS.ProcessEnv): string | null;
  /** Allowlists from the config section and environment. */
  access(config: Record<string, unknown>, env: NodeJS.ProcessEnv): AccessList;
  create(): MessagingAdapter;
  /**
   * Where `agent channels allow|deny <platform> <id> --group` writes: the config list and the
   * access list it feeds. Default: `allow_groups` → groups (Discord: `allow_channels`; Matrix: `allow_rooms` → rooms).
   */
  groupList?: { key: string; access: "groups" | "rooms" };
}

/**
 * A platform's id (a sender, a room) as one word of a command line the log suggests
 * (`agent channels allow matrix <id>`): as it is when it holds only plain characters, else in
 * single quotes. The id comes from the platform, and a Matrix id may hold `;`, `$`, `!` or a
 * backtick: pasted as it is, a shell would run what follows them.
 */
export function shellWord(id: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(id) ? id : `'${id.replace(/'/g, "'\\''")}'`;
}

/**
 * The Matrix adapter (matrix-js-sdk, loaded on first use): the SDK's sync loop in, its send API
 * out. The sync state (with its token) is kept in the adapter's data directory by the daemon's
 * atomic write, so after a restart, even a kill -9, sync resumes where it was and old messages
 * are not answered again (the layer's inbound store drops a replayed event id besides).
 * Encrypted rooms use the SDK's Rust crypto where it loads; elsewhere they are refused with a
 * message. docs/messaging.md#matrix is the user's reference.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { envFlag, envValue } from "../../../shared/config/env.js";
import { AgentError } from "../../../shared/errors.js";
import {
  newAdapterStatus,
  type AccessList,
  type AdapterContext,
  type AdapterFactory,
  type AdapterStatus,
  type MessagingAdapter,
  type OutboundMessage,
  type PlatformLimits,
  shellWord,
} from "../adapter.js";
import { KnownThreads } from "../known-threads.js";
import { splitText } from "../split.js";
import { withTimeout } from "../start-timeout.js";
import { type MatrixSettings, matrixSettings, matrixToken, route } from "./matrix-settings.js";
import { type MatrixSyncStore, openSyncStore } from "./matrix-sync-store.js";

type Sdk = typeof import("matrix-js-sdk");
type Client = import("matrix-js-sdk").MatrixClient;
type Room = import("matrix-js-sdk").Room;
type MatrixEvent = import("matrix-js-sdk").MatrixEvent;

/** Matrix has no hard text limit below the 64 KiB event; long answers are still cut for readability. */
export const MATRIX_LIMITS: PlatformLimits = { maxTextChars: 16_000 };
/** The first sync (with its retries) must be done by then, or the start fails (and never hangs the daemon's stop). */
const PREPARED_TIMEOUT_MS = 180_000;
const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);

export const matrixFactory: AdapterFactory = {
  platform: "matrix",
  limits: MATRIX_LIMITS,
  identity(config, env) {
    const t = matrixToken(config, env);
    if (!t) return null;
    const user = envValue("MATRIX_USER_ID", env)?.trim() || (typeof config.user_id === "string" ? config.user_id : "");
    // The user id names the bot; without one, a token's first characters do (never the whole token).
    return user ? `user:${user}` : `token:${t.slice(0, 6)}`;
  },
  access(config, env): AccessList {
    return {
      users: list(config.allow_users),
      groups: [],
      rooms: list(config.allow_rooms),
      allowAll: config.allow_all_users === true || envFlag("MATRIX_ALLOW_ALL_USERS", env),
    };
  },
  create: () => new MatrixAdapter(),
  groupList: { key: "allow_rooms", access: "rooms" },
};

/** `<room>` or `<room>/<thread root event id>` (room ids never hold a slash). */
function parseChat(chatId: string): { room: string; thread: string | null } {
  const i = chatId.indexOf("/");
  return i < 0 ? { room: chatId, thread: null } : { room: chatId.slice(0, i), thread: chatId.slice(i + 1) };
}

export class MatrixAdapter implements MessagingAdapter {
  readonly platform = "matrix";
  readonly limits = MATRIX_LIMITS;
  private sdk: Sdk | null = null;
  private client: Client | null = null;
  private ctx: AdapterContext | null = null;
  private settings: MatrixSettings | null = null;
  private store: MatrixSyncStore | null = null;
  private me = "";
  /** True from the first PREPARED on: earlier events are history (or the stored state), never answered. */
  private live = false;
  /** Why end-to-end encryption is not available (null: it is). */
  private cryptoUnavailable: string | null = "not started";
  private readonly refusedRooms = new Set<string>();
  private readonly joining = new Set<string>();
  private knownThreads: KnownThreads | null = null;
  private chain: Promise<void> = Promise.resolve();
  private readonly st: AdapterStatus = newAdapterStatus("starting");

  async start(ctx: AdapterContext): Promise<void> {
    this.ctx = ctx;
    const s = matrixSettings(ctx.config, ctx.env);
    this.settings = s;
    const sdk = await import("matrix-js-sdk");
    this.sdk = sdk;
    const logger = sdkLogger(ctx);
    // The SDK's own module-level lines (several per sync) go to the console at debug level: warnings only.
    const { logger: sdkRoot } = await import("matrix-js-sdk/lib/logger.js");
    (sdkRoot as unknown as { setLevel?: (level: string, persist?: boolean) => void }).setLevel?.("warn", false);
    let { userId, deviceId } = s;
    if (!userId || !deviceId) {
      const probe = sdk.createClient({ baseUrl: s.homeserver, accessToken: s.accessToken, logger });
      const who = await ctx.retry("whoami", () => probe.whoami());
      userId ||= who.user_id;
      deviceId ||= who.device_id ?? "";
    }
    this.me = userId;
    this.knownThreads = await KnownThreads.open(join(ctx.dataDir, "threads.json"));
    this.store = await openSyncStore(sdk, join(ctx.dataDir, "sync.json"), ctx.log);
    const recoveryKey = s.recoveryKey;
    const client = sdk.createClient({
      baseUrl: s.homeserver,
      accessToken: s.accessToken,
      userId,
      ...(deviceId ? { deviceId } : {}),
      store: this.store,
      logger,
      ...(recoveryKey
        ? {
            cryptoCallbacks: {
              getSecretStorageKey: async ({ keys }: { keys: Record<string, unknown> }) => {
                const { decodeRecoveryKey } = await import("matrix-js-sdk/lib/crypto-api/index.js");
                const id = Object.keys(keys)[0];
                return id ? ([id, decodeRecoveryKey(recoveryKey)] as [string, Uint8Array<ArrayBuffer>]) : null;
              },
            },
          }
        : {}),
    });
    this.client = client;
    await this.initCrypto(client, deviceId);
    client.on(sdk.RoomEvent.Timeline, (event, room, toStart, removed, data) => {
      if (!this.live || toStart || removed || data?.liveEvent === false || !room) return;
      this.enqueue(() => this.onEvent(event, room));
    });
    client.on(sdk.RoomEvent.MyMembership, (room, membership) => {
      if (membership === "invite") this.enqueue(() => this.onInvite(room));
    });
    const prepared = new Promise<void>((resolve, reject) => {
      client.on(sdk.ClientEvent.Sync, (state, _prev, data) => {
        if (state === sdk.SyncState.Prepared && !this.live) {
          this.live = true;
          resolve();
          // Invites that waited while the daemon was down.
          for (const room of client.getRooms()) if (room.getMyMembership() === "invite") this.enqueue(() => this.onInvite(room));
          if (recoveryKey && !this.cryptoUnavailable) void this.restoreKeys(client);
        } else if (state === sdk.SyncState.Error) {
          const msg = (data?.error as Error | undefined)?.message ?? "sync failed";
          ctx.error(new Error(msg));
          if (!this.live) reject(new AgentError("messaging.platform_error", `matrix: ${msg}`));
          else ctx.setState("retrying", `sync: ${msg}`);
        } else if (state === sdk.SyncState.Syncing && this.live) ctx.setState("running", this.detail());
      });
    });
    await client.startClient({ initialSyncLimit: 10, disablePresence: true } as Parameters<Client["startClient"]>[0]);
    try {
      await withTimeout(prepared, PREPARED_TIMEOUT_MS, "matrix: the first sync did not complete");
    } catch (error) {
      client.stopClient();
      throw error;
    }
    ctx.setState("running", this.detail());
  }

  private detail(): string {
    const s = this.settings as MatrixSettings;
    return `sync as ${this.me} on ${s.homeserver}${this.store?.resumed ? " (resumed from the stored token)" : ""}; encryption: ${this.cryptoUnavailable ? `unavailable (${this.cryptoUnavailable})` : "on"}`;
  }

  /** The SDK's Rust crypto, where it loads: it needs the device id; its keys are kept in memory. */
  private async initCrypto(client: Client, deviceId: string): Promise<void> {
    const ctx = this.ctx as AdapterContext;
    if (!deviceId) {
      this.cryptoUnavailable = "the access token's device id is unknown (set MATRIX_DEVICE_ID)";
      return;
    }
    try {
      await client.initRustCrypto({ useIndexedDB: false });
      this.cryptoUnavailable = null;
      // The SDK turns the crypto module's tracing on at debug level, to the console: warnings only.
      try {
        const wasm = await import("@matrix-org/matrix-sdk-crypto-wasm");
        new wasm.Tracing(wasm.LoggerLevel.Warn).turnOn();
      } catch {}
    } catch (error) {
      this.cryptoUnavailable = `the crypto module did not load: ${(error as Error).message}`.slice(0, 300);
      ctx.log.warn("matrix: end-to-end encryption is unavailable; encrypted rooms are refused", { profile: ctx.profile, reason: this.cryptoUnavailable });
    }
  }

  /** MATRIX_RECOVERY_KEY: the backup key from secret storage, then the room keys from the backup. */
  private async restoreKeys(client: Client): Promise<void> {
    const ctx = this.ctx as AdapterContext;
    const crypto = client.getCrypto();
    if (!crypto) return;
    try {
      await crypto.loadSessionBackupPrivateKeyFromSecretStorage();
      await crypto.checkKeyBackupAndEnable();
      const r = await crypto.restoreKeyBackup();
      ctx.log.info("matrix: room keys restored from the key backup", { profile: ctx.profile, imported: r.imported, total: r.total });
    } catch (error) {
      ctx.error(error);
      ctx.log.warn("matrix: restoring keys with MATRIX_RECOVERY_KEY failed", { profile: ctx.profile, error: (error as Error).message });
    }
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = null;
    this.live = false;
    c?.stopClient();
    await this.chain.catch(() => undefined);
    await this.store?.flush();
    this.st.state = "stopped";
  }

  status(): AdapterStatus {
    return { ...this.st, counts: { ...this.st.counts } };
  }

  /** Events are handled one at a time, in the order they synced. */
  private enqueue(fn: () => Promise<void>): void {
    const ctx = this.ctx as AdapterContext;
    this.chain = this.chain.then(fn).catch((error: unknown) => {
      ctx.error(error);
      ctx.log.error("matrix: handling an event failed", { profile: ctx.profile, error: (error as Error).message });
    });
  }

  private allowedUser(user: string): boolean {
    const a = (this.ctx as AdapterContext).access;
    return a.allowAll || a.users.includes(user);
  }

  private async onInvite(room: Room): Promise<void> {
    const ctx = this.ctx as AdapterContext;
    const client = this.client;
    if (!client || this.joining.has(room.roomId) || room.getMyMembership() !== "invite") return;
    const inviter = room.currentState.getMember(this.me)?.events.member?.getSender() ?? room.getDMInviter() ?? "";
    if (!this.allowedUser(inviter)) {
      this.st.counts.refused++;
      ctx.log.warn(`messaging: refused a matrix invite from an outsider; allow it with \`agent channels allow matrix ${shellWord(inviter)}\``, {
        platform: "matrix",
        profile: ctx.profile,
        sender: inviter,
        chat: room.roomId,
      });
      return;
    }
    this.joining.add(room.roomId);
    try {
      await ctx.retry("join", () => client.joinRoom(room.roomId), { attempts: 3 });
      ctx.log.info("matrix: joined a room on an allowed user's invite", { profile: ctx.profile, room: room.roomId, inviter });
    } finally {
      this.joining.delete(room.roomId);
    }
  }

  private async onEvent(event: MatrixEvent, room: Room): Promise<void> {
    const ctx = this.ctx as AdapterContext;
    const client = this.client;
    if (!client) return;
    const sender = event.getSender() ?? "";
    if (sender === this.me || !event.getId() || event.isRedacted()) return;
    if (event.isEncrypted()) {
      if (this.cryptoUnavailable) return this.refuseEncrypted(room, sender);
      await client.decryptEventIfNeeded(event);
      if (event.isDecryptionFailure()) {
        ctx.log.warn("matrix: a message could not be decrypted", { profile: ctx.profile, room: room.roomId, sender });
        return;
      }
    }
    if (event.getType() !== "m.room.message") return;
    const content = event.getContent() as { msgtype?: string; body?: string; "m.mentions"?: { user_ids?: string[] }; "m.relates_to"?: Record<string, any> };
    if (content.msgtype !== "m.text" && content.msgtype !== "m.notice") return;
    const rel = content["m.relates_to"];
    if (rel?.rel_type === "m.replace") return; // an edit
    const threadRoot = rel?.rel_type === "m.thread" && typeof rel.event_id === "string" ? (rel.event_id as string) : null;
    let text = String(content.body ?? "");
    if (rel?.["m.in_reply_to"] && !rel.is_falling_back) text = text.replace(/^(> .*\n)+\n?/, "");
    const displayName = room.getMember(this.me)?.name;
    const mentioned =
      content["m.mentions"]?.user_ids?.includes(this.me) === true ||
      text.includes(this.me) ||
      (!!displayName && displayName !== this.me && new RegExp(`(^|\\W)${escapeRe(displayName)}(\\W|$)`, "i").test(text));
    text = text
      .split(this.me)
      .join("")
      .replace(/^\s*[:,]\s*/, "")
      .trim();
    const dm = room.getJoinedMemberCount() <= 2;
    const eventId = event.getId() as string;
    const thread = route(this.settings as MatrixSettings, {
      dm,
      mentioned,
      threadRoot,
      knownThread: !!threadRoot && this.knownThreads?.has(threadRoot) === true,
      eventId,
    });
    if (thread === undefined || !text) return;
    const chatId = thread ? `${room.roomId}/${thread}` : room.roomId;
    const r = await ctx.receive({
      eventId,
      chatId,
      chatType: dm ? "user" : "room",
      senderId: sender,
      senderName: room.getMember(sender)?.name ?? sender,
      groupId: room.roomId,
      text,
      reply: { eventId },
      at: event.getTs() || Date.now(),
    });
    if (!r.duplicate && !r.refused) this.st.counts.inbound++;
  }

  /** Without crypto an encrypted room cannot be read: its allowed users are told once, in plain text. */
  private async refuseEncrypted(room: Room, sender: string): Promise<void> {
    const ctx = this.ctx as AdapterContext;
    const a = ctx.access;
    if (!this.allowedUser(sender) && !a.rooms.includes(room.roomId)) return;
    if (this.refusedRooms.has(room.roomId)) return;
    this.refusedRooms.add(room.roomId);
    this.st.counts.refused++;
    ctx.log.warn("matrix: refused an encrypted room: end-to-end encryption is unavailable", {
      profile: ctx.profile,
      room: room.roomId,
      reason: this.cryptoUnavailable,
    });
    const body = `This room is end-to-end encrypted, and encryption is unavailable to this agent (${this.cryptoUnavailable}), so it cannot read the messages here. Talk to it in a room without encryption.`;
    await this.rawSend(room.roomId, { msgtype: "m.notice", body });
  }

  /** Sends without the SDK's encryption step (the one notice to an encrypted room it cannot encrypt for). */
  private async rawSend(roomId: string, content: Record<string, unknown>): Promise<void> {
    const client = this.client as Client;
    const sdk = this.sdk as Sdk;
    const txn = `agent${Date.now()}${randomBytes(4).toString("hex")}`;
    const path = `/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${encodeURIComponent(txn)}`;
    await (this.ctx as AdapterContext).retry("send", () => client.http.authedRequest(sdk.Method.Put, path, undefined, content), { attempts: 3 });
    this.st.counts.outbound++;
  }

  async typing(chatId: string): Promise<void> {
    await this.client?.sendTyping(parseChat(chatId).room, true, 8000);
  }

  async send(chatId: string, msg: OutboundMessage): Promise<void> {
    const client = this.client;
    const ctx = this.ctx;
    if (!client || !ctx) throw new AgentError("messaging.no_adapter", "matrix: the adapter is not running");
    const { room, thread } = parseChat(chatId);
    const encrypted = client.getRoom(room)?.hasEncryptionStateEvent() === true;
    if (encrypted && this.cryptoUnavailable)
      throw Object.assign(
        new AgentError("messaging.platform_error", `matrix: ${room} is encrypted and encryption is unavailable (${this.cryptoUnavailable})`),
        {
          permanent: true,
        },
      );
    // A thread the bot answers in is remembered first: a reply to this answer may sync before the send returns.
    if (thread) await this.knownThreads?.add(thread);
    for (const body of splitText(msg.text, MATRIX_LIMITS.maxTextChars)) {
      const content: Record<string, unknown> = { msgtype: "m.text", body };
      const rel = relation(thread, msg);
      if (rel) content["m.relates_to"] = rel;
      await ctx.retry("send", async () => {
        try {
          return await client.sendEvent(room, "m.room.message" as never, content as never);
        } catch (error) {
          const status = (error as { httpStatus?: number }).httpStatus;
          if (typeof status === "number" && status >= 400 && status < 500 && status !== 429) Object.assign(error as object, { permanent: true });
          throw error;
        }
      });
      this.st.counts.outbound++;
    }
    for (const path of msg.images ?? []) await this.sendImage(ctx, client, room, path, encrypted, relation(thread, msg));
  }

  /** An image the agent produced: uploaded to the media repository, then sent as m.image (not in encrypted rooms: their files need encrypting). */
  private async sendImage(
    ctx: AdapterContext,
    client: Client,
    room: string,
    path: string,
    encrypted: boolean,
    rel: Record<string, unknown> | null,
  ): Promise<void> {
    const name = basename(path);
    if (encrypted) {
      await ctx.retry("send", () =>
        client.sendEvent(
          room,
          "m.room.message" as never,
          { msgtype: "m.notice", body: `(an image, ${name}, is not sent to an encrypted room)`, ...(rel ? { "m.relates_to": rel } : {}) } as never,
        ),
      );
      return;
    }
    const data = await readFile(path);
    const type = /\.png$/i.test(name) ? "image/png" : /\.gif$/i.test(name) ? "image/gif" : /\.webp$/i.test(name) ? "image/webp" : "image/jpeg";
    const up = await ctx.retry("upload", () => client.uploadContent(data, { name, type }));
    const content = {
      msgtype: "m.image",
      body: name,
      url: up.content_uri,
      info: { mimetype: type, size: data.length },
      ...(rel ? { "m.relates_to": rel } : {}),
    };
    await ctx.retry("send", () => client.sendEvent(room, "m.room.message" as never, content as never));
    this.st.counts.outbound++;
  }
}

/**
 * The SDK's logger: its debug and info lines (many per sync) are dropped, its errors reach the
 * daemon's log as warnings, cut short (the SDK never logs the access token).
 */
function sdkLogger(ctx: AdapterContext): import("matrix-js-sdk/lib/logger.js").Logger {
  const drop = () => undefined;
  const make = (prefix: string): import("matrix-js-sdk/lib/logger.js").Logger => ({
    trace: drop,
    debug: drop,
    info: drop,
    warn: drop,
    error: (...args: unknown[]) =>
      ctx.log.warn(
        `matrix-js-sdk${prefix}: ${args.map((a) => (a instanceof Error ? a.message : typeof a === "string" ? a : JSON.stringify(a))).join(" ")}`.slice(0, 500),
        {
          profile: ctx.profile,
        },
      ),
    getChild: (child: string) => make(`${prefix}${child}`),
  });
  return make("");
}

/** The thread relation of an answer (its fallback replies to the message it answers). */
function relation(thread: string | null, msg: OutboundMessage): Record<string, unknown> | null {
  return thread ? { rel_type: "m.thread", event_id: thread, is_falling_back: true, "m.in_reply_to": { event_id: msg.reply?.eventId ?? thread } } : null;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { CallContext } from "../../shared/protocol/index.js";
import type { BoardEvent } from "../../shared/protocol/kanban.js";
import type { ChannelInfo } from "../../shared/protocol/messaging.js";
import { DEFAULT_PROFILE, profilePaths } from "../../shared/paths.js";
import type { DaemonContext } from "../context.js";
import { DocStore } from "../store/doc-store.js";
import type {
  AccessList,
  AdapterContext,
  AdapterFactory,
  AdapterState,
  AdapterStatus,
  ChatCommand,
  InboundMessage,
  MessagingAdapter,
  StoreResult,
} from "./adapter.js";
import { shellWord } from "./adapter.js";
import type { DeliveryOutcome, MessagingApi } from "./api.js";
import { InboundStore, type StoredInbound } from "./inbound-store.js";
import { PLATFORMS, STARTED_BY_ENV } from "./platforms.js";

/** The commands a chat understands (also Telegram's command menu). */
export const CHAT_COMMANDS: ChatCommand[] = [
  { name: "new", description: "Start a fresh session" },
  { name: "stop", description: "Stop the running turn" },
  { name: "status", description: "Show this chat's session and queue" },
  { name: "help", description: "List the commands" },
  { name: "kanban", description: "subscribe|unsubscribe [board] [task]: task notifications" },
];

const HELP = [
  "Commands:",
  ...CHAT_COMMANDS.map((c) => `/${c.name}: ${c.description}`),
  "Anything else is a message to the agent; messages sent during a turn wait their turn.",
].join("\n");

interface ChatRecord {
  platform: string;
  profile: string;
  chatId: string;
  sessionId: string | null;
  updatedAt: number;
}

interface Subscription {
  platform: string;
  profile: string;
  chatId: string;
  board: string;
  /** null: every task of the board. */
  taskId: string | null;
}

interface ChatsDoc {
  chats: Record<string, ChatRecord>;
  subscriptions: Subscription[];
}

/** One running (or refused) adapter: a platform for a profile. */
interface Channel {
  key: string;
  platform: string;
  profile: string;
  factory: AdapterFactory;
  adapter: MessagingAdapter | null;
  access: AccessList;
  /** State set by the layer (refused, error at start) over the adapter's own. */
  override: { state: AdapterState; detail: string } | null;
  counts: AdapterStatus["counts"];
  lastError: string | null;
  lastErrorAt: number | null;
  state: AdapterState;
  detail: string | null;
}

/** The per-chat worker: one turn at a time, the rest queued in order. */
interface ChatQueue {
  items: StoredInbound[];
  running: boolean;
  sessionId: string | null;
}

const chatKey = (platform: string, profile: string, chatId: string) => `${platform}/${profile}/${chatId}`;
const firstLine = (s: string) => (s.split("\n").find((l) => l.trim()) ?? "").trim().slice(0, 300);
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/**
 * The channel layer: starts an adapter per configured platform and profile, stores what they
 * receive before they acknowledge it, maps each chat to a `messaging` session, runs one turn
 * at a time per chat (later messages wait in order), answers the chat commands, checks the
 * allowlists, and delivers for cron, kanban subscriptions and handoffs.
 */
export class MessagingService implements MessagingApi {
  private readonly byKey = new Map<string, Channel>();
  private readonly queues = new Map<string, ChatQueue>();
  private inbound!: InboundStore;
  private chats!: DocStore<ChatsDoc>;
  private readonly dir: string;
  private readonly stopping = new AbortController();
  private unsubscribeKanban: (() => void) | null = null;
  /** Resolves when a chat's queue is empty and idle (tests, benchmarks, stop). */
  private readonly idleWaiters = new Set<() => void>();
  /** Hook for the benchmark: called when a message is handed to its turn. */
  onHanded: ((msg: InboundMessage) => void) | null = null;

  constructor(private readonly ctx: DaemonContext) {
    this.dir = join(ctx.paths.data, "messaging");
  }

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    this.inbound = new InboundStore(this.dir);
    this.chats = await DocStore.open<ChatsDoc>({
      file: join(this.dir, "chats.json"),
      kind: "messaging-chats",
      version: 1,
      initial: () => ({ chats: {}, subscriptions: [] }),
    });
    this.pendingAtStart = this.inbound.load();
  }

  private pendingAtStart: StoredInbound[] = [];
  /** Settles once every adapter has started (or failed to). */
  started: Promise<void> = Promise.resolve();

  /**
   * Once the daemon is ready: subscribe to kanban events, start the adapters (platform calls do
   * not hold up the daemon's start), then handle what was stored but not handled before the
   * last stop, in order.
   */
  ready(): void {
    if (this.ctx.services.has("kanban")) this.unsubscribeKanban = this.ctx.services.get("kanban").onEvent((e) => void this.onKanban(e));
    this.started = this.startAdapters()
      .catch((error) => this.ctx.log.error("messaging: starting the adapters failed", { error: (error as Error).message }))
      .then(() => {
        const pending = this.pendingAtStart;
        this.pendingAtStart = [];
        if (this.stopping.signal.aborted) return;
        for (const e of pending) this.enqueue(e);
        if (pending.length) this.ctx.log.info("messaging: handling inbound messages kept across the restart", { count: pending.length });
      });
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.started;
    this.unsubscribeKanban?.();
    for (const c of this.byKey.values()) {
      try {
        await c.adapter?.stop();
      } catch (error) {
        this.ctx.log.warn("messaging: adapter stop failed", { platform: c.platform, profile: c.profile, error: (error as Error).message });
      }
    }
    this.inbound?.close();
  }

  // ---------------------------------------------------------------- adapters

  private async startAdapters(): Promise<void> {
    const profiles = this.ctx.services.has("profiles") ? this.ctx.services.get("profiles").names() : [DEFAULT_PROFILE];
    const identities = new Map<string, string>();
    const homeConfig = this.ctx.config.current() as unknown as Record<string, unknown>;
    for (const [platform, load] of Object.entries(PLATFORMS)) {
      for (const profile of profiles) {
        const { config, env } = await this.profileConfig(profile);
        const section = (config[platform] ?? {}) as Record<string, unknown>;
        if (section.enabled !== true && !STARTED_BY_ENV[platform]?.(env)) continue;
        // A profile that only inherits the home's section is not a second configuration of it.
        if (profile !== DEFAULT_PROFILE && JSON.stringify(section) === JSON.stringify(homeConfig[platform] ?? {}) && identities.size) {
          const inheritedFrom = identities.get(`${platform}:${(await load()).identity(section, env)}`);
          if (inheritedFrom === DEFAULT_PROFILE) continue;
        }
        const factory = await load();
        const channel: Channel = {
          key: `${platform}/${profile}`,
          platform,
          profile,
          factory,
          adapter: null,
          access: factory.access(section, env),
          override: null,
          counts: { inbound: 0, outbound: 0, refused: 0, errors: 0 },
          lastError: null,
          lastErrorAt: null,
          state: "starting",
          detail: null,
        };
        this.byKey.set(channel.key, channel);
        const identity = factory.identity(section, env);
        if (identity === null) {
          this.refuse(channel, "error", `${platform} is enabled but has no credential (see docs/messaging.md)`);
          continue;
        }
        const holder = identities.get(`${platform}:${identity}`);
        if (holder !== undefined) {
          this.refuse(channel, "refused", `the ${platform} bot credential of profile "${profile}" is already used by profile "${holder}"; one bot per profile`);
          continue;
        }
        identities.set(`${platform}:${identity}`, profile);
        if (channel.access.allowAll)
          this.ctx.log.warn(`messaging: ${platform} (profile ${profile}) lets EVERYONE talk to the agent (allow_all_users); for development only`, {
            platform,
            profile,
          });
        await this.startChannel(channel, section, env);
      }
    }
  }

  private refuse(channel: Channel, state: AdapterState, detail: string): void {
    channel.override = { state, detail };
    channel.lastError = detail;
    channel.lastErrorAt = Date.now();
    this.ctx.log.error(`messaging: ${detail}`, { platform: channel.platform, profile: channel.profile });
  }

  private async startChannel(channel: Channel, section: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<void> {
    const adapter = channel.factory.create();
    channel.adapter = adapter;
    const dataDir = join(this.dir, channel.platform, channel.profile);
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const log = this.ctx.log;
    const actx: AdapterContext = {
      platform: channel.platform,
      profile: channel.profile,
      log,
      dataDir,
      config: section,
      env,
      access: channel.access,
      receive: (msg) => this.receive(channel, msg),
      dedup: this.inbound.dedup(channel.key),
      retry: (what, fn, opts) => this.retry(channel, what, fn, opts),
      error: (err) => this.noteError(channel, err),
      setState: (state, detail) => {
        channel.state = state;
        if (detail !== undefined) channel.detail = detail;
      },
      commands: CHAT_COMMANDS,
      ...(this.ctx.services.has("httpPlugins") ? { http: this.ctx.services.get("httpPlugins") } : {}),
    };
    try {
      await adapter.start(actx);
      if (channel.state === "starting") channel.state = "running";
      log.info(`messaging: ${channel.platform} adapter started`, { platform: channel.platform, profile: channel.profile, detail: channel.detail });
    } catch (error) {
      this.noteError(channel, error);
      channel.state = "error";
      log.error(`messaging: the ${channel.platform} adapter did not start`, { profile: channel.profile, error: (error as Error).message });
    }
  }

  private noteError(channel: Channel, err: unknown): void {
    channel.counts.errors++;
    channel.lastError = redact((err as Error)?.message ?? String(err));
    channel.lastErrorAt = Date.now();
  }

  private async retry<T>(channel: Channel, what: string, fn: () => Promise<T>, opts?: { attempts?: number; signal?: AbortSignal }): Promise<T> {
    const cfg = this.ctx.config.current().messaging;
    const attempts = opts?.attempts ?? cfg.retry_attempts;
    let delay = cfg.retry_base_seconds * 1000;
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (error) {
        this.noteError(channel, error);
        const permanent = (error as { permanent?: boolean }).permanent === true;
        this.ctx.log.warn(`messaging: ${channel.platform} ${what} failed${permanent || i >= attempts ? "" : `; retrying in ${delay} ms`}`, {
          platform: channel.platform,
          profile: channel.profile,
          attempt: i,
          error: redact((error as Error).message),
        });
        if (permanent || i >= attempts || this.stopping.signal.aborted || opts?.signal?.aborted) throw error;
        await sleep(delay, opts?.signal ?? this.stopping.signal);
        delay = Math.min(delay * 2, 300_000);
      }
    }
  }

  private async profileConfig(profile: string): Promise<{ config: Record<string, unknown>; env: NodeJS.ProcessEnv }> {
    if (profile === DEFAULT_PROFILE || !this.ctx.services.has("profiles"))
      return { config: this.ctx.config.current() as unknown as Record<string, unknown>, env: this.ctx.config.env() };
    const c = await this.ctx.services.get("profiles").config(profile);
    return { config: c.current() as unknown as Record<string, unknown>, env: c.env() };
  }

  // ---------------------------------------------------------------- inbound

  private allowed(channel: Channel, msg: InboundMessage): boolean {
    const a = channel.access;
    if (a.allowAll) return true;
    if (a.users.includes(msg.senderId)) return true;
    const group = msg.groupId ?? msg.chatId;
    if (msg.chatType === "group" && a.groups.includes(group)) return true;
    if (msg.chatType === "room" && a.rooms.includes(group)) return true;
    return false;
  }

  /** An adapter's inbound event: checked, stored durably, then queued; resolves once stored. */
  private async receive(channel: Channel, msg: InboundMessage): Promise<StoreResult> {
    if (!this.allowed(channel, msg)) {
      channel.counts.refused++;
      this.ctx.log.warn(
        `messaging: refused a ${channel.platform} message from an outsider; allow it with \`agent channels allow ${channel.platform} ${msg.chatType === "user" ? shellWord(msg.senderId) : `${shellWord(msg.groupId ?? msg.chatId)} --group`}\``,
        { platform: channel.platform, profile: channel.profile, sender: msg.senderId, chat: msg.chatId, chatType: msg.chatType },
      );
      // Remembered, so a redelivery is not logged again.
      return { duplicate: await this.inbound.dedup(channel.key).seen(`refused:${msg.eventId}`), refused: true };
    }
    const e: StoredInbound = { key: `${channel.key}/${msg.eventId}`, platform: channel.platform, profile: channel.profile, msg };
    const r = await this.inbound.put(e);
    if (r.duplicate) return r;
    channel.counts.inbound++;
    this.enqueue(e);
    return r;
  }

  private enqueue(e: StoredInbound): void {
    const key = chatKey(e.platform, e.profile, e.msg.chatId);
    let q = this.queues.get(key);
    if (!q) {
      q = { items: [], running: false, sessionId: null };
      this.queues.set(key, q);
    }
    // /stop and /status answer at once, even while a turn runs.
    const cmd = command(e.msg.text);
    if (cmd && (cmd.name === "stop" || cmd.name === "status" || cmd.name === "help")) {
      void this.immediate(e, q, cmd.name).finally(() => this.inbound.done(e.key));
      return;
    }
    q.items.push(e);
    if (!q.running) void this.pump(key, q);
  }

  private async immediate(e: StoredInbound, q: ChatQueue, name: string): Promise<void> {
    const rec = this.chats.data.chats[chatKey(e.platform, e.profile, e.msg.chatId)];
    if (name === "help") return this.reply(e, HELP);
    if (name === "status") {
      const sessionId = rec?.sessionId ?? null;
      const s = sessionId ? this.ctx.services.get("chat").find(sessionId) : undefined;
      const lines = [
        `Session: ${s ? `${s.id}${s.title ? ` (${s.title})` : ""}, ${s.messageCount} messages` : "none yet (your next message starts one)"}`,
        `Profile: ${e.profile}`,
        `Turn: ${q.running ? "running" : "idle"}; waiting: ${q.items.length}`,
      ];
      return this.reply(e, lines.join("\n"));
    }
    // stop
    const sessionId = q.sessionId ?? rec?.sessionId ?? null;
    const stopped = q.running && sessionId ? this.ctx.services.get("chat").interrupt(sessionId) : false;
    return this.reply(e, stopped ? "Stopped." : "Nothing is running.");
  }

  private async pump(key: string, q: ChatQueue): Promise<void> {
    q.running = true;
    try {
      while (q.items.length && !this.stopping.signal.aborted) {
        const e = q.items.shift() as StoredInbound;
        try {
          await this.handle(e, q);
        } catch (error) {
          this.ctx.log.error("messaging: handling a message failed", {
            platform: e.platform,
            profile: e.profile,
            chat: e.msg.chatId,
            error: (error as Error).message,
          });
          // A turn cut by the daemon's stop is handled again after the restart: nothing to tell the user.
          if (!this.stopping.signal.aborted) await this.reply(e, `Sorry, that failed: ${toAgentError(error).message}`).catch(() => undefined);
        }
        // Stopping mid-turn: the message stays pending and is handled after the restart.
        if (!this.stopping.signal.aborted) this.inbound.done(e.key);
      }
    } finally {
      q.running = false;
      q.sessionId = null;
      if (q.items.length === 0) this.queues.delete(key);
      if (this.idle()) for (const w of this.idleWaiters) w();
    }
  }

  private idle(): boolean {
    for (const q of this.queues.values()) if (q.running || q.items.length) return false;
    return true;
  }

  /** Resolves once no chat has a turn running or a message waiting. */
  whenIdle(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => {
      const w = () => {
        this.idleWaiters.delete(w);
        resolve();
      };
      this.idleWaiters.add(w);
    });
  }

  private async handle(e: StoredInbound, q: ChatQueue): Promise<void> {
    const key = chatKey(e.platform, e.profile, e.msg.chatId);
    const cmd = command(e.msg.text);
    if (cmd?.name === "new") {
      await this.setChat(key, e, null);
      await this.reply(e, "A fresh session starts with your next message.");
      return;
    }
    if (cmd?.name === "kanban") {
      await this.reply(e, await this.kanbanCommand(e, cmd.args));
      return;
    }
    const chat = this.ctx.services.get("chat");
    let sessionId = this.chats.data.chats[key]?.sessionId ?? null;
    if (sessionId && !chat.find(sessionId)) sessionId = null;
    if (!sessionId) {
      const who = e.msg.senderName ? `${e.msg.senderName}` : e.msg.chatId;
      const s = await chat.createSession({ profile: e.profile, kind: "messaging", source: e.platform, title: `${e.platform}: ${who}` });
      sessionId = s.id;
    }
    await this.setChat(key, e, sessionId);
    q.sessionId = sessionId;
    // A turn of this session cut by the last stop resumes by itself at start: this message waits for it.
    while (chat.find(sessionId)?.active && !this.stopping.signal.aborted) await sleep(100, this.stopping.signal);
    if (this.stopping.signal.aborted) return;
    const images = await this.saveImages(e);
    const channel = this.byKey.get(`${e.platform}/${e.profile}`);
    const typing = channel?.adapter?.typing ? setInterval(() => void channel.adapter?.typing?.(e.msg.chatId).catch(() => undefined), 4000) : null;
    void channel?.adapter?.typing?.(e.msg.chatId).catch(() => undefined);
    this.onHanded?.(e.msg);
    try {
      const call: CallContext = { connectionId: 0, profile: e.profile, signal: this.stopping.signal, notify: () => undefined };
      const result = await chat.send(
        { sessionId, prompt: e.msg.text || (images.length ? "(image)" : ""), profile: e.profile, interactive: false, ...(images.length ? { images } : {}) },
        call,
      );
      if (this.stopping.signal.aborted) return;
      const answer = result.footer && !result.answer.includes(result.footer) ? `${result.answer}\n${result.footer}` : result.answer;
      const { text, images: out } = extractImages(answer);
      if (result.stopReason === "interrupted") {
        if (text.trim()) await this.reply(e, text, out);
        return;
      }
      await this.reply(e, text.trim() ? text : "(no answer)", out);
    } finally {
      if (typing) clearInterval(typing);
    }
  }

  private async setChat(key: string, e: { platform: string; profile: string; msg: { chatId: string } }, sessionId: string | null): Promise<void> {
    const prev = this.chats.data.chats[key];
    this.chats.data.chats[key] = { platform: e.platform, profile: e.profile, chatId: e.msg.chatId, sessionId, updatedAt: Date.now() };
    // Only a new mapping must be on disk before the turn; the time of use rides along with the next write.
    if (prev?.sessionId !== sessionId || prev === undefined) await this.chats.write();
  }

  private async saveImages(e: StoredInbound): Promise<string[]> {
    if (!e.msg.images?.length) return [];
    const dir = join(this.dir, "media", e.platform, e.profile);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const paths: string[] = [];
    for (const [i, img] of e.msg.images.entries()) {
      const ext = img.mime === "image/png" ? "png" : img.mime === "image/webp" ? "webp" : img.mime === "image/gif" ? "gif" : "jpg";
      const p = join(dir, `${e.msg.eventId.replace(/[^A-Za-z0-9_.-]/g, "_")}-${i}.${ext}`);
      await writeFile(p, Buffer.from(img.base64, "base64"), { mode: 0o600 });
      paths.push(p);
    }
    return paths;
  }

  private async reply(e: StoredInbound, text: string, images: string[] = []): Promise<void> {
    const channel = this.byKey.get(`${e.platform}/${e.profile}`);
    if (!channel?.adapter) throw new AgentError("messaging.no_adapter", `no ${e.platform} adapter runs for profile ${e.profile}`);
    await channel.adapter.send(e.msg.chatId, { text, ...(images.length ? { images } : {}), ...(e.msg.reply ? { reply: e.msg.reply } : {}) });
    channel.counts.outbound++;
  }

  // ---------------------------------------------------------------- kanban

  private async kanbanCommand(e: StoredInbound, args: string[]): Promise<string> {
    const [verb, ...rest] = args;
    if (verb !== "subscribe" && verb !== "unsubscribe") return "Usage: /kanban subscribe [board] [task id] | /kanban unsubscribe [board] [task id]";
    const taskId = rest.find((a) => /^t_[0-9a-f]+$/.test(a)) ?? null;
    const board = rest.find((a) => a !== taskId) ?? "default";
    const subs = this.chats.data.subscriptions;
    const same = (s: Subscription) =>
      s.platform === e.platform && s.profile === e.profile && s.chatId === e.msg.chatId && s.board === board && s.taskId === taskId;
    const what = taskId ? `task ${taskId} of board ${board}` : `board ${board}`;
    if (verb === "subscribe") {
      if (!subs.some(same)) subs.push({ platform: e.platform, profile: e.profile, chatId: e.msg.chatId, board, taskId });
      await this.chats.write();
      return `Subscribed to ${what}: you get a message when a task completes, blocks or gives up.`;
    }
    this.chats.data.subscriptions = subs.filter((s) => !same(s));
    await this.chats.write();
    return `Unsubscribed from ${what}.`;
  }

  private async onKanban(ev: BoardEvent): Promise<void> {
    const kind =
      ev.type === "completed" ? "completed" : ev.type === "gave_up" ? "gave up" : ev.status === "blocked" && ev.type !== "comment" ? "blocked" : null;
    if (!kind) return;
    const subs = this.chats.data.subscriptions.filter((s) => s.board === ev.board && (s.taskId === null || s.taskId === ev.task_id));
    if (!subs.length) return;
    let title = "";
    let summary = String(ev.data?.summary ?? ev.data?.reason ?? "");
    try {
      const { task } = await this.ctx.services.get("kanban").call("kanban.show", { board: ev.board, id: ev.task_id });
      title = task.title;
      if (!summary) summary = task.summary ?? "";
    } catch {}
    const text = `Task ${ev.task_id}${title ? ` "${title}"` : ""} ${kind}${summary ? `: ${firstLine(summary)}` : ""}`;
    for (const s of subs) {
      const out = await this.deliver(`${s.platform}:${s.chatId}`, text, { profile: s.profile });
      if (out.status !== "delivered") this.ctx.log.warn("messaging: a kanban notification was not delivered", { ...s, detail: out.detail });
    }
  }

  // ---------------------------------------------------------------- MessagingApi

  private channelFor(platform: string, profile?: string): Channel | null {
    const running = [...this.byKey.values()].filter((c) => c.platform === platform && c.adapter && !c.override);
    return running.find((c) => c.profile === (profile ?? DEFAULT_PROFILE)) ?? running[0] ?? null;
  }

  async deliver(target: string, text: string, opts: { profile?: string; images?: string[] } = {}): Promise<DeliveryOutcome> {
    const i = target.indexOf(":");
    const platform = i > 0 ? target.slice(0, i) : target;
    let chatId = i > 0 ? target.slice(i + 1) : "";
    const channel = this.channelFor(platform, opts.profile);
    if (!chatId && !channel?.adapter?.defaultChat) return { status: "not_deliverable", detail: `"${target}" names no chat; use <platform>:<chat>` };
    if (!channel?.adapter)
      return { status: "not_deliverable", detail: `no ${platform} adapter is running (\`agent channels status\`); the output is kept in the logs` };
    // `teams` alone: the platform's default destination.
    chatId ||= channel.adapter.defaultChat ?? "";
    try {
      const images = (opts.images ?? []).filter((p) => isAbsolute(p) && existsSync(p));
      await channel.adapter.send(chatId, { text, ...(images.length ? { images } : {}) });
      channel.counts.outbound++;
      return { status: "delivered", detail: `${platform}:${chatId}` };
    } catch (error) {
      this.noteError(channel, error);
      return { status: "failed", detail: `${platform}:${chatId}: ${redact((error as Error).message)}` };
    }
  }

  async handoff(sessionId: string, platform: string, chat?: string): Promise<{ platform: string; profile: string; chatId: string }> {
    const chatApi = this.ctx.services.get("chat");
    const session = chatApi.find(sessionId);
    if (!session) throw new AgentError("chat.session_not_found", `no session ${sessionId}`, { sessionId });
    const channel = this.channelFor(platform, session.profile);
    if (!channel?.adapter)
      throw new AgentError("messaging.no_adapter", `no ${platform} adapter is running for profile ${session.profile} (\`agent channels status\`)`, {
        platform,
      });
    let chatId = chat;
    if (!chatId) {
      const recent = Object.values(this.chats.data.chats)
        .filter((c) => c.platform === platform && c.profile === channel.profile)
        .sort((a, b) => b.updatedAt - a.updatedAt)[0];
      if (!recent)
        throw new AgentError("messaging.no_chat", `no ${platform} chat has talked to the agent yet; name one: /handoff ${platform} <chat id>`, { platform });
      chatId = recent.chatId;
    }
    const key = chatKey(platform, channel.profile, chatId);
    await this.setChat(key, { platform, profile: channel.profile, msg: { chatId } }, sessionId);
    await chatApi.append(sessionId, [
      { role: "assistant", content: `(This session was handed off to ${platform} chat ${chatId}.)`, at: Date.now(), synthetic: true },
    ]);
    const title = session.title ? ` "${session.title}"` : "";
    await channel.adapter.send(chatId, { text: `This chat now continues session ${sessionId}${title}. Your next message goes on from there.` });
    channel.counts.outbound++;
    return { platform, profile: channel.profile, chatId };
  }

  channels(): ChannelInfo[] {
    return [...this.byKey.values()].map((c) => {
      const s = c.adapter?.status();
      const chats = Object.values(this.chats.data.chats).filter((x) => x.platform === c.platform && x.profile === c.profile).length;
      let queued = 0;
      for (const [k, q] of this.queues) if (k.startsWith(`${c.key}/`)) queued += q.items.length;
      return {
        platform: c.platform,
        profile: c.profile,
        // The layer's view (set by the adapter through setState, and at start) is the state shown.
        state: c.override?.state ?? c.state,
        detail: c.override?.detail ?? c.detail ?? s?.detail ?? null,
        lastError: s?.lastError ?? c.lastError,
        lastErrorAt: s?.lastErrorAt ?? c.lastErrorAt,
        counts: {
          inbound: c.counts.inbound,
          outbound: c.counts.outbound,
          refused: c.counts.refused,
          errors: c.counts.errors + (s?.counts.errors ?? 0),
        },
        chats,
        queued,
        allowAll: c.access.allowAll,
        limits: c.factory.limits,
      };
    });
  }

  get pendingInbound(): number {
    return this.inbound.pendingCount;
  }

  /** `agent channels allow|deny`: edit the profile's allowlist in its config.yaml and apply it now. */
  async editAccess(
    profile: string,
    platform: string,
    id: string,
    group: boolean,
    add: boolean,
  ): Promise<{ platform: string; list: string; ids: string[]; file: string }> {
    if (!PLATFORMS[platform]) throw new AgentError("messaging.unknown_platform", `unknown platform ${platform}; known: ${Object.keys(PLATFORMS).join(", ")}`);
    const groupList = (await PLATFORMS[platform]()).groupList ?? { key: "allow_groups", access: "groups" as const };
    const list = group ? groupList.key : "allow_users";
    const { config } = await this.profileConfig(profile);
    const current = (((config[platform] ?? {}) as Record<string, unknown>)[list] as string[] | undefined) ?? [];
    const ids = add ? [...new Set([...current, id])] : current.filter((x) => x !== id);
    const paths = profile === DEFAULT_PROFILE ? null : (({ config: c, env }) => ({ config: c, env }))(profilePaths(this.ctx.home, profile));
    if (!this.ctx.config.writeTree) throw new AgentError("messaging.unknown_platform", "this daemon cannot write its config");
    const { file } = await this.ctx.config.writeTree(paths, [platform, list], ids);
    if (profile === DEFAULT_PROFILE) await this.ctx.config.reload();
    const channel = this.byKey.get(`${platform}/${profile}`);
    if (channel) channel.access[group ? groupList.access : "users"] = ids;
    return { platform, list: `${platform}.${list}`, ids, file };
  }
}

/** `/name args` (Telegram's `/name@bot` too), or null. */
export function command(text: string): { name: string; args: string[] } | null {
  const m = /^\/([a-z_]+)(?:@\w+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m?.[1] || !CHAT_COMMANDS.some((c) => c.name === m[1])) return null;
  return { name: m[1], args: (m[2] ?? "").split(/\s+/).filter(Boolean) };
}

/** Markdown images of local files the agent produced (`![alt](/abs/path.png)`) are sent as images. */
export function extractImages(md: string): { text: string; images: string[] } {
  const images: string[] = [];
  const text = md.replace(/!\[[^\]\n]*\]\((\/[^\s)]+\.(?:png|jpe?g|gif|webp))\)/gi, (whole, p: string) => {
    if (!existsSync(p)) return whole;
    images.push(p);
    return "";
  });
  return { text, images };
}

/**
 * Bot tokens look like `<digits>:<secret>` (Telegram), `<id>.<time>.<hmac>` (Discord) or
 * `syt_…` (Matrix); never let one reach a log or a status line.
 */
export function redact(text: string): string {
  return text
    .replace(/\b\d{5,}:[A-Za-z0-9_-]{20,}\b/g, "<token>")
    .replace(/\/bot[^/\s]+\//g, "/bot<token>/")
    .replace(/\b[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{20,}\b/g, "<token>")
    .replace(/\b(?:syt|mct)_[A-Za-z0-9_-]{10,}/g, "<token>");
}

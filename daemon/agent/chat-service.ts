import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { ChatSendResult, ChatStatus, SessionSummary, StoredMessage, TokenUsage } from "../../shared/protocol/chat.js";
import { SESSIONS_CHANGED_TOPIC } from "../../shared/protocol/events.js";
import type { CallContext, ParsedParams } from "../../shared/protocol/index.js";
import type { ActorRuntime } from "../actors/api.js";
import type { CoderRuntimeStatus } from "../../shared/protocol/coder.js";
import type { DaemonContext } from "../context.js";
import { writeFileAtomic } from "../store/atomic-file.js";
import type { ChatApi, NewSession } from "./api.js";
import { toWireMessages } from "./model-context.js";
import { checkPromptSize, dropSpilledPrompt, PROMPT_INLINE_BYTES, promptDir, spillPrompt } from "./long-prompt.js";
import { ModelResolver } from "../models/models.js";
import { systemClock } from "../../shared/clock.js";
import { envNumber } from "../../shared/config/env.js";
import { CoderService } from "../coder/coder-service.js";
import type { RateLimitBook } from "../models/rate-limits.js";
import { SearchIndex } from "./search/search-index.js";
import { SessionHistory } from "./search/session-history.js";
import { type Excerpt, sessionDefinition, type SessionState, type TurnRequest } from "./session-actor.js";
import { SessionIndex, type IndexEntry, kindOf } from "./session-index.js";
import type { Transcript } from "./transcript.js";
import type { SkillsService } from "./skills/skills-service.js";
import { renderSnapshot } from "./snapshot.js";
import type { ToolRegistry } from "../tools/types.js";
import { sessionTurn } from "./session-turn.js";
import { checkImage, newSessionId, newTurnId, systemPrompt } from "./turn-setup.js";
import { TurnTracker } from "./turn-tracker.js";

const NAMESPACE = "default";
const ACTOR_NAME = "session";

/**
 * The chat RPC group's service: sessions (the `session` actors and their index), sending a turn
 * to a session's queue and waiting for it, and the side features. The turn itself runs in the
 * session's workflow (session-turn.ts); the turns in flight are in turn-tracker.ts.
 */
export class ChatService implements ChatApi {
  private readonly models: ModelResolver;
  /** The coder runtime: one codex app-server per session that uses it. */
  readonly coder: CoderService;
  private readonly turns: TurnTracker;
  private index!: SessionIndex;
  search!: SearchIndex;
  history!: SessionHistory;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly runtime: ActorRuntime,
    private readonly tools: ToolRegistry | null,
    private readonly skills: SkillsService | null = null,
  ) {
    this.models = new ModelResolver(ctx.config, ctx.home);
    this.coder = new CoderService({
      home: ctx.home,
      clock: systemClock,
      mcpEntries: (profile: string) => ctx.services.get("mcp").serverEntries(profile),
      log: ctx.log,
    });
    this.turns = new TurnTracker((topic, event) => ctx.rpc.broadcast(topic, event));
  }

  get rateLimits(): RateLimitBook {
    return this.models.rateLimits;
  }

  async start(): Promise<void> {
    this.index = await SessionIndex.open(this.ctx.paths.data);
    // A session created, deleted or updated, whoever did it: the dashboard's event stream relays it.
    this.index.onChange((sessionId) => this.ctx.rpc.broadcast(SESSIONS_CHANGED_TOPIC, { sessionId }));
    // Loads in the background: the daemon answers at once, the first search waits for it.
    this.search = new SearchIndex(
      join(this.ctx.paths.data, "agent", "search"),
      (id) => kindOf(this.index.find(id) ?? {}),
      envNumber("AGENT_SEARCH_LOAD_PAUSE_MS", 0, (n) => n >= 0),
    );
    this.history = new SessionHistory({
      search: this.search,
      find: (id) => this.index.find(id),
      list: (profile) => this.index.list(undefined, profile),
      excerpt: (e, anchor, before, after, bookends) =>
        this.runtime.action(e.actorId, "excerpt", [anchor, before, after, bookends], { source: "rpc" }) as Promise<Excerpt>,
    });
    const turn = sessionTurn({
      coder: this.coder,
      configFor: async (profile) => (profile === "default" ? this.ctx.config.current() : (await this.ctx.services.get("profiles").config(profile)).current()),
      approvals: () => this.ctx.services.get("approvals"),
      mcp: () => this.ctx.services.get("mcp"),
      config: this.ctx.config,
      modelsFor: (profile) => this.modelsFor(profile),
      soulFor: (profile) => this.ctx.services.get("profiles").soul(profile),
      tools: this.tools,
      turns: this.turns,
      index: this.index,
      indexed: (state, transcript) => this.indexTurn(state, transcript),
      skills: this.skills,
      promptDir: promptDir(this.ctx.paths.data),
    });
    this.runtime.registerDefinition(ACTOR_NAME, sessionDefinition(turn), "builtin");
    void this.search.loaded().then(
      () => setImmediate(() => void this.catchUp().catch((error) => this.ctx.log.warn(`session search catch-up failed: ${toAgentError(error).message}`))),
      (error) => this.ctx.log.warn(`session search index failed to load: ${toAgentError(error).message}`),
    );
  }

  async stop(): Promise<void> {
    this.turns.rejectAll(new AgentError("daemon.stopping", "the daemon is stopping; the turn will resume when it starts again"));
    this.stopping = true;
    await this.coder.stop();
    await this.search?.close();
    await this.index?.fold().catch(() => undefined);
    this.index?.close();
  }

  private stopping = false;

  /** Index what sessions hold beyond what the search index has (a crash, an import, an older home), and forget deleted ones. */
  private async catchUp(): Promise<void> {
    for (const id of this.search.sessions()) if (!this.index.find(id)) this.search.remove(id);
    for (const e of this.index.list()) {
      if (this.stopping) return;
      if (e.messageCount > this.search.indexed(e.id)) await this.indexFrom(e, this.search.indexed(e.id));
    }
  }

  /** Read the session's messages from `from` on, in pages, into the search index. */
  private async indexFrom(e: IndexEntry, from: number): Promise<number> {
    let n = 0;
    for (let at = from; ; ) {
      const page = (await this.runtime.action(e.actorId, "messages", [at, 1000], { source: "rpc" })) as StoredMessage[];
      if (!page.length) return n;
      this.search.add(e.id, at, page);
      at += page.length;
      n += page.length;
    }
  }

  /** At the end of a turn: the listing and the search index follow the session. */
  private async indexTurn(state: SessionState, transcript: Transcript): Promise<void> {
    await this.index.sync(state);
    const from = this.search.indexed(state.id);
    if (state.messageCount > from) this.search.add(state.id, from, await transcript.read(from, state.messageCount));
  }

  status(providerName?: string): ChatStatus {
    return this.models.status(providerName);
  }

  /** A profile's model resolution: its config over the home's (the home's own for `default`). */
  async modelsFor(profile: string): Promise<ModelResolver> {
    const profiles = this.ctx.services.get("profiles");
    if (profile === "default") return this.models;
    profiles.check(profile);
    return new ModelResolver(await profiles.config(profile), join(this.ctx.paths.profiles, profile), this.models.rateLimits);
  }

  /** A profile must exist before a session runs as it. */
  private checkProfile(profile: string): string {
    return this.ctx.services.get("profiles").check(profile);
  }

  /** `/coder-runtime` and `agent coder-runtime status`: check (and on enable, prepare) the coder runtime for the profile. */
  async coderRuntime(p: ParsedParams<"coder.runtime">, profile: string): Promise<CoderRuntimeStatus> {
    const models = await this.modelsFor(profile);
    const config = profile === "default" ? this.ctx.config.current() : (await this.ctx.services.get("profiles").config(profile)).current();
    return this.coder.runtime({
      profile,
      config,
      env: models.env(),
      provider: () => models.provider({ provider: p.provider }),
      mode: p.mode,
      current: p.current ?? null,
    });
  }

  async coderInstall(): Promise<{ path: string; version: string | null; output: string }> {
    return this.coder.install(this.models.env());
  }

  async statusFor(profile: string, providerName?: string): Promise<ChatStatus> {
    return (await this.modelsFor(profile)).status(providerName);
  }

  // ---------- sessions ----------

  private summary(e: IndexEntry): SessionSummary {
    const { actorId: _a, ...rest } = e;
    return { ...rest, active: this.turns.isActive(e.id) };
  }

  async createSession(input: NewSession): Promise<IndexEntry> {
    const id = input.id ?? newSessionId();
    if (input.profile !== undefined) this.checkProfile(input.profile);
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(id))
      throw new AgentError("chat.invalid_session_id", `session ids use letters, digits, "_", "-" and "."; got ${JSON.stringify(id)}`);
    const { actor } = await this.runtime.getOrCreate({
      namespace: NAMESPACE,
      name: ACTOR_NAME,
      key: id,
      runner_name_selector: "default",
      crash_policy: "restart",
      input: { id, cwd: input.cwd, profile: input.profile, title: input.title, parentId: input.parentId ?? null, kind: input.kind ?? "chat" },
    });
    const now = Date.now();
    const entry: IndexEntry = {
      id,
      actorId: actor.actor_id,
      title: input.title ?? "",
      kind: input.kind ?? "chat",
      ...(input.source ? { source: input.source } : {}),
      model: "",
      provider: "",
      profile: input.profile ?? "default",
      parentId: input.parentId ?? null,
      createdAt: now,
      updatedAt: now,
      messageCount: 0,
      usage: { prompt: 0, completion: 0, total: 0 },
    };
    await this.index.put(entry);
    return entry;
  }

  /** Newest first; one profile's when given. */
  list(limit?: number, profile?: string): SessionSummary[] {
    return this.index.list(limit, profile).map((e) => this.summary(e));
  }

  find(sessionId: string): SessionSummary | undefined {
    const e = this.index.find(sessionId);
    return e ? this.summary(e) : undefined;
  }

  async get(sessionId: string, from?: number, limit?: number): Promise<{ session: SessionSummary; messages: StoredMessage[] }> {
    const e = this.index.entry(sessionId);
    const messages = (await this.runtime.action(e.actorId, "messages", [from ?? 0, limit], { source: "rpc" })) as StoredMessage[];
    return { session: this.summary(e), messages };
  }

  async delete(sessionId: string): Promise<void> {
    const e = this.index.entry(sessionId);
    this.interrupt(sessionId);
    await this.runtime.destroy(e.actorId).catch((error) => {
      if (toAgentError(error).code !== "actor.not_found") throw error;
    });
    await this.index.remove(sessionId);
    this.search.remove(sessionId);
    this.ctx.services.get("approvals").forgetSession(sessionId);
    await this.coder.forget(sessionId);
  }

  async append(sessionId: string, messages: StoredMessage[], usage?: TokenUsage): Promise<number> {
    const e = this.index.entry(sessionId);
    const n = (await this.runtime.action(e.actorId, "append", [messages, usage], { source: "rpc" })) as number;
    await this.index.appended(sessionId, n, usage);
    this.search.add(sessionId, n - messages.length, messages);
    return n;
  }

  /** A new session holding a copy of the parent's history, linked to it; its title comes from the parent's. */
  async branch(parentId: string, title?: string): Promise<SessionSummary> {
    const parent = this.index.entry(parentId);
    if (this.turns.isActive(parentId))
      throw new AgentError("chat.busy", `session ${parentId} is running a turn; branch it when the turn ends`, { sessionId: parentId });
    const info = (await this.runtime.action(parent.actorId, "info", [], { source: "rpc" })) as SessionState;
    const e = await this.createSession({
      cwd: info.cwd,
      profile: parent.profile || "default",
      title:
        title ??
        branchTitle(
          parent.title || parent.id,
          this.index.list().map((x) => x.title),
        ),
      parentId,
    });
    for (let at = 0; ; ) {
      const page = (await this.runtime.action(parent.actorId, "messages", [at, 1000], { source: "rpc" })) as StoredMessage[];
      if (!page.length) break;
      await this.append(e.id, page);
      at += page.length;
    }
    return this.summary(this.index.entry(e.id));
  }

  /** Rebuild the search index from every session's transcript. */
  async reindex(): Promise<{ sessions: number; messages: number; ms: number }> {
    const started = performance.now();
    await this.search.clear();
    let messages = 0;
    const all = this.index.list();
    for (const e of all) messages += await this.indexFrom(e, 0);
    await this.search.fold();
    return { sessions: all.length, messages, ms: Math.round(performance.now() - started) };
  }

  /** Fold the journals into their snapshots (before a backup). */
  async flush(): Promise<void> {
    await this.index.fold();
    await this.search.fold();
  }

  // ---------- turns ----------

  async send(p: ParsedParams<"chat.send">, call: CallContext): Promise<ChatSendResult> {
    // A session runs as its profile; a new one as the one asked for, else the connection's.
    const existing = p.sessionId ? this.index.find(p.sessionId) : undefined;
    const profile = existing ? existing.profile || "default" : this.checkProfile(p.profile ?? call.profile);
    // No usable model, or a prompt over the limit: fail before creating or touching any session.
    checkPromptSize(p.prompt);
    (await this.modelsFor(profile)).provider({ provider: p.provider, fast: p.fast, model: p.model });
    const images = await Promise.all((p.images ?? []).map(checkImage));
    // `/<skill or bundle>`: the daemon builds the user message (an unknown name fails here, before any session exists).
    const slash = p.slash ? await this.expandSlash(profile, p.slash, p.prompt) : null;
    if (slash) checkPromptSize(slash.message);
    const title = p.title ?? (slash ? `/${slash.slug}${p.prompt.trim().slice(0, 200) ? ` ${p.prompt.trim().slice(0, 200)}` : ""}` : undefined);
    const entry = existing || (await this.createSession({ id: p.sessionId, cwd: p.cwd, profile, title, parentId: p.parentId }));
    if (this.turns.isActive(entry.id)) {
      throw new AgentError("chat.busy", `session ${entry.id} is already running a turn; interrupt it or wait`, { sessionId: entry.id });
    }
    const turn = this.turns.track(entry.id, newTurnId());
    turn.notify = call.notify;
    // A client that goes away does not take the turn with it.
    call.signal.addEventListener("abort", () => (turn.notify = null), { once: true });
    // A person at a terminal (or the TUI) answers this turn's approval questions while connected.
    if (p.interactive) this.turns.holdInteractive(turn, call.signal);
    if (p.yolo) this.ctx.services.get("approvals").setYolo(entry.id, true);
    const request: TurnRequest = {
      turnId: turn.turnId,
      prompt: slash ? slash.message : p.prompt,
      images,
      maxTurns: p.maxTurns ?? this.ctx.config.current().agent.max_turns,
      ...(p.provider ? { provider: p.provider } : {}),
      ...(p.fast ? { fast: true } : {}),
      ...(p.cwd ? { cwd: p.cwd } : {}),
      ...(p.model ? { model: p.model } : {}),
      ...(p.yolo ? { yolo: true } : {}),
      ...(p.runtime ? { runtime: p.runtime } : {}),
    };
    const dir = promptDir(this.ctx.paths.data);
    let spilled = false;
    try {
      // A long prompt (a pasted log) waits in a file; the queued turn names it.
      if (Buffer.byteLength(request.prompt) > PROMPT_INLINE_BYTES) {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        spilled = await spillPrompt(dir, turn.turnId, request.prompt);
        if (spilled) Object.assign(request, { prompt: "", promptSpilled: true });
      }
      await this.runtime.enqueue(entry.actorId, "turn", request);
    } catch (error) {
      this.turns.untrack(turn);
      if (spilled) await dropSpilledPrompt(dir, turn.turnId).catch(() => undefined);
      throw error;
    }
    return turn.done;
  }

  /** `/<skill or bundle>` as the user message the daemon builds (also a cron job's skills). */
  async expandSlash(profile: string | undefined, name: string, args: string) {
    if (!this.skills) throw new AgentError("skills.not_found", `no skill or bundle named "${name.slice(0, 80)}"`);
    return this.skills.expand(profile, name, args);
  }

  interrupt(sessionId: string): boolean {
    return this.turns.interrupt(sessionId);
  }

  async attach(sessionId: string, call: CallContext, interactive = false): Promise<{ active: boolean; result: ChatSendResult | null }> {
    this.index.entry(sessionId);
    const result = await this.turns.attach(sessionId, call.notify, call.signal, interactive);
    return result ? { active: true, result } : { active: false, result: null };
  }

  // ---------- side features ----------

  /** A side question about the session so far; nothing is added to it. */
  async btw(sessionId: string | undefined, question: string, providerName?: string, profile = "default"): Promise<{ answer: string; usage: TokenUsage }> {
    const owner = sessionId ? this.index.entry(sessionId).profile || "default" : profile;
    const model = (await this.modelsFor(owner)).model({ provider: providerName });
    let history: StoredMessage[] = [];
    let cwd: string | null = null;
    if (sessionId) {
      const e = this.index.entry(sessionId);
      history = (await this.get(sessionId)).messages;
      cwd = ((await this.runtime.action(e.actorId, "info", [], { source: "rpc" })) as SessionState).cwd;
    }
    const soul = await this.ctx.services.get("profiles").soul(owner);
    const messages = toWireMessages(systemPrompt(cwd, { soul }), history, { supportsImages: model.provider.supportsImages });
    messages.push({ role: "user", content: `(A side question; answer briefly from the conversation so far. It is not part of the task.)\n\n${question}` });
    const reply = await model.complete({ messages, signal: AbortSignal.timeout(model.provider.readTimeoutMs * 2) });
    return { answer: reply.content, usage: reply.usage ?? { prompt: 0, completion: 0, total: 0, estimated: true } };
  }

  async export(sessionId: string, format: "md" | "json" = "md"): Promise<string> {
    const { session, messages } = await this.get(sessionId);
    return format === "md" ? renderSnapshot(session, messages) : `${JSON.stringify({ session, messages }, null, 2)}\n`;
  }

  async snapshot(sessionId: string, name?: string): Promise<string> {
    const { session, messages } = await this.get(sessionId);
    const stamp = new Date().toISOString().replace(/[:.]/g, "-").replace("T", "_").slice(0, 19);
    const base = (name ?? `${sessionId}-${stamp}`).replace(/[^A-Za-z0-9_.-]+/g, "-").replace(/^[-.]+/, "") || sessionId;
    await mkdir(this.ctx.paths.snapshots, { recursive: true });
    const file = join(this.ctx.paths.snapshots, base.endsWith(".md") ? base : `${base}.md`);
    await writeFileAtomic(file, renderSnapshot(session, messages));
    return file;
  }
}

/** "<parent title> (branch)", then "(branch 2)", ... so siblings tell apart. */
export function branchTitle(parent: string, taken: string[]): string {
  const base = parent.replace(/ \(branch(?: \d+)?\)$/, "");
  const used = new Set(taken);
  if (!used.has(`${base} (branch)`)) return `${base} (branch)`;
  for (let i = 2; ; i++) if (!used.has(`${base} (branch ${i})`)) return `${base} (branch ${i})`;
}

import { randomBytes } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { extname, isAbsolute, join } from "node:path";
import { AgentError, toAgentError } from "../../shared/errors.js";
import {
  chatTopic,
  type ChatEvent,
  type ChatSendResult,
  type ChatStatus,
  type SessionSummary,
  type StoredMessage,
  type TokenUsage,
} from "../../shared/protocol/chat.js";
import type { CallContext, ParsedParams } from "../../shared/protocol/index.js";
import type { ActorRuntime, WorkflowContext } from "../actors/types.js";
import type { DaemonContext } from "../context.js";
import { DocStore } from "../store/doc-store.js";
import { failedEditsFooter } from "./tools/failed-edits.js";
import type { ToolRegistry } from "./tools/types.js";
import { toWireMessages } from "./context.js";
import { runTurn } from "./loop.js";
import { OpenAIChatModel, type ChatModel } from "./providers/openai-chat.js";
import { RateLimitBook } from "./providers/rate-limits.js";
import { resolveProvider, type ProviderConfig, type ResolveOptions } from "./providers/resolve.js";
import { addUsage, sessionDefinition, type SessionState, type SessionVars, type TurnRequest } from "./session-actor.js";
import { renderSnapshot } from "./snapshot.js";
import type { Transcript } from "./transcript.js";

const NAMESPACE = "default";
const ACTOR_NAME = "session";
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES: Record<string, string> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp" };

type IndexEntry = Omit<SessionSummary, "active"> & { actorId: string };

interface ActiveTurn {
  turnId: string;
  sessionId: string;
  controller: AbortController;
  /** The `chat.send` caller's connection, while it is connected. */
  notify: ((topic: string, data: unknown) => void) | null;
  /** Other callers waiting on this turn (chat.attach). */
  watchers: Set<(topic: string, data: unknown) => void>;
  done: Promise<ChatSendResult>;
  resolve(result: ChatSendResult): void;
  reject(error: AgentError): void;
}

/** A step's outcome as recorded: expected failures are values, so they never crash the workflow. */
type StepOutcome<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string } };

export class ChatService {
  readonly rateLimits = new RateLimitBook();
  private index!: DocStore<{ sessions: Record<string, IndexEntry> }>;
  private readonly turns = new Map<string, ActiveTurn>();
  private readonly activeBySession = new Map<string, string>();

  constructor(
    private readonly ctx: DaemonContext,
    private readonly runtime: ActorRuntime,
    private readonly tools: ToolRegistry | null,
  ) {}

  async start(): Promise<void> {
    this.index = await DocStore.open({ file: join(this.ctx.paths.data, "agent", "sessions.json"), kind: "session-index", version: 1, initial: () => ({ sessions: {} }) }); // no .bak: a deleted session must leave no trace
    this.runtime.registerDefinition(ACTOR_NAME, sessionDefinition((w, t, r) => this.runTurnIn(w, t, r)), "builtin");
  }

  async stop(): Promise<void> {
    for (const t of this.turns.values()) t.reject(new AgentError("daemon.stopping", "the daemon is stopping; the turn will resume when it starts again"));
  }

  /** The environment tools and key lookup see: the daemon's, with `.env` filling the gaps (the config source keeps it current). */
  env(): NodeJS.ProcessEnv {
    const source = this.ctx.config;
    return source.env ? source.env() : process.env;
  }

  provider(options: ResolveOptions = {}): ProviderConfig {
    return resolveProvider(this.ctx.config.current(), this.env(), this.ctx.home, options);
  }

  model(options: ResolveOptions = {}): ChatModel {
    return new OpenAIChatModel(this.provider(options), this.rateLimits);
  }

  status(providerName?: string): ChatStatus {
    const config = this.ctx.config.current();
    const base = { fastModel: config.model.fast || null, maxTurns: config.agent.max_turns };
    try {
      const p = this.provider({ provider: providerName });
      return { ...base, configured: true, provider: p.name, model: p.model, baseUrl: p.baseUrl, problem: null };
    } catch (error) {
      return { ...base, configured: false, provider: null, model: null, baseUrl: null, problem: toAgentError(error).message };
    }
  }

  // ---------- sessions ----------

  private summary(e: IndexEntry): SessionSummary {
    const { actorId: _a, ...rest } = e;
    return { ...rest, active: this.activeBySession.has(e.id) };
  }

  private entry(sessionId: string): IndexEntry {
    const e = this.index.data.sessions[sessionId];
    if (!e) throw new AgentError("chat.session_not_found", `no session ${sessionId}; \`agent chat --list\` shows the sessions`, { sessionId });
    return e;
  }

  async createSession(input: { id?: string; cwd?: string; profile?: string; title?: string; parentId?: string | null }): Promise<IndexEntry> {
    const id = input.id ?? newSessionId();
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(id)) throw new AgentError("chat.invalid_session_id", `session ids use letters, digits, "_", "-" and "."; got ${JSON.stringify(id)}`);
    const { actor } = await this.runtime.getOrCreate({
      namespace: NAMESPACE,
      name: ACTOR_NAME,
      key: id,
      runner_name_selector: "default",
      crash_policy: "restart",
      input: { id, cwd: input.cwd, profile: input.profile, title: input.title, parentId: input.parentId ?? null },
    });
    const now = Date.now();
    const entry: IndexEntry = {
      id,
      actorId: actor.actor_id,
      title: input.title ?? "",
      model: "",
      provider: "",
      profile: input.profile ?? "default",
      parentId: input.parentId ?? null,
      createdAt: now,
      updatedAt: now,
      messageCount: 0,
      usage: { prompt: 0, completion: 0, total: 0 },
    };
    await this.index.update((d) => {
      d.sessions[id] = entry;
    });
    return entry;
  }

  list(limit?: number): SessionSummary[] {
    const all = Object.values(this.index.data.sessions).sort((a, b) => b.updatedAt - a.updatedAt);
    return (limit ? all.slice(0, limit) : all).map((e) => this.summary(e));
  }

  async get(sessionId: string, from?: number, limit?: number): Promise<{ session: SessionSummary; messages: StoredMessage[] }> {
    const e = this.entry(sessionId);
    const messages = (await this.runtime.action(e.actorId, "messages", [from ?? 0, limit], { source: "rpc" })) as StoredMessage[];
    return { session: this.summary(e), messages };
  }

  async delete(sessionId: string): Promise<void> {
    const e = this.entry(sessionId);
    this.interrupt(sessionId);
    await this.runtime.destroy(e.actorId).catch((error) => {
      if (toAgentError(error).code !== "actor.not_found") throw error;
    });
    await this.index.update((d) => {
      delete d.sessions[sessionId];
    });
  }

  async append(sessionId: string, messages: StoredMessage[], usage?: TokenUsage): Promise<number> {
    const e = this.entry(sessionId);
    const n = (await this.runtime.action(e.actorId, "append", [messages, usage], { source: "rpc" })) as number;
    await this.index.update((d) => {
      const x = d.sessions[sessionId];
      if (!x) return;
      x.messageCount = n;
      x.updatedAt = Date.now();
      if (usage) x.usage = addUsage(x.usage, usage);
    });
    return n;
  }

  // ---------- turns ----------

  async send(p: ParsedParams<"chat.send">, call: CallContext): Promise<ChatSendResult> {
    // No usable model: fail before creating or touching any session.
    const provider = this.provider({ provider: p.provider, fast: p.fast });
    const images = await Promise.all((p.images ?? []).map(checkImage));
    const entry = p.sessionId && this.index.data.sessions[p.sessionId] ? this.index.data.sessions[p.sessionId]! : await this.createSession({ id: p.sessionId, cwd: p.cwd, profile: p.profile, title: p.title, parentId: p.parentId });
    if (this.activeBySession.has(entry.id)) {
      throw new AgentError("chat.busy", `session ${entry.id} is already running a turn; interrupt it or wait`, { sessionId: entry.id });
    }
    const turn = this.track(entry.id, newTurnId());
    turn.notify = call.notify;
    // A client that goes away does not take the turn with it.
    call.signal.addEventListener("abort", () => (turn.notify = null), { once: true });
    const request: TurnRequest = {
      turnId: turn.turnId,
      prompt: p.prompt,
      images,
      maxTurns: p.maxTurns ?? this.ctx.config.current().agent.max_turns,
      ...(p.provider ? { provider: p.provider } : {}),
      ...(p.fast ? { fast: true } : {}),
      ...(p.cwd ? { cwd: p.cwd } : {}),
    };
    void provider;
    try {
      await this.runtime.enqueue(entry.actorId, "turn", request);
    } catch (error) {
      this.untrack(turn);
      throw error;
    }
    return turn.done;
  }

  private track(sessionId: string, turnId: string): ActiveTurn {
    let resolve!: (r: ChatSendResult) => void;
    let reject!: (e: AgentError) => void;
    const done = new Promise<ChatSendResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined);
    const turn: ActiveTurn = { turnId, sessionId, controller: new AbortController(), notify: null, watchers: new Set(), done, resolve, reject };
    this.turns.set(turnId, turn);
    this.activeBySession.set(sessionId, turnId);
    return turn;
  }

  private untrack(turn: ActiveTurn): void {
    this.turns.delete(turn.turnId);
    if (this.activeBySession.get(turn.sessionId) === turn.turnId) this.activeBySession.delete(turn.sessionId);
  }

  interrupt(sessionId: string): boolean {
    const turnId = this.activeBySession.get(sessionId);
    const turn = turnId ? this.turns.get(turnId) : undefined;
    if (!turn || turn.controller.signal.aborted) return false;
    turn.controller.abort(new AgentError("chat.interrupted", "the turn was interrupted"));
    return true;
  }

  async attach(sessionId: string, call: CallContext): Promise<{ active: boolean; result: ChatSendResult | null }> {
    this.entry(sessionId);
    const turnId = this.activeBySession.get(sessionId);
    const turn = turnId ? this.turns.get(turnId) : undefined;
    if (!turn) return { active: false, result: null };
    const watcher = call.notify;
    turn.watchers.add(watcher);
    call.signal.addEventListener("abort", () => turn.watchers.delete(watcher), { once: true });
    try {
      return { active: true, result: await turn.done };
    } finally {
      turn.watchers.delete(watcher);
    }
  }

  private emit(turn: ActiveTurn, event: ChatEvent): void {
    const topic = chatTopic(turn.sessionId);
    turn.notify?.(topic, event);
    for (const w of turn.watchers) w(topic, event);
    this.ctx.rpc.broadcast(topic, event);
  }

  /** The session workflow's turn: each model call and tool call is a recorded step. */
  private async runTurnIn(w: WorkflowContext<SessionState, SessionVars>, transcript: Transcript, req: TurnRequest): Promise<unknown> {
    const sessionId = w.state.id;
    // After a daemon restart nobody waits for a resumed turn, but it can still be interrupted.
    const turn = this.turns.get(req.turnId) ?? this.track(sessionId, req.turnId);
    const signal = AbortSignal.any([turn.controller.signal, w.abortSignal]);
    const stopping = () => w.abortSignal.aborted;
    const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      const out = await w.step<StepOutcome<T>>(name, async () => {
        try {
          return { ok: true, value: await fn() };
        } catch (error) {
          if (stopping()) throw error; // the actor is stopping: leave the step to be re-run
          const e = toAgentError(error);
          return { ok: false, error: { code: e.code, message: e.message } };
        }
      });
      if (!out.ok) throw new AgentError(out.error.code, out.error.message);
      return out.value;
    };
    try {
      const cwd = req.cwd ?? w.state.cwd;
      const begin = await step("begin", async () => {
        const provider = this.provider({ provider: req.provider, fast: req.fast });
        const images = await Promise.all(req.images.map(imageDataUrl));
        const base = transcript.length;
        const content: StoredMessage["content"] = images.length ? [{ type: "text", text: req.prompt }, ...images.map((url) => ({ type: "image_url", image_url: { url } }))] : req.prompt;
        await transcript.appendAt(base, [{ role: "user", content, at: Date.now(), turnId: req.turnId }]);
        return { base, provider: provider.name };
      });
      const model = this.model({ provider: req.provider, fast: req.fast });
      this.emit(turn, { type: "turn_start", sessionId, turnId: req.turnId, model: model.provider.model, provider: model.provider.name });
      const history = await transcript.read(0, begin.base + 1);
      let position = begin.base + 1;
      const outcome = await runTurn(
        { sessionId, turnId: req.turnId, history, prompt: req.prompt, images: [], maxTurns: req.maxTurns, signal },
        {
          model,
          tools: this.tools,
          toolContext: { cwd, sessionId, env: this.env() },
          step,
          // Messages rebuilt from recorded steps on a replay are written lazily (with the next
          // chunk write or at the end of the turn): the step journal already holds them.
          append: async (messages, o) => {
            await transcript.appendAt(position, messages, { defer: o?.replayable === true });
            position += messages.length;
          },
          emit: (event) => this.emit(turn, event),
          footer: (mutations) => failedEditsFooter(mutations, { config: this.ctx.config.current(), env: process.env }),
          system: systemPrompt(cwd),
          stopping,
          userMessageIncluded: true,
        },
      );
      await transcript.flush();
      w.state.usage = addUsage(w.state.usage, outcome.usage);
      w.state.turns += 1;
      w.state.model = model.provider.model;
      w.state.provider = model.provider.name;
      if (!w.state.title) w.state.title = titleFrom(req.prompt);
      w.state.updatedAt = Date.now();
      await w.saveState({ immediate: true });
      await this.syncIndex(w.state);
      const result: ChatSendResult = {
        sessionId,
        turnId: req.turnId,
        answer: outcome.answer,
        footer: outcome.footer,
        stopReason: outcome.stopReason,
        modelCalls: outcome.modelCalls,
        toolCalls: outcome.toolCalls,
        usage: { turn: outcome.usage, session: w.state.usage },
        model: model.provider.model,
        provider: model.provider.name,
      };
      this.emit(turn, { type: "usage", sessionId, turnId: req.turnId, turn: outcome.usage, session: w.state.usage, contextTokens: outcome.contextTokens });
      this.emit(turn, { type: "turn_end", sessionId, turnId: req.turnId, stopReason: outcome.stopReason });
      turn.resolve(result);
      return { stopReason: outcome.stopReason, modelCalls: outcome.modelCalls };
    } catch (error) {
      if (stopping()) throw error;
      const e = toAgentError(error);
      await transcript.flush().catch(() => undefined); // a replay writes them again if this failed
      await this.syncIndex(w.state).catch(() => undefined);
      this.emit(turn, { type: "turn_end", sessionId, turnId: req.turnId, stopReason: "done", error: { code: e.code, message: e.message } });
      turn.reject(e.code === "internal.error" ? new AgentError("chat.turn_failed", `the turn failed: ${e.message}`) : e);
      return { error: { code: e.code, message: e.message } };
    } finally {
      this.untrack(turn);
    }
  }

  private async syncIndex(state: SessionState): Promise<void> {
    await this.index.update((d) => {
      const x = d.sessions[state.id];
      if (!x) return;
      Object.assign(x, { title: state.title, model: state.model, provider: state.provider, profile: state.profile, messageCount: state.messageCount, usage: state.usage, updatedAt: state.updatedAt });
    });
  }

  // ---------- side features ----------

  async btw(sessionId: string | undefined, question: string, providerName?: string): Promise<{ answer: string; usage: TokenUsage }> {
    const model = this.model({ provider: providerName });
    const history = sessionId ? (await this.get(sessionId)).messages : [];
    const messages = toWireMessages(systemPrompt(process.cwd()), history, { supportsImages: model.provider.supportsImages });
    messages.push({ role: "user", content: `(A side question; answer briefly from the conversation so far. It is not part of the task.)\n\n${question}` });
    const reply = await model.complete({ messages, signal: AbortSignal.timeout(model.provider.readTimeoutMs * 2) });
    return { answer: reply.content, usage: reply.usage ?? { prompt: 0, completion: 0, total: 0, estimated: true } };
  }

  async snapshot(sessionId: string, name?: string): Promise<string> {
    const { session, messages } = await this.get(sessionId);
    const stamp = new Date().toISOString().replace(/[:.]/g, "-").replace("T", "_").slice(0, 19);
    const base = (name ?? `${sessionId}-${stamp}`).replace(/[^A-Za-z0-9_.-]+/g, "-").replace(/^[-.]+/, "") || sessionId;
    await mkdir(this.ctx.paths.snapshots, { recursive: true });
    const file = join(this.ctx.paths.snapshots, base.endsWith(".md") ? base : `${base}.md`);
    await writeFile(file, renderSnapshot(session, messages), "utf8");
    return file;
  }
}

/** The system prompt of a turn. Short: the tools describe themselves. */
function systemPrompt(cwd: string): string {
  return [
    "You are agent, a terminal-first assistant that gets things done with tools.",
    `The working directory is ${cwd}. Today is ${new Date().toISOString().slice(0, 10)}.`,
    "Read files before you change them, make exact edits, and say plainly what you did. When a tool fails, read the error and decide what to do next.",
  ].join("\n");
}

function titleFrom(prompt: string): string {
  const line = prompt.trim().split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

function newSessionId(): string {
  const d = new Date();
  const stamp = `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, "0")}${String(d.getUTCDate()).padStart(2, "0")}`;
  return `s_${stamp}_${randomBytes(4).toString("hex")}`;
}

function newTurnId(): string {
  return `t_${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
}

async function checkImage(path: string): Promise<string> {
  if (!isAbsolute(path)) throw new AgentError("chat.invalid_image", `image paths must be absolute: ${path}`);
  if (!IMAGE_TYPES[extname(path).toLowerCase()]) throw new AgentError("chat.invalid_image", `${path} is not a PNG, JPEG, GIF or WebP image`);
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new AgentError("chat.image_not_found", `no image at ${path}`);
  }
  if (size > MAX_IMAGE_BYTES) throw new AgentError("chat.invalid_image", `${path} is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MiB`);
  return path;
}

async function imageDataUrl(path: string): Promise<string> {
  const type = IMAGE_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
  return `data:${type};base64,${(await readFile(path)).toString("base64")}`;
}

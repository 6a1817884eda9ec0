import type { StoredMessage, TokenUsage } from "../../shared/protocol/chat.js";
import type { ActorContext, ActorDefinition, WorkflowContext } from "../actors/types.js";
import { newTranscriptCache, Transcript, type TranscriptCache } from "./transcript.js";

/**
 * The built-in `session` actor: one per chat session, keyed by the session id. Its state is the
 * session's metadata; its transcript lives in chunked KV (transcript.ts); its workflow runs the
 * turns it receives on the `turn` queue, each model call and tool call a recorded step.
 */
export interface SessionState {
  id: string;
  title: string;
  cwd: string;
  profile: string;
  parentId: string | null;
  kind?: "chat" | "cron" | "kanban" | "messaging";
  model: string;
  provider: string;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  turns: number;
  usage: TokenUsage;
}

export interface SessionInput {
  id: string;
  cwd?: string;
  profile?: string;
  title?: string;
  parentId?: string | null;
  kind?: "chat" | "cron" | "kanban" | "messaging";
}

export interface SessionVars {
  transcript: TranscriptCache;
}

export type SessionContext = ActorContext<SessionState, SessionVars>;

/** What a queued turn carries (small: images travel as paths, read when the turn starts). */
export interface TurnRequest {
  turnId: string;
  prompt: string;
  images: string[];
  maxTurns: number;
  provider?: string;
  fast?: boolean;
  cwd?: string;
  /** Overrides the provider's model for this turn (a cron job's model). */
  model?: string;
  /** `--yolo`: approvals off for this turn's session (recorded, so a resumed turn keeps it). */
  yolo?: boolean;
  /** The prompt was too long for the queue: it waits in a file named for the turn (long-prompt.ts), `prompt` is empty. */
  promptSpilled?: boolean;
}

/** Runs a turn inside the session's workflow; implemented by the agent service. */
export type SessionTurn = (w: WorkflowContext<SessionState, SessionVars>, transcript: Transcript, request: TurnRequest) => Promise<unknown>;

export function transcriptOf(c: SessionContext): Transcript {
  return new Transcript(c.kv, c.vars.transcript, {
    get: () => c.state.messageCount,
    // No write of its own: an action's state is persisted before it answers, and a workflow
    // step persists it with the step's result. A count that lags the chunks after a crash only
    // hides messages a replay writes again at the same positions.
    set: async (n) => {
      c.state.messageCount = n;
      c.state.updatedAt = Date.now();
    },
  });
}

export function sessionDefinition(runTurnIn: SessionTurn): ActorDefinition<SessionState, SessionVars, SessionInput> {
  return {
    createState: (_c, input) => ({
      id: input.id,
      title: input.title ?? "",
      cwd: input.cwd ?? process.cwd(),
      profile: input.profile ?? "default",
      parentId: input.parentId ?? null,
      kind: input.kind ?? "chat",
      model: "",
      provider: "",
      createdAt: Date.now(),
      updatedAt: Date.now(),
      messageCount: 0,
      turns: 0,
      usage: { prompt: 0, completion: 0, total: 0 },
    }),
    createVars: () => ({ transcript: newTranscriptCache() }),
    actions: {
      info: (c: SessionContext) => c.state,
      messages: (c: SessionContext, from?: number, limit?: number) => {
        const start = Math.max(0, from ?? 0);
        return transcriptOf(c).read(start, limit ? start + limit : undefined);
      },
      /** A window of messages around `anchor` and the session's bookends (session_search). */
      excerpt: (c: SessionContext, anchor: number, before: number, after: number, bookends: number) =>
        excerptOf(transcriptOf(c), anchor, before, after, bookends),
      /** Append messages written elsewhere (a kanban worker's own loop); returns the new count. */
      append: async (c: SessionContext, messages: StoredMessage[], usage?: TokenUsage) => {
        const n = await transcriptOf(c).append(messages);
        if (usage) {
          c.state.usage = addUsage(c.state.usage, usage);
          await c.saveState({ immediate: true });
        }
        return n;
      },
      update: async (c: SessionContext, patch: Partial<Pick<SessionState, "title" | "cwd" | "profile" | "model" | "provider">>) => {
        Object.assign(c.state, patch, { updatedAt: Date.now() });
        await c.saveState({ immediate: true });
        return c.state;
      },
    },
    workflow: async (w) => {
      await w.loop("turns", async (w) => {
        const message = await w.queue.next({ name: "turn" });
        if (!message) return { continue: true };
        const reply = await runTurnIn(w, transcriptOf(w), message.body as TurnRequest);
        await message.complete(reply);
        return { continue: true };
      });
    },
    // Keep the workflow parked on its queue cheaply: sessions sleep when idle and wake on a turn.
    options: { sleepTimeout: 60_000, actionTimeout: 60_000 },
  };
}

/** What a search result shows of a session; positions are transcript indexes. */
export interface Excerpt {
  length: number;
  from: number;
  window: StoredMessage[];
  start: Array<[number, StoredMessage]>;
  end: Array<[number, StoredMessage]>;
}

const isConversation = (m: StoredMessage) =>
  (m.role === "user" || m.role === "assistant") && (typeof m.content === "string" ? m.content.trim() !== "" : Array.isArray(m.content) && m.content.length > 0);

/** How far from each end bookends are looked for (a run of tool messages longer than this has none). */
const SCAN = 256;

/** Bookends are the first and last `bookends` user/assistant messages with content (tool calls without text are skipped). */
async function excerptOf(t: Transcript, anchor: number, before: number, after: number, bookends: number): Promise<Excerpt> {
  const length = t.length;
  const at = Math.min(Math.max(0, anchor), Math.max(0, length - 1));
  const from = Math.max(0, at - before);
  const window = await t.read(from, Math.min(length, at + after + 1));
  const start: Array<[number, StoredMessage]> = [];
  for (let i = 0; i < Math.min(length, SCAN) && start.length < bookends; i += 64) {
    const chunk = await t.read(i, Math.min(length, i + 64));
    for (let k = 0; k < chunk.length && start.length < bookends; k++) if (isConversation(chunk[k]!)) start.push([i + k, chunk[k]!]);
  }
  const end: Array<[number, StoredMessage]> = [];
  for (let j = length; j > Math.max(0, length - SCAN) && end.length < bookends; j -= 64) {
    const i = Math.max(0, j - 64);
    const chunk = await t.read(i, j);
    for (let k = chunk.length - 1; k >= 0 && end.length < bookends; k--) if (isConversation(chunk[k]!)) end.unshift([i + k, chunk[k]!]);
  }
  return { length, from, window, start, end };
}

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    prompt: a.prompt + b.prompt,
    completion: a.completion + b.completion,
    total: a.total + b.total,
    ...(a.estimated || b.estimated ? { estimated: true } : {}),
  };
}

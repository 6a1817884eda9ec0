import { z } from "zod";
import { rpc } from "./define.js";
import type { ApprovalChoice, ElicitationAction, PendingApproval, PendingElicitation } from "./approvals.js";

/**
 * The chat group: sessions, turns and everything the chat CLI/TUI need. Turns run in the
 * daemon; a `chat.send` caller receives the turn's events as `event` notifications on the
 * topic `chat.session.<sessionId>` (other connections get them by subscribing to it).
 */

export interface TokenUsage {
  prompt: number;
  completion: number;
  total: number;
  /** True when some of the numbers are estimates (the provider sent no usage). */
  estimated?: boolean;
}

export type StopReason = "done" | "max_turns" | "interrupted";

/** One streamed event of a turn. */
export type ChatEvent =
  | { type: "turn_start"; sessionId: string; turnId: string; model: string; provider: string }
  | { type: "text"; sessionId: string; turnId: string; delta: string }
  | { type: "tool_call"; sessionId: string; turnId: string; id: string; name: string; args: unknown }
  | { type: "tool_result"; sessionId: string; turnId: string; id: string; name: string; ok: boolean; durationMs: number; preview: string }
  /** A model call is being retried; text streamed since the last model call started is void. */
  | { type: "retry"; sessionId: string; turnId: string; attempt: number; delayMs: number; reason: string }
  | { type: "usage"; sessionId: string; turnId: string; turn: TokenUsage; session: TokenUsage; contextTokens: number }
  | { type: "turn_end"; sessionId: string; turnId: string; stopReason: StopReason; error?: { code: string; message: string } }
  /** Something the user should know about the turn (an MCP server whose tools are left out). */
  | { type: "notice"; sessionId: string; turnId: string; message: string }
  /** A tool call waits for a person's answer (approvals.answer). */
  | { type: "approval_request"; sessionId: string; turnId: string; approval: PendingApproval }
  /** A question was answered, timed out or dropped. */
  | {
      type: "approval_resolved";
      sessionId: string;
      turnId: string;
      id: string;
      allowed: boolean;
      choice: ApprovalChoice | null;
      by: "user" | "timeout" | "interrupt" | "rule";
      message: string;
    }
  /** An MCP server asks the person something during a tool call (approvals.elicitation.answer). */
  | { type: "elicitation_request"; sessionId: string; turnId: string; elicitation: PendingElicitation }
  /** An elicitation was answered, timed out, dropped, or declined because nobody can answer. */
  | {
      type: "elicitation_resolved";
      sessionId: string;
      turnId: string;
      id: string;
      action: ElicitationAction;
      by: "user" | "timeout" | "interrupt" | "rule";
      message: string;
    };

export const chatTopic = (sessionId: string) => `chat.session.${sessionId}`;

export interface ChatSendResult {
  sessionId: string;
  turnId: string;
  /** The final answer, with the failed-edit footer when one applies. */
  answer: string;
  footer: string | null;
  stopReason: StopReason;
  /** Model calls made in this turn. */
  modelCalls: number;
  toolCalls: number;
  usage: { turn: TokenUsage; session: TokenUsage };
  model: string;
  provider: string;
}

/** Who a session is for: a person's chat, or a cron job's or a kanban worker's run. */
/** `messaging`: a chat of a messaging platform (its `source`). */
export type SessionKind = "chat" | "cron" | "kanban" | "messaging";

export interface SessionSummary {
  id: string;
  title: string;
  kind: SessionKind;
  /** Where a `messaging` session's chat is: `<platform>` (telegram, line, …). */
  source?: string;
  model: string;
  provider: string;
  profile: string;
  parentId: string | null;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  usage: TokenUsage;
  /** True while a turn runs. */
  active: boolean;
}

/** A transcript message as stored (OpenAI chat shape plus bookkeeping). */
export interface StoredMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | Array<Record<string, unknown>> | null;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
  /** A tool's multimodal result (content parts and a text summary). */
  multimodal?: { content: Array<Record<string, unknown>>; text_summary: string };
  /** Epoch ms. */
  at?: number;
  turnId?: string;
  /** Set on messages written to close a turn that was cut off (interrupt, crash). */
  synthetic?: boolean;
}

export interface QuotaBucket {
  model: string;
  provider: string;
  /** requests, tokens, input-tokens, output-tokens, ... as named by the headers. */
  type: string;
  limit: number | null;
  remaining: number | null;
  reset: string | null;
  at: number;
}

export interface ChatStatus {
  configured: boolean;
  provider: string | null;
  model: string | null;
  fastModel: string | null;
  baseUrl: string | null;
  /** Why no provider is usable (the how-to-configure message), when not configured. */
  problem: string | null;
  maxTurns: number;
}

const sessionId = z.string().min(1).max(128);

/** A content part as the daemon stores it (OpenAI chat shape). */
const contentPart = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }).strict(),
  z
    .object({ type: z.literal("image_url"), image_url: z.object({ url: z.string().min(1), detail: z.enum(["auto", "low", "high"]).optional() }).strict() })
    .strict(),
]);

/** StoredMessage, checked field by field: a worker's append cannot slip arbitrary keys into a transcript. */
const storedMessage = z
  .object({
    role: z.enum(["system", "user", "assistant", "tool"]),
    content: z.union([z.string(), z.array(contentPart), z.null()]),
    tool_calls: z
      .array(
        z
          .object({ id: z.string().min(1), type: z.literal("function"), function: z.object({ name: z.string().min(1), arguments: z.string() }).strict() })
          .strict(),
      )
      .optional(),
    tool_call_id: z.string().min(1).optional(),
    name: z.string().optional(),
    multimodal: z
      .object({ content: z.array(contentPart), text_summary: z.string() })
      .strict()
      .optional(),
    at: z.number().optional(),
    turnId: z.string().optional(),
    synthetic: z.boolean().optional(),
  })
  .strict();

const tokenCount = z.number().int().min(0);

export const chatMethods = {
  "chat.ping": rpc<{ ok: true }>()(() => z.object({}).strict()),
  /** Run one turn (creating the session when `sessionId` is absent); resolves when the turn ends. */
  "chat.send": rpc<ChatSendResult>()(() =>
    z
      .object({
        sessionId: sessionId.optional(),
        prompt: z.string(),
        /** Absolute paths of images to attach to this prompt. */
        images: z.array(z.string().min(1)).max(16).optional(),
        maxTurns: z.number().int().min(1).max(10_000).optional(),
        provider: z.string().min(1).optional(),
        /** A model name replacing the provider's for this turn. */
        model: z.string().min(1).max(200).optional(),
        profile: z.string().min(1).optional(),
        /** Use `model.fast` for this turn. */
        fast: z.boolean().optional(),
        /** Working directory for the session's tools (set on creation, or moved). */
        cwd: z.string().min(1).optional(),
        title: z.string().optional(),
        parentId: sessionId.optional(),
        /** `/<name>` the client does not know: the daemon loads that bundle or skill as the user message, `prompt` following it. */
        slash: z.string().min(1).max(200).optional(),
        /** The caller can answer approval questions (a person at a terminal or the TUI). */
        interactive: z.boolean().optional(),
        /** `--yolo`: approvals off for this session. */
        yolo: z.boolean().optional(),
      })
      .strict(),
  ),
  /** Interrupt the session's running turn; the transcript is left consistent. */
  "chat.interrupt": rpc<{ ok: true; interrupted: boolean }>()(() => z.object({ sessionId }).strict()),
  /** Wait for the session's running turn (streaming its events); `active: false` when none runs. */
  "chat.attach": rpc<{ active: boolean; result: ChatSendResult | null }>()(() => z.object({ sessionId, interactive: z.boolean().optional() }).strict()),
  "chat.sessions.list": rpc<{ sessions: SessionSummary[] }>()(() => z.object({ limit: z.number().int().min(1).max(10_000).optional() }).strict()),
  "chat.sessions.get": rpc<{ session: SessionSummary; messages: StoredMessage[] }>()(() =>
    z.object({ sessionId, from: z.number().int().min(0).optional(), limit: z.number().int().min(1).optional() }).strict(),
  ),
  "chat.sessions.delete": rpc<{ ok: true; deleted: string }>()(() => z.object({ sessionId }).strict()),
  /** Create an empty session (for clients that want an id before the first prompt). */
  "chat.sessions.create": rpc<{ session: SessionSummary }>()(() =>
    z
      .object({
        cwd: z.string().optional(),
        profile: z.string().optional(),
        title: z.string().optional(),
        parentId: sessionId.optional(),
        kind: z.enum(["chat", "cron", "kanban", "messaging"]).optional(),
      })
      .strict(),
  ),
  /** Append messages written elsewhere (a kanban worker running its loop in its own process). */
  "chat.sessions.append": rpc<{ ok: true; messageCount: number }>()(() =>
    z
      .object({
        sessionId,
        messages: z.array(storedMessage).min(1).max(1000),
        usage: z.object({ prompt: tokenCount, completion: tokenCount, total: tokenCount, estimated: z.boolean().optional() }).strict().optional(),
      })
      .strict(),
  ),
  /**
   * A kanban worker's share of what a daemon turn has: the system prompt sections (skills
   * index, memory block) of the connection's profile, and the daemon-hosted tools (skill_view,
   * memory) available to it, which the worker runs through `chat.worker.tool`.
   */
  "chat.worker.context": rpc<{
    sections: string[];
    tools: Array<{ name: string; description: string; toolset: string; parameters: Record<string, unknown> }>;
  }>()(() => z.object({ serve: z.boolean().optional() }).strict()),
  /** Run one daemon-hosted tool (skills, memory) for a kanban worker's turn, as the connection's profile. */
  "chat.worker.tool": rpc<{ ok: boolean; output: unknown }>()(() =>
    z.object({ sessionId, name: z.string().min(1).max(200), args: z.unknown(), cwd: z.string().min(1), serve: z.boolean().optional() }).strict(),
  ),
  /** Write the session as Markdown under `$AGENT_HOME/snapshots/`. */
  "chat.snapshot": rpc<{ path: string }>()(() => z.object({ sessionId, name: z.string().max(200).optional() }).strict()),
  /** A side question answered from the session's context; not added to the history. */
  "chat.btw": rpc<{ answer: string; usage: TokenUsage }>()(() =>
    z.object({ sessionId: sessionId.optional(), question: z.string().min(1), provider: z.string().optional() }).strict(),
  ),
  /** Rate-limit buckets recorded from the providers' `x-ratelimit-*` headers. */
  "chat.quota": rpc<{ buckets: QuotaBucket[] }>()(() => z.object({}).strict()),
  "chat.status": rpc<ChatStatus>()(() => z.object({ provider: z.string().optional() }).strict()),
};

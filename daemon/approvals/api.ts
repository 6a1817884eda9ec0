import type { ApprovalAsk, ApprovalDecision, ElicitationAction } from "../../shared/protocol/approvals.js";
import type { ChatEvent } from "../../shared/protocol/chat.js";

/** Who asks, and how to reach the people who can answer. */
export interface AskContext {
  sessionId: string;
  turnId: string | null;
  profile: string;
  /** The session's working directory: writes inside it (or its git worktree) are not asked in smart mode. */
  workspace: string;
  /** True while a client that can answer is attached to the session (read when the question is asked). */
  interactive(): boolean;
  /** Delivers the question (and its end) to the session's clients. */
  emit?(event: ChatEvent): void;
  /** Aborted when the turn is interrupted or the daemon stops: the question is dropped (and the call not run). */
  signal?: AbortSignal;
  /** `--yolo` recorded with the turn. */
  yolo?: boolean;
}

/**
 * What the approvals feature offers other features through the service registry
 * (`services.get("approvals")`): the agent's turns ask it about risky tool calls.
 * ApprovalService (daemon/approvals/approval-service.ts) implements it.
 */
export interface ApprovalsApi {
  /** Decide whether a risky call runs (asks a person when the rules say so). */
  decide(ask: ApprovalAsk, ctx: AskContext): Promise<ApprovalDecision>;
  /** `--yolo` for a session's turns. */
  setYolo(sessionId: string, on: boolean): void;
  /** Forget a deleted session's grants and pending questions. */
  forgetSession(sessionId: string): void;
  /**
   * An MCP server's elicitation during a tool call: asked of the session's person (an
   * `elicitation_request` event), declined where nobody can answer, on timeout or when they leave;
   * cancelled when the call is aborted.
   */
  elicit(request: ElicitationRequest, ctx: AskContext): Promise<{ action: ElicitationAction; content?: Record<string, string | number | boolean | string[]> }>;
}

export interface ElicitationRequest {
  server: string;
  message: string;
  schema: unknown;
}

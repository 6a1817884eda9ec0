import type { ChatSendResult, SessionKind, SessionSummary, StoredMessage } from "../../shared/protocol/chat.js";
import type { CallContext, ParsedParams } from "../../shared/protocol/index.js";
import type { ModelResolver } from "../models/models.js";

/** A session to create (`ChatApi.createSession`); a field left out gets its default. */
export interface NewSession {
  id?: string;
  cwd?: string;
  profile?: string;
  title?: string;
  parentId?: string | null;
  kind?: SessionKind;
  /** For a `messaging` session: the platform. */
  source?: string;
}

/**
 * What the agent feature (chat sessions) offers other features through the service registry
 * (`services.get("chat")`): cron runs its prompt jobs' turns through it, profiles count a
 * profile's sessions, approvals check that a session exists. ChatService (daemon/agent/chat-service.ts)
 * implements it; nothing outside daemon/agent/ imports that class.
 */
export interface ChatApi {
  /** A profile's model resolution: its config over the home's. */
  modelsFor(profile: string): Promise<ModelResolver>;
  /** Create a session (an actor and its index entry). */
  createSession(input: NewSession): Promise<Omit<SessionSummary, "active">>;
  /** Queue a turn and wait for it, as `chat.send` does. */
  send(p: ParsedParams<"chat.send">, call: CallContext): Promise<ChatSendResult>;
  /** Interrupt the session's turn in flight; false when none is. */
  interrupt(sessionId: string): boolean;
  /** `/<skill or bundle>` expanded to the user message the daemon builds. */
  expandSlash(profile: string | undefined, name: string, args: string): Promise<{ message: string }>;
  /** Delete a session; throws `chat.session_not_found` when there is none. */
  delete(sessionId: string): Promise<void>;
  /** Newest first; one profile's when given. */
  list(limit?: number, profile?: string): SessionSummary[];
  find(sessionId: string): SessionSummary | undefined;
  /** Append messages written outside a turn (a handoff note); returns the message count. */
  append(sessionId: string, messages: StoredMessage[]): Promise<number>;
  /** Fold the session journals into their snapshots (before a backup). */
  flush(): Promise<void>;
}

import { join } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { SessionSummary, TokenUsage } from "../../shared/protocol/chat.js";
import { DocStore } from "../store/doc-store.js";
import { addUsage, type SessionState } from "./session-actor.js";

export type IndexEntry = Omit<SessionSummary, "active"> & { actorId: string };

/**
 * The sessions listing (`data/agent/sessions.json`): one small entry per session, so `--list`
 * reads no actor. The session actors own the truth; the index follows them after each turn.
 */
export class SessionIndex {
  private constructor(private readonly store: DocStore<{ sessions: Record<string, IndexEntry> }>) {}

  static async open(dataDir: string): Promise<SessionIndex> {
    // No .bak: a deleted session must leave no trace.
    const store = await DocStore.open({
      file: join(dataDir, "agent", "sessions.json"),
      kind: "session-index",
      version: 1,
      initial: () => ({ sessions: {} }),
      rollBack: true,
    });
    return new SessionIndex(store);
  }

  find(sessionId: string): IndexEntry | undefined {
    return this.store.data.sessions[sessionId];
  }

  /** The entry, or `chat.session_not_found`. */
  entry(sessionId: string): IndexEntry {
    const e = this.find(sessionId);
    if (!e) throw new AgentError("chat.session_not_found", `no session ${sessionId}; \`agent chat --list\` shows the sessions`, { sessionId });
    return e;
  }

  /** Newest first. */
  list(limit?: number): IndexEntry[] {
    const all = Object.values(this.store.data.sessions).sort((a, b) => b.updatedAt - a.updatedAt);
    return limit ? all.slice(0, limit) : all;
  }

  async put(entry: IndexEntry): Promise<void> {
    await this.store.update((d) => {
      d.sessions[entry.id] = entry;
    });
  }

  async remove(sessionId: string): Promise<void> {
    await this.store.update((d) => {
      delete d.sessions[sessionId];
    });
  }

  /** After messages were appended from outside a turn (a kanban worker). */
  async appended(sessionId: string, messageCount: number, usage?: TokenUsage): Promise<void> {
    await this.store.update((d) => {
      const x = d.sessions[sessionId];
      if (!x) return;
      x.messageCount = messageCount;
      x.updatedAt = Date.now();
      if (usage) x.usage = addUsage(x.usage, usage);
    });
  }

  /** Copy what a listing shows from the session actor's state. */
  async sync(state: SessionState): Promise<void> {
    await this.store.update((d) => {
      const x = d.sessions[state.id];
      if (!x) return;
      Object.assign(x, {
        title: state.title,
        model: state.model,
        provider: state.provider,
        profile: state.profile,
        messageCount: state.messageCount,
        usage: state.usage,
        updatedAt: state.updatedAt,
      });
    });
  }
}

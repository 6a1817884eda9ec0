import { AgentError } from "../../shared/errors.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { ChatService } from "./chat-service.js";

/** `sessions.*`: the history commands (`agent sessions ...`, `/branch`, `/sessions`). Scoped to the connection's profile unless `allProfiles`. */
export function sessionsHandlers(chat: ChatService): Partial<Handlers> {
  const scope = (allProfiles: boolean | undefined, profile: string) => ({ profile: allProfiles ? null : profile });
  return {
    "sessions.list": ({ limit, allProfiles, kind }, call) => {
      let sessions = chat.list(undefined, allProfiles ? undefined : call.profile);
      if (kind) sessions = sessions.filter((s) => s.kind === kind);
      return { sessions: limit ? sessions.slice(0, limit) : sessions };
    },
    "sessions.show": async ({ sessionId, from, limit }) => {
      const r = await chat.get(sessionId, from, limit);
      return { ...r, from: from ?? 0 };
    },
    "sessions.search": async ({ query, limit, window, allProfiles }, call) => {
      if (!query.trim()) throw new AgentError("sessions.invalid_argument", "the query is empty");
      return { results: await chat.history.discover(query, scope(allProfiles, call.profile), { limit, window }) };
    },
    "sessions.window": ({ sessionId, aroundMessageId, window }) => chat.history.window(sessionId, aroundMessageId, { profile: null }, { window }),
    "sessions.browse": async ({ limit, allProfiles }, call) => ({ sessions: await chat.history.browse(scope(allProfiles, call.profile), { limit }) }),
    "sessions.delete": async ({ sessionId }) => {
      await chat.delete(sessionId);
      return { ok: true, deleted: sessionId };
    },
    "sessions.export": async ({ sessionId, format }) => ({ format: format ?? "md", content: await chat.export(sessionId, format ?? "md") }),
    "sessions.reindex": () => chat.reindex(),
    "sessions.branch": async ({ sessionId, title }) => ({ session: await chat.branch(sessionId, title) }),
  };
}

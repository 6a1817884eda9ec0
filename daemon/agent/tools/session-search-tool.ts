import { z } from "zod";
import { ToolFailure } from "../../../shared/errors.js";
import { toAgentError } from "../../../shared/errors.js";
import type { SessionHistory } from "../search/session-history.js";
import { defineTool, type ToolDefinition } from "./registry.js";

const args = z
  .object({
    query: z.string().max(1000).optional().describe("words to find in past sessions (stemmed; the last word also matches as a prefix)"),
    session_id: z.string().min(1).max(128).optional().describe("with around_message_id: read that session"),
    around_message_id: z.string().min(1).max(40).optional().describe('with session_id: the message to centre the window on, e.g. "m12"'),
    limit: z.number().optional().describe("sessions to return, 1 to 10 (default 3)"),
    window: z.number().optional().describe("messages either side of the anchor, 1 to 20 (default 5)"),
  })
  .strict();

/**
 * `session_search`: the assistant's way into past sessions of its profile. The call's shape
 * follows its arguments: `query` finds messages (each hit with a window and the session's
 * bookends), `session_id` + `around_message_id` reads a window (page by re-anchoring on its
 * first or last id), nothing browses the most recent sessions. The session making the call and
 * its branch lineage are left out of discovery and browsing. No model is called.
 */
export function sessionSearchTool(history: SessionHistory): ToolDefinition<z.infer<typeof args>> {
  return defineTool({
    name: "session_search",
    description: [
      "Search and read your past sessions (this profile's).",
      "With query: full-text discovery; each result has the matching message's id, a snippet, a window of messages around it and the session's first and last three messages (bookend_start, bookend_end).",
      "With session_id and around_message_id: the messages around that one; to page, call again anchored on the window's first_id (earlier) or last_id (later): that message appears in both windows.",
      "With no arguments: the most recent sessions.",
    ].join(" "),
    toolset: "sessions",
    args,
    async run(a, ctx) {
      const scope = { profile: ctx.profile ?? "default", exclude: history.lineage(ctx.sessionId) };
      try {
        if (a.query !== undefined) {
          if (a.session_id !== undefined || a.around_message_id !== undefined)
            throw new ToolFailure("invalid_arguments", "give query alone (discovery), or session_id with around_message_id (a window), not both");
          if (!a.query.trim()) throw new ToolFailure("invalid_arguments", "query is empty; call with no arguments to browse recent sessions");
          const results = await history.discover(a.query, scope, { limit: a.limit, window: a.window });
          return { ok: true, output: { mode: "discovery", query: a.query, count: results.length, results } };
        }
        if (a.session_id !== undefined || a.around_message_id !== undefined) {
          if (a.session_id === undefined || a.around_message_id === undefined)
            throw new ToolFailure("invalid_arguments", "a window needs both session_id and around_message_id");
          return {
            ok: true,
            output: { mode: "window", ...(await history.window(a.session_id, a.around_message_id, { profile: scope.profile }, { window: a.window })) },
          };
        }
        const sessions = await history.browse(scope, { limit: a.limit });
        return { ok: true, output: { mode: "browse", count: sessions.length, sessions } };
      } catch (error) {
        if (error instanceof ToolFailure) throw error;
        const e = toAgentError(error);
        throw new ToolFailure(e.code === "chat.session_not_found" ? "not_found" : "invalid_arguments", e.message);
      }
    },
  });
}

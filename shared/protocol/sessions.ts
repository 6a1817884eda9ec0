import { z } from "zod";
import type { SessionKind, SessionSummary, StoredMessage } from "./chat.js";
import { rpc } from "./define.js";

/**
 * Session history: listing, reading, searching, exporting and branching past sessions, and the
 * home's backup. `allProfiles` widens a listing or a search beyond the connection's profile.
 */

/** A message as search results show it: its id (`m<position>`), role and text (cut to 600 characters). */
export interface HistoryMessage {
  id: string;
  role: StoredMessage["role"];
  text: string;
  /** The tool's name, for tool results. */
  tool?: string;
  at?: string;
}

export interface SearchHitResult {
  session_id: string;
  title: string;
  kind: SessionKind;
  profile: string;
  updated_at: string;
  /** The matching message. */
  message_id: string;
  snippet: string;
  score: number;
  /** Messages around the matching one (5 either side unless asked otherwise). */
  window: HistoryMessage[];
  /** The session's first three user and assistant messages. */
  bookend_start: HistoryMessage[];
  /** Its last three. */
  bookend_end: HistoryMessage[];
}

export interface SessionWindowResult {
  session_id: string;
  title: string;
  kind: SessionKind;
  anchor_id: string;
  message_count: number;
  first_id: string;
  last_id: string;
  has_before: boolean;
  has_after: boolean;
  window: HistoryMessage[];
}

export interface SessionBrowseItem {
  session_id: string;
  title: string;
  kind: SessionKind;
  profile: string;
  updated_at: string;
  message_count: number;
  bookend_start: HistoryMessage[];
  bookend_end: HistoryMessage[];
}

export interface BackupResult {
  path: string;
  bytes: number;
  files: number;
  quick: boolean;
  label: string | null;
  /** Symbolic links followed into the archive (`path -> target`). */
  followed: string[];
  /** What was left out, and why (a broken link, a loop, over the cap for followed links, a socket). */
  skipped: { path: string; reason: string }[];
}

const sessionId = z.string().min(1).max(128);
const kind = z.enum(["chat", "cron", "kanban", "messaging"]);

export const sessionsMethods = {
  "sessions.list": rpc<{ sessions: SessionSummary[] }>()(() =>
    z.object({ limit: z.number().int().min(1).max(100_000).optional(), allProfiles: z.boolean().optional(), kind: kind.optional() }).strict(),
  ),
  "sessions.show": rpc<{ session: SessionSummary; messages: StoredMessage[]; from: number }>()(() =>
    z.object({ sessionId, from: z.number().int().min(0).optional(), limit: z.number().int().min(1).max(100_000).optional() }).strict(),
  ),
  "sessions.search": rpc<{ results: SearchHitResult[] }>()(() =>
    z
      .object({
        query: z.string().min(1).max(1000),
        limit: z.number().optional(),
        window: z.number().optional(),
        allProfiles: z.boolean().optional(),
      })
      .strict(),
  ),
  "sessions.window": rpc<SessionWindowResult>()(() =>
    z.object({ sessionId, aroundMessageId: z.string().min(1).max(40), window: z.number().optional() }).strict(),
  ),
  "sessions.browse": rpc<{ sessions: SessionBrowseItem[] }>()(() => z.object({ limit: z.number().optional(), allProfiles: z.boolean().optional() }).strict()),
  "sessions.delete": rpc<{ ok: true; deleted: string }>()(() => z.object({ sessionId }).strict()),
  "sessions.export": rpc<{ format: "md" | "json"; content: string }>()(() => z.object({ sessionId, format: z.enum(["md", "json"]).optional() }).strict()),
  /** Rebuild the full-text index from every session's transcript. */
  "sessions.reindex": rpc<{ sessions: number; messages: number; ms: number }>()(() => z.object({}).strict()),
  /** A new session with the history copied, linked to its parent (`/branch`, `/fork`). */
  "sessions.branch": rpc<{ session: SessionSummary }>()(() => z.object({ sessionId, title: z.string().min(1).max(200).optional() }).strict()),
  /** A `.tar.gz` of the home, consistent while the daemon runs. */
  "backup.create": rpc<BackupResult>()(() =>
    z
      .object({
        quick: z.boolean().optional(),
        label: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "labels use letters, digits, '_', '-' and '.' (at most 64)")
          .optional(),
        output: z.string().min(1).optional(),
      })
      .strict(),
  ),
};

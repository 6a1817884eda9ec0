import { AgentError } from "../../../shared/errors.js";
import { contentText } from "../../../shared/message-text.js";
import type { SessionKind, StoredMessage } from "../../../shared/protocol/chat.js";
import type { HistoryMessage, SearchHitResult, SessionBrowseItem, SessionWindowResult } from "../../../shared/protocol/sessions.js";
import type { Excerpt } from "../session-actor.js";
import { type IndexEntry, kindOf } from "../session-index.js";
import { type SearchIndex, stem, WORD_SPLIT } from "./search-index.js";

/**
 * Searching and reading past sessions (the `session_search` tool and `agent sessions search`):
 * discovery (full text, each hit with a window around the matching message and the session's
 * bookends), a window around a message (paging by re-anchoring on a window's first or last id),
 * and browsing the most recent sessions. Nothing here calls a model.
 */

export const LIMIT = { min: 1, max: 10, default: 3 };
export const WINDOW = { min: 1, max: 20, default: 5 };
export const BOOKENDS = 3;
const TEXT_MAX = 600;
const SNIPPET_SIDE = 80;
/** Hits looked at to find `limit` sessions. */
const SCAN_HITS = 5000;

export const clamp = (value: number | undefined, r: { min: number; max: number; default: number }) =>
  value === undefined || !Number.isFinite(value) ? r.default : Math.min(r.max, Math.max(r.min, Math.round(value)));

export interface HistoryDeps {
  search: SearchIndex;
  find(sessionId: string): IndexEntry | undefined;
  /** Every session, newest first (of one profile when given). */
  list(profile?: string): IndexEntry[];
  excerpt(entry: IndexEntry, anchor: number, before: number, after: number, bookends: number): Promise<Excerpt>;
}

/** Which sessions a search sees: one profile (or all), minus some (the caller's session and its lineage). */
export interface Scope {
  profile: string | null;
  exclude?: Set<string>;
}

export const messageId = (position: number) => `m${position}`;

export function parseMessageId(id: string): number {
  const m = /^m(\d{1,9})$/.exec(id);
  if (!m) throw new AgentError("sessions.invalid_argument", `message ids look like "m12" (the message's position); got ${JSON.stringify(id).slice(0, 60)}`);
  return Number(m[1]);
}

/** Interactive sessions rank above cron and kanban runs. */
const tier = (k: SessionKind) => (k === "chat" ? 0 : 1);

export class SessionHistory {
  constructor(private readonly deps: HistoryDeps) {}

  /** The session, its ancestors (by parent links) and its descendants. */
  lineage(sessionId: string): Set<string> {
    const out = new Set<string>([sessionId]);
    for (let e = this.deps.find(sessionId); e?.parentId && !out.has(e.parentId); e = this.deps.find(e.parentId)) out.add(e.parentId);
    const children = new Map<string, string[]>();
    for (const e of this.deps.list()) if (e.parentId) children.set(e.parentId, [...(children.get(e.parentId) ?? []), e.id]);
    const todo = [sessionId];
    while (todo.length) {
      for (const c of children.get(todo.pop()!) ?? []) {
        if (!out.has(c)) {
          out.add(c);
          todo.push(c);
        }
      }
    }
    return out;
  }

  private visible(e: IndexEntry | undefined, scope: Scope): e is IndexEntry {
    return !!e && (scope.profile === null || (e.profile || "default") === scope.profile) && !scope.exclude?.has(e.id);
  }

  async discover(query: string, scope: Scope, options: { limit?: number; window?: number } = {}): Promise<SearchHitResult[]> {
    const limit = clamp(options.limit, LIMIT);
    const window = clamp(options.window, WINDOW);
    const hits = await this.deps.search.search(query, (id) => this.visible(this.deps.find(id), scope), limit);
    // The best hit of each session, interactive sessions first.
    const best = new Map<string, (typeof hits)[number]>();
    for (let i = 0; i < hits.length && i < SCAN_HITS; i++) if (!best.has(hits[i]!.sessionId)) best.set(hits[i]!.sessionId, hits[i]!);
    const picked = [...best.values()]
      .map((h) => ({ h, e: this.deps.find(h.sessionId)! }))
      .sort((a, b) => tier(kindOf(a.e)) - tier(kindOf(b.e)) || b.h.score - a.h.score)
      .slice(0, limit);
    return Promise.all(
      picked.map(async ({ h, e }) => {
        const x = await this.deps.excerpt(e, h.position, window, window, BOOKENDS);
        const anchor = x.window[h.position - x.from];
        return {
          ...heading(e),
          message_id: messageId(h.position),
          snippet: anchor ? snippet(textOf(anchor), new Set(h.terms)) : "",
          score: Math.round(h.score * 1000) / 1000,
          window: x.window.map((m, i) => render(m, x.from + i)),
          bookend_start: x.start.map(([i, m]) => render(m, i)),
          bookend_end: x.end.map(([i, m]) => render(m, i)),
        };
      }),
    );
  }

  /** A window of `window` messages either side of the anchor; the anchor's own message is in it. */
  async window(sessionId: string, aroundMessageId: string, scope: Scope, options: { window?: number } = {}): Promise<SessionWindowResult> {
    const w = clamp(options.window, WINDOW);
    const anchor = parseMessageId(aroundMessageId);
    const e = this.deps.find(sessionId);
    if (!e || (scope.profile !== null && (e.profile || "default") !== scope.profile))
      throw new AgentError("chat.session_not_found", `no session ${sessionId}${scope.profile ? ` in profile ${scope.profile}` : ""}`, { sessionId });
    const x = await this.deps.excerpt(e, anchor, w, w, 0);
    if (anchor >= x.length)
      throw new AgentError(
        "sessions.invalid_argument",
        x.length ? `session ${sessionId} has messages m0 to m${x.length - 1}; there is no ${aroundMessageId}` : `session ${sessionId} has no messages yet`,
      );
    const last = x.from + x.window.length - 1;
    return {
      session_id: e.id,
      title: e.title,
      kind: kindOf(e),
      anchor_id: messageId(anchor),
      message_count: x.length,
      first_id: messageId(x.from),
      last_id: messageId(last),
      has_before: x.from > 0,
      has_after: last < x.length - 1,
      window: x.window.map((m, i) => render(m, x.from + i)),
    };
  }

  /** The most recent sessions, newest first, each with its bookends. */
  async browse(scope: Scope, options: { limit?: number } = {}): Promise<SessionBrowseItem[]> {
    const limit = clamp(options.limit, LIMIT);
    const entries = this.deps
      .list(scope.profile ?? undefined)
      .filter((e) => !scope.exclude?.has(e.id))
      .slice(0, limit);
    return Promise.all(
      entries.map(async (e) => {
        const x = await this.deps.excerpt(e, 0, 0, 0, BOOKENDS);
        return {
          ...heading(e),
          message_count: x.length,
          bookend_start: x.start.map(([i, m]) => render(m, i)),
          bookend_end: x.end.map(([i, m]) => render(m, i)),
        };
      }),
    );
  }
}

/** Which session a search hit or a browsed item is from, as both report it. */
function heading(e: IndexEntry): Pick<SessionBrowseItem, "session_id" | "title" | "kind" | "profile" | "updated_at"> {
  return { session_id: e.id, title: e.title, kind: kindOf(e), profile: e.profile || "default", updated_at: new Date(e.updatedAt).toISOString() };
}

function textOf(m: StoredMessage): string {
  let text = contentText(m.content);
  if (!text.trim() && m.tool_calls?.length) text = m.tool_calls.map((c) => `[called ${c.function.name}]`).join(" ");
  return text;
}

function render(m: StoredMessage, position: number): HistoryMessage {
  const text = textOf(m);
  return {
    id: messageId(position),
    role: m.role,
    text: text.length > TEXT_MAX ? `${text.slice(0, TEXT_MAX)}…` : text,
    ...(m.role === "tool" && m.name ? { tool: m.name } : {}),
    ...(m.at ? { at: new Date(m.at).toISOString() } : {}),
  };
}

/** Text around the first word whose stem matched. */
export function snippet(text: string, terms: Set<string>): string {
  const flat = text.replace(/\s+/g, " ").trim();
  let at = -1;
  let offset = 0;
  for (const word of flat.split(WORD_SPLIT)) {
    const i = flat.indexOf(word, offset);
    offset = i + word.length;
    const s = word ? stem(word) : null;
    if (s !== null && [...terms].some((t) => t === s || t.startsWith(s) || s.startsWith(t))) {
      at = i;
      break;
    }
  }
  if (at < 0) return flat.length > 2 * SNIPPET_SIDE ? `${flat.slice(0, 2 * SNIPPET_SIDE)}…` : flat;
  const from = Math.max(0, at - SNIPPET_SIDE);
  const to = Math.min(flat.length, at + SNIPPET_SIDE);
  return `${from > 0 ? "…" : ""}${flat.slice(from, to)}${to < flat.length ? "…" : ""}`;
}

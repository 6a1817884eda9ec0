import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { SessionKind, SessionSummary, TokenUsage } from "../../shared/protocol/chat.js";
import { writeFileAtomic } from "../store/atomic-file.js";
import { DocStore } from "../store/doc-store.js";
import { Journal, jsonLine, parseJsonLines } from "../store/journal.js";
import { addUsage, type SessionState } from "./session-actor.js";

export type IndexEntry = Omit<SessionSummary, "active"> & { actorId: string };

const KIND = "session-index";

/** A journal line: an entry as it now is, or a removal. */
type Line = { p: IndexEntry } | { d: string };

/** The journal is folded into the snapshot past this many lines (or twice the sessions, if more). */
const FOLD_LINES = 2000;

/**
 * The sessions listing: one small entry per session, so `--list` reads no actor. The session
 * actors own the truth; the index follows them after each turn.
 *
 * On disk it is a snapshot (`data/agent/sessions.json`) and a journal of changed entries
 * (`sessions.jsonl`): a change appends one line, so its cost does not grow with the number of
 * sessions; the journal is folded into the snapshot now and then (and at every removal, so a
 * deleted session leaves no trace: no .bak, no journal line). Lines hold whole entries, so
 * replaying one twice (a crash between the fold and the journal's reset) changes nothing.
 */
export class SessionIndex {
  private readonly changeListeners = new Set<(sessionId: string) => void>();

  private constructor(
    private readonly store: DocStore<{ sessions: Record<string, IndexEntry> }>,
    private readonly journal: Journal,
  ) {}

  static async open(dataDir: string): Promise<SessionIndex> {
    const store = await DocStore.open<{ sessions: Record<string, IndexEntry> }>({
      file: join(dataDir, "agent", "sessions.json"),
      kind: KIND,
      version: 1,
      initial: () => ({ sessions: {} }),
    });
    const journal = new Journal(join(dataDir, "agent", "sessions.jsonl"), { mode: 0o600 });
    const sessions = store.data.sessions;
    for (const line of parseJsonLines<Line>(journal.loadLines())) {
      if ("p" in line) sessions[line.p.id] = line.p;
      else delete sessions[line.d];
    }
    // Sessions written before kinds existed are chat sessions.
    for (const e of Object.values(sessions)) e.kind ??= "chat";
    return new SessionIndex(store, journal);
  }

  find(sessionId: string): IndexEntry | undefined {
    return Object.hasOwn(this.store.data.sessions, sessionId) ? this.store.data.sessions[sessionId] : undefined;
  }

  /** The entry, or `chat.session_not_found`. */
  entry(sessionId: string): IndexEntry {
    const e = this.find(sessionId);
    if (!e) throw new AgentError("chat.session_not_found", `no session ${sessionId}; \`agent sessions list\` shows the sessions`, { sessionId });
    return e;
  }

  /** Newest first; only `profile`'s when given. */
  list(limit?: number, profile?: string): IndexEntry[] {
    let all = Object.values(this.store.data.sessions);
    if (profile !== undefined) all = all.filter((e) => (e.profile || "default") === profile);
    all.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1));
    return limit ? all.slice(0, limit) : all;
  }

  /** Hear of each change to an entry (put, removed, updated after a turn or an append) once it is written. Returns the unsubscribe. */
  onChange(listener: (sessionId: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private changed(sessionId: string): void {
    for (const listener of this.changeListeners) listener(sessionId);
  }

  get size(): number {
    return Object.keys(this.store.data.sessions).length;
  }

  async put(entry: IndexEntry): Promise<void> {
    this.store.data.sessions[entry.id] = entry;
    await this.record(entry);
  }

  async remove(sessionId: string): Promise<void> {
    if (!this.find(sessionId)) return;
    delete this.store.data.sessions[sessionId];
    this.journal.append(jsonLine({ d: sessionId }));
    await this.fold();
    this.changed(sessionId);
  }

  /** After messages were appended from outside a turn (a kanban worker). */
  async appended(sessionId: string, messageCount: number, usage?: TokenUsage): Promise<void> {
    const x = this.find(sessionId);
    if (!x) return;
    x.messageCount = messageCount;
    x.updatedAt = Date.now();
    if (usage) x.usage = addUsage(x.usage, usage);
    await this.record(x);
  }

  /** Copy what a listing shows from the session actor's state. */
  async sync(state: SessionState): Promise<void> {
    const x = this.find(state.id);
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
    await this.record(x);
  }

  /** Fold the journal into the snapshot (at a graceful stop, and when it grows). */
  fold(): Promise<void> {
    return this.journal.fold(async () => {
      // Serialized now: the journal's lines up to here are in it, later ones stay in the journal.
      const text = JSON.stringify({ kind: KIND, schemaVersion: 1, data: this.store.data });
      await mkdir(dirname(this.store.file), { recursive: true });
      await writeFileAtomic(this.store.file, text);
    });
  }

  close(): void {
    this.journal.close();
  }

  private async record(entry: IndexEntry): Promise<void> {
    this.journal.append(jsonLine({ p: entry }));
    if (this.journal.lines > Math.max(FOLD_LINES, 2 * this.size) && !this.journal.folding) await this.fold();
    await this.journal.durable();
    this.changed(entry.id);
  }
}

export function kindOf(e: { kind?: SessionKind }): SessionKind {
  return e.kind ?? "chat";
}

import { fg } from "../theme.js";
import blessed from "blessed";
import type { SessionSummary, StoredMessage } from "../../shared/protocol/chat.js";
import type { HistoryMessage, SearchHitResult } from "../../shared/protocol/sessions.js";
import { terminalText } from "../../shared/terminal-text.js";
import { contentText } from "../../shared/message-text.js";
import { ago, esc, wrapRuns } from "../text.js";
import type { Key } from "../widgets/input.js";
import { SelectList, TextPane } from "../widgets/select-list.js";
import { type AppContext, errorText, type KeyHelp, type View } from "./view.js";

/** A row: a session, or a search hit in one. */
interface Row {
  id: string;
  summary: SessionSummary | null;
  hit: SearchHitResult | null;
}

/** Sessions: the list or the hits of a full-text search, a preview of the selected one; open, branch, delete. */
export class SessionsView implements View {
  readonly id = "sessions" as const;
  readonly title = "Sessions";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [
    { keys: "↑/↓, j/k, PgUp/PgDn", does: "select a session" },
    { keys: "Enter", does: "open it in the chat" },
    { keys: "/", does: "search every message of every session (full text; Esc clears)" },
    { keys: "b", does: "branch: a new session with this one's history, opened in the chat" },
    { keys: "d", does: "delete the session (asks first)" },
    { keys: "a", does: "all profiles' sessions, or this profile's" },
    { keys: "n", does: "new chat" },
    { keys: "r", does: "refresh" },
  ];
  private readonly list: SelectList<Row>;
  private readonly preview: TextPane;
  private query = "";
  private allProfiles = false;
  private previewFor: string | null = null;
  private previewTimer: NodeJS.Timeout | null = null;

  constructor(private readonly app: AppContext) {
    this.root = blessed.box({ width: "100%", height: "100%" });
    this.list = new SelectList<Row>(
      { parent: this.root, top: 0, left: 0, width: "50%", height: "100%", label: " Sessions " },
      (r) => {
        if (r.hit) return `${terminalText(r.hit.title || "(untitled)")} · ${terminalText(r.hit.snippet)}`.replace(/\s+/g, " ");
        const s = r.summary!;
        const kind = s.kind && s.kind !== "chat" ? ` [${s.kind}]` : "";
        return `${s.active ? "● " : "  "}${terminalText(s.title || "(untitled)").replace(/\s+/g, " ")}${kind}  · ${s.messageCount} msgs · ${ago(s.updatedAt)}`;
      },
      (r) => (r.summary?.active ? `${fg("warn")}` : ""),
    );
    this.list.empty = "no sessions yet: type a message in the Chat view";
    this.preview = new TextPane({ parent: this.root, top: 0, left: "50%", width: "50%", height: "100%", label: " Preview " });
  }

  typing(): boolean {
    return false;
  }

  show(): void {
    void this.load();
  }

  reconnected(): void {
    void this.load();
  }

  private async load(): Promise<void> {
    try {
      if (this.query) {
        const { results } = await this.app.conn.call("sessions.search", { query: this.query, limit: 50, allProfiles: this.allProfiles });
        this.list.setItems(
          results.map((hit) => ({ id: hit.session_id, summary: null, hit })),
          (a, b) => a.id === b.id && a.hit?.message_id === b.hit?.message_id,
        );
        this.list.box.setLabel(` ${results.length} hits for "${this.query}" (Esc clears) `);
      } else {
        const { sessions } = await this.app.conn.call("sessions.list", { limit: 1000, allProfiles: this.allProfiles });
        this.list.setItems(
          sessions.map((s) => ({ id: s.id, summary: s, hit: null })),
          (a, b) => a.id === b.id,
        );
        this.list.box.setLabel(` Sessions (${sessions.length}${this.allProfiles ? ", all profiles" : ""}) `);
      }
      this.previewFor = null;
      this.schedulePreview();
    } catch (error) {
      this.app.flash(`sessions: ${errorText(error)}`, "error");
    }
    this.app.requestRender();
  }

  private schedulePreview(): void {
    if (this.previewTimer) clearTimeout(this.previewTimer);
    // Wait for the selection to settle before fetching (holding an arrow key).
    this.previewTimer = setTimeout(() => void this.loadPreview(), 60);
  }

  private async loadPreview(): Promise<void> {
    const r = this.list.selected;
    if (!r) {
      this.preview.setLines([]);
      this.app.requestRender();
      return;
    }
    if (r.hit) {
      const key = `${r.id}:${r.hit.message_id}`;
      if (this.previewFor === key) return;
      this.previewFor = key;
      this.preview.setLines(this.hitLines(r.hit));
      this.app.requestRender();
      return;
    }
    const s = r.summary!;
    if (this.previewFor === `${s.id}:${s.messageCount}`) return;
    this.previewFor = `${s.id}:${s.messageCount}`;
    try {
      const from = Math.max(0, s.messageCount - 8);
      const { messages } = await this.app.conn.call("chat.sessions.get", { sessionId: s.id, from, limit: 8 });
      if (this.list.selected?.id !== s.id) return;
      this.preview.setLines(this.previewLines(s, messages));
    } catch (error) {
      this.preview.setLines([`${fg("error")}${esc(errorText(error))}{/}`]);
    }
    this.app.requestRender();
  }

  /** A search hit: the messages around the match, the match marked. */
  private hitLines(hit: SearchHitResult): string[] {
    const w = this.preview.width;
    const head = [
      `{bold}${esc(terminalText(hit.title || "(untitled)"))}{/bold}`,
      `${fg("muted")}${esc(hit.session_id)} · ${esc(hit.profile)} · ${esc(hit.kind)} · updated ${esc(hit.updated_at.slice(0, 16).replace("T", " "))}{/}`,
      "",
    ];
    const msg = (m: HistoryMessage) => {
      const who = m.role === "user" ? `${fg("ok")}you{/}` : m.role === "assistant" ? `${fg("accent")}agent{/}` : `${fg("special")}${esc(m.tool ?? m.role)}{/}`;
      const mark = m.id === hit.message_id ? ` ${fg("warn")}◀ match{/}` : "";
      const text = terminalText(m.text).replace(/\s+/g, " ");
      return [
        `${who} ${fg("muted")}${esc(m.id)}{/}${mark}`,
        ...wrapRuns([{ text, style: m.id === hit.message_id ? "{bold}" : "" }], w, { first: "  ", rest: "  ", firstWidth: 2, restWidth: 2 }),
        "",
      ];
    };
    return [...head, ...hit.window.flatMap(msg)];
  }

  private previewLines(s: SessionSummary, messages: StoredMessage[]): string[] {
    const w = this.preview.width;
    const head = [
      `{bold}${esc(terminalText(s.title || "(untitled)"))}{/bold}`,
      `${fg("muted")}${esc(s.id)} · ${esc(s.profile)} · ${esc(s.model)} · ${s.messageCount} messages · ${s.usage.total} tokens{/}`,
      `${fg("muted")}created ${new Date(s.createdAt).toISOString().slice(0, 16).replace("T", " ")} · updated ${ago(s.updatedAt)} ago${s.parentId ? ` · branch of ${esc(s.parentId)}` : ""}{/}`,
      "",
    ];
    const body = messages
      .filter((m) => m.role !== "system")
      .flatMap((m) => {
        const text = contentText(m.content);
        const calls = m.tool_calls?.map((c) => `⚙ ${c.function.name}`).join(" ") ?? "";
        const who = m.role === "user" ? `${fg("ok")}you{/}` : m.role === "assistant" ? `${fg("accent")}agent{/}` : `${fg("special")}tool{/}`;
        const clean = terminalText(`${text} ${calls}`.trim()).replace(/\s+/g, " ").slice(0, 400);
        return [
          `${who}`,
          ...wrapRuns([{ text: clean, style: m.role === "tool" ? `${fg("muted")}` : "" }], w, { first: "  ", rest: "  ", firstWidth: 2, restWidth: 2 }),
          "",
        ];
      });
    return [...head, ...body];
  }

  handleKey(ch: string | undefined, key: Key): boolean {
    if (this.list.handleKey(ch, key)) {
      this.schedulePreview();
      return true;
    }
    const r = this.list.selected;
    if (key.name === "return" && r) {
      void this.app.openSession(r.id).catch((e) => this.app.flash(errorText(e), "error"));
      return true;
    }
    if (ch === "/") {
      void this.app.prompt("Search sessions (every message)", this.query).then((q) => {
        if (q === null) return;
        this.query = q.trim();
        void this.load();
      });
      return true;
    }
    if (key.name === "escape" && this.query) {
      this.query = "";
      void this.load();
      return true;
    }
    if (ch === "r") {
      void this.load();
      return true;
    }
    if (ch === "a") {
      this.allProfiles = !this.allProfiles;
      void this.load();
      return true;
    }
    if (ch === "n") {
      this.app.switchView("chat");
      return true;
    }
    if (ch === "b" && r) {
      void this.app.conn
        .call("sessions.branch", { sessionId: r.id })
        .then(({ session }) => {
          this.app.flash(`branched ${r.id} into ${session.id}`);
          return this.app.openSession(session.id);
        })
        .catch((e) => this.app.flash(errorText(e), "error"));
      return true;
    }
    if (ch === "d" && r) {
      const title = terminalText(r.summary?.title ?? r.hit?.title ?? "");
      void this.app.confirm(`Delete session ${r.id} "${title}" and its transcript?`).then(async (yes) => {
        if (!yes) return;
        try {
          await this.app.conn.call("sessions.delete", { sessionId: r.id });
          this.app.flash(`deleted ${r.id}`);
        } catch (error) {
          this.app.flash(errorText(error), "error");
        }
        await this.load();
      });
      return true;
    }
    return false;
  }

  draw(): void {
    this.list.draw();
    this.preview.draw();
  }
}

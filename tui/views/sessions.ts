import blessed from "blessed";
import type { SessionSummary, StoredMessage } from "../../shared/protocol/chat.js";
import { terminalText } from "../../shared/terminal-text.js";
import { ago, esc, wrapRuns } from "../text.js";
import type { Key } from "../widgets/input.js";
import { SelectList, TextPane } from "../widgets/select-list.js";
import { type AppContext, errorText, type KeyHelp, type View } from "./view.js";

/** Sessions: the list (filtered by a search), a preview of the selected one, open and delete. */
export class SessionsView implements View {
  readonly id = "sessions" as const;
  readonly title = "Sessions";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [
    { keys: "↑/↓, j/k, PgUp/PgDn", does: "select a session" },
    { keys: "Enter", does: "open it in the chat" },
    { keys: "/", does: "search (titles and ids; Esc clears)" },
    { keys: "d", does: "delete the session (asks first)" },
    { keys: "n", does: "new chat" },
    { keys: "r", does: "refresh" },
  ];
  private readonly list: SelectList<SessionSummary>;
  private readonly preview: TextPane;
  private all: SessionSummary[] = [];
  private query = "";
  private previewFor: string | null = null;
  private previewTimer: NodeJS.Timeout | null = null;

  constructor(private readonly app: AppContext) {
    this.root = blessed.box({ width: "100%", height: "100%" });
    this.list = new SelectList<SessionSummary>(
      { parent: this.root, top: 0, left: 0, width: "50%", height: "100%", label: " Sessions " },
      (s) => `${s.active ? "● " : "  "}${terminalText(s.title || "(untitled)").replace(/\s+/g, " ")}  · ${s.messageCount} msgs · ${ago(s.updatedAt)}`,
      (s) => (s.active ? "{yellow-fg}" : ""),
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
      const { sessions } = await this.app.conn.call("chat.sessions.list", { limit: 1000 });
      this.all = sessions;
      this.applyFilter();
    } catch (error) {
      this.app.flash(`sessions: ${errorText(error)}`, "error");
    }
    this.app.requestRender();
  }

  private applyFilter(): void {
    const q = this.query.toLowerCase();
    this.list.setItems(q ? this.all.filter((s) => s.title.toLowerCase().includes(q) || s.id.includes(q)) : this.all, (a, b) => a.id === b.id);
    this.list.box.setLabel(q ? ` Sessions matching "${this.query}" ` : " Sessions ");
    this.schedulePreview();
  }

  private schedulePreview(): void {
    if (this.previewTimer) clearTimeout(this.previewTimer);
    // Wait for the selection to settle before fetching (holding an arrow key).
    this.previewTimer = setTimeout(() => void this.loadPreview(), 60);
  }

  private async loadPreview(): Promise<void> {
    const s = this.list.selected;
    if (!s) {
      this.preview.setLines([]);
      this.app.requestRender();
      return;
    }
    if (this.previewFor === `${s.id}:${s.messageCount}`) return;
    this.previewFor = `${s.id}:${s.messageCount}`;
    try {
      const from = Math.max(0, s.messageCount - 8);
      const { messages } = await this.app.conn.call("chat.sessions.get", { sessionId: s.id, from, limit: 8 });
      if (this.list.selected?.id !== s.id) return;
      this.preview.setLines(this.previewLines(s, messages));
    } catch (error) {
      this.preview.setLines([`{red-fg}${esc(errorText(error))}{/}`]);
    }
    this.app.requestRender();
  }

  private previewLines(s: SessionSummary, messages: StoredMessage[]): string[] {
    const w = this.preview.width;
    const head = [
      `{bold}${esc(terminalText(s.title || "(untitled)"))}{/bold}`,
      `{gray-fg}${esc(s.id)} · ${esc(s.profile)} · ${esc(s.model)} · ${s.messageCount} messages · ${s.usage.total} tokens{/}`,
      `{gray-fg}created ${new Date(s.createdAt).toISOString().slice(0, 16).replace("T", " ")} · updated ${ago(s.updatedAt)} ago${s.parentId ? ` · branch of ${esc(s.parentId)}` : ""}{/}`,
      "",
    ];
    const body = messages
      .filter((m) => m.role !== "system")
      .flatMap((m) => {
        const text =
          typeof m.content === "string"
            ? m.content
            : Array.isArray(m.content)
              ? m.content.map((p) => (p.type === "text" ? String(p.text) : "[image]")).join(" ")
              : "";
        const calls = m.tool_calls?.map((c) => `⚙ ${c.function.name}`).join(" ") ?? "";
        const who = m.role === "user" ? "{green-fg}you{/}" : m.role === "assistant" ? "{cyan-fg}agent{/}" : "{magenta-fg}tool{/}";
        const clean = terminalText(`${text} ${calls}`.trim()).replace(/\s+/g, " ").slice(0, 400);
        return [
          `${who}`,
          ...wrapRuns([{ text: clean, style: m.role === "tool" ? "{gray-fg}" : "" }], w, { first: "  ", rest: "  ", firstWidth: 2, restWidth: 2 }),
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
    const s = this.list.selected;
    if (key.name === "return" && s) {
      void this.app.openSession(s.id).catch((e) => this.app.flash(errorText(e), "error"));
      return true;
    }
    if (ch === "/") {
      void this.app.prompt("Search sessions", this.query).then((q) => {
        if (q === null) return;
        this.query = q.trim();
        this.applyFilter();
        this.app.requestRender();
      });
      return true;
    }
    if (key.name === "escape" && this.query) {
      this.query = "";
      this.applyFilter();
      return true;
    }
    if (ch === "r") {
      void this.load();
      return true;
    }
    if (ch === "n") {
      this.app.switchView("chat");
      return true;
    }
    if (ch === "d" && s) {
      void this.app.confirm(`Delete session ${s.id} "${terminalText(s.title)}" and its transcript?`).then(async (yes) => {
        if (!yes) return;
        try {
          await this.app.conn.call("chat.sessions.delete", { sessionId: s.id });
          this.app.flash(`deleted ${s.id}`);
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

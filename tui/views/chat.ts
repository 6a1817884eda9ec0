import { existsSync } from "node:fs";
import { resolve } from "node:path";
import blessed from "blessed";
import { toAgentError } from "../../shared/errors.js";
import type { ChatEvent, ChatSendResult, ChatStatus } from "../../shared/protocol/chat.js";
import type { PendingApproval, PendingElicitation } from "../../shared/protocol/approvals.js";
import { parseSlash, renderQuota, SLASH_COMMANDS, slashHelpParts } from "../../shared/slash-commands.js";
import { TerminalTextFilter, terminalText } from "../../shared/terminal-text.js";
import { complete } from "../completion.js";
import { compact, esc, pad } from "../text.js";
import { InputEditor, type Key } from "../widgets/input.js";
import { type LogItem, VirtualLog } from "../widgets/virtual-log.js";
import { AssistantItem, ColumnsItem, itemsFromMessages, NoteItem, SetupPanel, ToolItem, UserItem } from "./chat-items.js";
import { type AppContext, errorText, type KeyHelp, type View } from "./view.js";

const PLACEHOLDER = "Type a message · /help for commands · Tab completes · F1 keys";

/**
 * The event topic of a session. Loaded on first use: the protocol module brings zod, which the
 * first frame does not need.
 */
async function chatTopic(sessionId: string): Promise<string> {
  return (await import("../../shared/protocol/chat.js")).chatTopic(sessionId);
}

/** Messages fetched per page when a session is opened or scrolled to its top. */
const PAGE = 300;

export class ChatView implements View {
  readonly id = "chat" as const;
  readonly title = "Chat";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [
    { keys: "Enter", does: "send the message (or run the /command)" },
    { keys: "Alt-Enter, Ctrl-J", does: "new line in the message" },
    { keys: "Up / Down", does: "move between lines; past the first or last line, the input history" },
    { keys: "Tab", does: "complete a /command, skill, bundle or file path" },
    { keys: "Ctrl-C", does: "interrupt the running turn; clear the input; on an empty input twice: quit" },
    { keys: "PgUp / PgDn, Shift-Up / Shift-Down", does: "scroll the transcript" },
    { keys: "Esc", does: "select in the transcript (↑/↓ or j/k move, Enter or Space expands a tool row, g/G top/bottom, Esc or i back to the input)" },
    { keys: "Ctrl-O", does: "expand or collapse every tool row" },
    { keys: "Ctrl-N", does: "start a new chat" },
    { keys: "s (empty input, no model yet)", does: "set up a model provider: preset, key, model from its list, test call" },
    { keys: "Ctrl-A / Ctrl-E, Ctrl-U / Ctrl-K, Ctrl-W", does: "line start / end, delete before / after the cursor, delete a word" },
  ];
  private readonly log: VirtualLog;
  private readonly input: InputEditor;
  private readonly inputBox: blessed.Widgets.BoxElement;
  private readonly hint: blessed.Widgets.BoxElement;
  private sessionId: string | null = null;
  private sessionTitle = "";
  private turnRunning = false;
  private current: AssistantItem | null = null;
  private deltas = new TerminalTextFilter();
  private tools = new Map<string, ToolItem>();
  private pendingImages: string[] = [];
  private fast = false;
  private debug = false;
  private selecting = false;
  private allExpanded = false;
  private hintText = "";
  private chatStatus: ChatStatus | null = null;
  private setupPanel: SetupPanel | null = null;
  private extraSlash: string[] = [];
  /** How many stored messages precede the loaded ones (older pages still on the daemon). */
  private olderFrom = 0;
  private olderLoad: Promise<void> | null = null;
  /** The "interrupting…" line while an interrupt is on its way. */
  private interrupting: NoteItem | null = null;
  /** A partial answer dropped when the connection went (see dropPartial). */
  private dropped: { sessionId: string | null; text: string } | null = null;

  constructor(private readonly app: AppContext) {
    this.root = blessed.box({ width: "100%", height: "100%" });
    const transcript = blessed.box({ parent: this.root, top: 0, left: 0, width: "100%", height: "100%-4", tags: true, wrap: false });
    this.log = new VirtualLog(transcript);
    this.log.onTop = () => void this.loadOlder();
    this.hint = blessed.box({ parent: this.root, bottom: 3, left: 1, width: "100%-2", height: 1, tags: true, wrap: false });
    this.inputBox = blessed.box({
      parent: this.root,
      bottom: 0,
      left: 0,
      width: "100%",
      height: 3,
      border: { type: "line" },
      tags: true,
      style: { border: { fg: "cyan" } },
    });
    this.input = new InputEditor(this.inputBox);
    this.input.onSubmit = (text) => void this.submit(text);
    this.input.onChange = () => {
      this.setHint("");
      this.app.requestRender();
    };
    app.conn.on("event", (e: { topic: string; data: unknown }) => {
      if (e.topic.startsWith("chat.session.")) this.onChatEvent(e.data as ChatEvent);
    });
    app.conn.on("state", (state: string) => {
      if (state === "reconnecting") this.dropPartial();
    });
  }

  /**
   * The connection dropped: text streamed by a model call that had not finished was never
   * recorded, and the daemon runs that call again when it resumes the turn (streaming the answer
   * from its start), so the partial answer goes, as after a retry.
   */
  private dropPartial(): void {
    if (!this.turnRunning || !this.current) return;
    const partial = this.current;
    this.log.items = this.log.items.filter((i) => i !== partial);
    this.current = null;
    this.deltas = new TerminalTextFilter();
    this.dropped = { sessionId: this.sessionId, text: partial.text };
    this.app.requestRender();
  }

  typing(): boolean {
    return !this.selecting;
  }

  show(): void {
    void this.refreshStatus();
  }

  /** Load what the chat needs that the daemon knows: model status, skill and bundle names. */
  async refreshStatus(): Promise<void> {
    try {
      const status = await this.app.conn.call("chat.status", {});
      this.chatStatus = status;
      this.app.status.model = status.configured
        ? `${status.provider}/${status.model}${this.fast && status.fastModel ? ` (fast: ${status.fastModel})` : ""}`
        : "no model";
      this.setSetupPanel(status.configured ? null : (status.problem ?? "no model provider is configured"));
    } catch (error) {
      this.app.flash(`chat status: ${errorText(error)}`, "error");
    }
    void Promise.all([this.app.conn.call("skills.list", {}).catch(() => null), this.app.conn.call("bundles.list", {}).catch(() => null)]).then(
      ([skills, bundles]) => {
        this.extraSlash = [...(skills?.skills.map((s) => s.slug) ?? []), ...(bundles?.bundles.map((b) => b.slug) ?? [])];
      },
    );
    this.app.requestRender();
  }

  private setSetupPanel(problem: string | null): void {
    if (this.setupPanel) this.log.items = this.log.items.filter((i) => i !== this.setupPanel);
    this.setupPanel = problem ? new SetupPanel(problem) : null;
    if (this.setupPanel) this.log.items.unshift(this.setupPanel);
  }

  sidebar(): string {
    const s = this.app.status;
    const lines = [
      "{bold}Session{/bold}",
      this.sessionId ? esc(this.sessionId) : "{gray-fg}new chat{/}",
      this.sessionTitle ? esc(this.sessionTitle) : "",
      "",
      `model    ${esc(s.model)}`,
      `context  ${compact(s.contextTokens)} tok`,
      `session  ${compact(s.sessionTokens)} tok`,
      `state    ${this.turnRunning ? "{yellow-fg}running{/}" : "idle"}`,
      this.fast ? "fast     on" : "",
      this.debug ? "debug    on" : "",
      this.pendingImages.length ? `images   ${this.pendingImages.length} attached` : "",
    ];
    if (this.chatStatus && !this.chatStatus.configured) lines.push("", "{yellow-fg}no model configured{/}", "{gray-fg}see the panel in the chat{/}");
    return lines.filter((l, i, a) => l !== "" || a[i - 1] !== "").join("\n");
  }

  private setHint(text: string): void {
    this.hintText = text;
  }

  draw(): void {
    const width = (this.inputBox.width as number) - 2;
    const rows = this.input.rows(width);
    this.inputBox.height = rows + 2;
    this.hint.bottom = rows + 2;
    (this.log.box as blessed.Widgets.BoxElement).height = Math.max(1, (this.root.height as number) - rows - 3);
    const scroll = this.log.following ? "" : "{gray-fg}↓ scrolled up: PgDn or End (in select mode G) to follow{/}";
    const state = this.turnRunning ? "{yellow-fg}● answering… (Ctrl-C interrupts){/}" : "";
    this.hint.setContent(this.hintText || [state, scroll].filter(Boolean).join("   "));
    this.input.placeholder = this.app.conn.state === "connected" ? PLACEHOLDER : "connecting to the daemon…";
    this.input.draw(!this.selecting);
    this.log.draw();
  }

  handleKey(ch: string | undefined, key: Key): boolean {
    const full = key.full ?? key.name ?? "";
    if (full === "C-c") return this.ctrlC();
    if (full === "C-o") {
      this.allExpanded = !this.allExpanded;
      for (const item of this.log.items) if (item instanceof ToolItem && item.expanded !== this.allExpanded) item.toggle();
      return this.changed();
    }
    if (full === "C-n") {
      this.newChat();
      return this.changed();
    }
    if (full === "pageup") return this.scroll(() => this.log.page(-1));
    if (full === "pagedown") return this.scroll(() => this.log.page(1));
    if (key.shift && key.name === "up") return this.scroll(() => this.log.scroll(-3));
    if (key.shift && key.name === "down") return this.scroll(() => this.log.scroll(3));
    if (this.selecting) return this.selectKey(ch, key);
    if (full === "escape") {
      this.selecting = true;
      const last = [...this.log.items.keys()].reverse().find((i) => this.log.items[i] instanceof ToolItem);
      this.log.select(last ?? this.log.items.length - 1);
      return this.changed();
    }
    if (full === "tab") return this.tab();
    // The no-model panel's offer: `s` on an empty input opens the guided set-up.
    if (ch === "s" && !key.ctrl && !key.meta && this.setupPanel && this.input.empty && !this.settingUp) {
      void this.setUp();
      return this.changed();
    }
    return this.input.handleKey(ch, key);
  }

  private settingUp = false;

  /** The guided set-up (tui/views/setup-form.ts); after it the chat uses the new provider, no restart. */
  private async setUp(): Promise<void> {
    this.settingUp = true;
    try {
      const { runSetupForm } = await import("./setup-form.js");
      if (await runSetupForm(this.app, (text, level) => this.note(text, level))) await this.refreshStatus();
    } finally {
      this.settingUp = false;
      this.app.requestRender();
    }
  }

  private selectKey(ch: string | undefined, key: Key): boolean {
    const name = key.name ?? "";
    const sel = this.log.selected ?? this.log.items.length - 1;
    if (name === "up" || ch === "k") this.log.select(sel - 1);
    else if (name === "down" || ch === "j") this.log.select(sel + 1);
    else if (name === "home" || ch === "g") {
      void this.loadAllOlder().then(() => {
        this.log.toTop();
        this.log.select(0);
        this.app.requestRender();
      });
    } else if (name === "end" || ch === "G") {
      this.log.select(this.log.items.length - 1);
      this.log.toBottom();
    } else if (name === "return" || name === "space" || ch === " ") {
      const item = this.log.items[sel];
      if (item instanceof ToolItem) item.toggle();
    } else if (name === "escape" || ch === "i" || name === "tab") {
      this.selecting = false;
      this.log.select(null);
      this.log.toBottom();
    } else if (ch && ch.length === 1 && ch >= " " && !key.ctrl && !key.meta && ch !== "?") {
      // Typing goes back to the input.
      this.selecting = false;
      this.log.select(null);
      return this.input.handleKey(ch, key);
    } else return false;
    return this.changed();
  }

  private scroll(fn: () => void): true {
    fn();
    return this.changed();
  }

  private changed(): true {
    this.app.requestRender();
    return true;
  }

  private ctrlC(): boolean {
    if (this.turnRunning && this.sessionId) {
      // One "interrupting…" line, gone when the turn has ended (then "(interrupted)" says so).
      if (!this.interrupting) {
        this.interrupting = new NoteItem("interrupting…");
        this.log.push(this.interrupting);
      }
      void this.app.conn.call("chat.interrupt", { sessionId: this.sessionId }).catch((e) => this.note(`interrupt: ${errorText(e)}`, "error"));
      return this.changed();
    }
    if (!this.input.empty) {
      this.input.clear();
      return this.changed();
    }
    return false;
  }

  private tab(): boolean {
    const c = complete(this.input.text, this.extraSlash);
    if (!c) return true;
    this.input.text = c.text;
    this.setHint(c.candidates.length ? esc(c.candidates.slice(0, 40).join("  ")) : "");
    return this.changed();
  }

  private note(text: string, level: "info" | "error" | "ok" = "info"): void {
    this.log.push(new NoteItem(terminalText(text), level));
    this.app.requestRender();
  }

  newChat(): void {
    if (this.sessionId) void chatTopic(this.sessionId).then((t) => this.app.conn.unsubscribe([t]));
    this.sessionId = null;
    this.sessionTitle = "";
    this.app.status.sessionId = null;
    this.app.status.contextTokens = 0;
    this.app.status.sessionTokens = 0;
    this.tools.clear();
    this.current = null;
    this.olderFrom = 0;
    this.log.setItems([]);
    this.setSetupPanel(this.chatStatus && !this.chatStatus.configured ? (this.chatStatus.problem ?? "") : null);
  }

  /** Show a stored session: its last page of messages; older pages load when scrolled to the top. */
  async open(sessionId: string): Promise<void> {
    const head = await this.app.conn.call("chat.sessions.get", { sessionId, limit: 1 });
    const count = head.session.messageCount;
    const from = Math.max(0, count - PAGE);
    const { session, messages } = await this.app.conn.call("chat.sessions.get", { sessionId, from, limit: PAGE });
    this.newChat();
    this.sessionId = session.id;
    this.sessionTitle = terminalText(session.title);
    this.olderFrom = from;
    this.app.status.sessionId = session.id;
    this.app.status.sessionTokens = session.usage.total;
    this.log.setItems(itemsFromMessages(messages, this.tools));
    this.setSetupPanel(this.chatStatus && !this.chatStatus.configured ? (this.chatStatus.problem ?? "") : null);
    this.note(`session ${session.id}${session.title ? ` "${session.title}"` : ""}: ${count} messages`);
    await this.app.conn.subscribe([await chatTopic(session.id)]);
    if (session.active) void this.attach();
  }

  /** Every message before the loaded ones (to jump to the session's start). */
  private async loadAllOlder(): Promise<void> {
    while (this.sessionId && this.olderFrom > 0) {
      const before = this.olderFrom;
      await this.loadOlder(2000);
      if (this.olderFrom === before) return;
    }
  }

  /** Load the page before the loaded messages; a load in flight is shared. */
  private loadOlder(page = PAGE): Promise<void> {
    if (!this.sessionId || this.olderFrom === 0) return Promise.resolve();
    this.olderLoad ??= this.fetchOlder(this.sessionId, page).finally(() => (this.olderLoad = null));
    return this.olderLoad;
  }

  private async fetchOlder(sessionId: string, page: number): Promise<void> {
    try {
      const from = Math.max(0, this.olderFrom - page);
      const { messages } = await this.app.conn.call("chat.sessions.get", { sessionId, from, limit: this.olderFrom - from });
      if (sessionId !== this.sessionId) return;
      this.olderFrom = from;
      this.log.prepend(itemsFromMessages(messages, this.tools));
      this.app.requestRender();
    } catch (error) {
      this.app.flash(`loading older messages: ${errorText(error)}`, "error");
    }
  }

  /** Follow a turn that is already running in this session (opened, or after a reconnect). */
  private async attach(): Promise<void> {
    if (!this.sessionId) return;
    this.turnRunning = true;
    this.app.status.turnRunning = true;
    this.app.requestRender();
    try {
      const attached = this.app.conn.call("chat.attach", { sessionId: this.sessionId, interactive: true });
      // Questions asked before this client came (another client is asking too): ask them here.
      void this.app.conn
        .call("approvals.pending", { sessionId: this.sessionId })
        .then((p) => {
          for (const a of p.approvals) void this.askApproval(a);
        })
        .catch(() => undefined);
      void this.app.conn
        .call("approvals.elicitation.pending", { sessionId: this.sessionId })
        .then((p) => {
          for (const e of p.elicitations) void this.askElicitation(e);
        })
        .catch(() => undefined);
      const r = await attached;
      if (r.result) this.finishTurn(r.result);
    } catch (error) {
      this.turnFailed(error);
    } finally {
      this.setRunning(false);
    }
  }

  reconnected(): void {
    void this.refreshStatus();
    if (!this.sessionId) return;
    // A turn cut off by the restart is resumed by the daemon: follow it.
    const sessionId = this.sessionId;
    const dropped = this.dropped?.sessionId === sessionId ? this.dropped : null;
    this.dropped = null;
    void this.app.conn
      .call("chat.sessions.get", { sessionId, limit: 1 })
      .then(async (r) => {
        if (r.session.active) return this.attach();
        // The turn ended before the daemon went (its answer recorded, the reply lost with the
        // connection): show the stored answer instead of the dropped partial one.
        if (!dropped || r.session.messageCount === 0) return;
        const { messages } = await this.app.conn.call("chat.sessions.get", { sessionId, from: r.session.messageCount - 1, limit: 1 });
        const last = messages[messages.length - 1];
        if (sessionId !== this.sessionId || last?.role !== "assistant") return;
        const items = itemsFromMessages([last], this.tools).filter((i) => i instanceof AssistantItem);
        const shown = this.log.items.some((i) => i instanceof AssistantItem && items.some((a) => (a as AssistantItem).text === i.text));
        if (!shown) for (const i of items) this.log.push(i);
        this.app.requestRender();
      })
      .catch(() => undefined);
  }

  private onChatEvent(ev: ChatEvent): void {
    if (this.sessionId ? ev.sessionId !== this.sessionId : !(this.turnRunning && ev.type === "turn_start")) return;
    switch (ev.type) {
      case "turn_start":
        this.sessionId ??= ev.sessionId;
        this.app.status.sessionId = this.sessionId;
        this.deltas = new TerminalTextFilter();
        this.current = null;
        this.setRunning(true);
        break;
      case "text": {
        const clean = this.deltas.push(ev.delta);
        if (!clean) break;
        if (!this.current) {
          this.current = new AssistantItem();
          this.log.push(this.current);
        }
        this.current.append(clean);
        break;
      }
      case "tool_call": {
        this.current = null;
        const item = new ToolItem(ev.id, ev.name, ev.args);
        if (this.debug || this.allExpanded) item.expanded = true;
        this.tools.set(ev.id, item);
        this.log.push(item);
        break;
      }
      case "tool_result":
        this.tools.get(ev.id)?.setResult({ ok: ev.ok, durationMs: ev.durationMs, preview: ev.preview });
        break;
      case "retry":
        // Text streamed by the failed model call is void.
        if (this.current) {
          this.log.items = this.log.items.filter((i) => i !== this.current);
          this.current = null;
        }
        this.note(`model call failed, retry ${ev.attempt} in ${(ev.delayMs / 1000).toFixed(1)} s: ${ev.reason}`);
        break;
      case "notice":
        this.note(ev.message, "error");
        break;
      case "usage":
        this.app.status.contextTokens = ev.contextTokens;
        this.app.status.sessionTokens = ev.session.total;
        break;
      case "turn_end":
        if (ev.error) this.note(`${ev.error.message}`, "error");
        break;
      case "approval_request":
        void this.askApproval(ev.approval);
        break;
      case "approval_resolved": {
        const open = this.approvalsOpen.get(ev.id);
        if (open) open.abort();
        if (ev.by !== "user") this.note(ev.message, "error");
        break;
      }
      case "elicitation_request":
        void this.askElicitation(ev.elicitation);
        break;
      case "elicitation_resolved": {
        const open = this.approvalsOpen.get(ev.id);
        if (open) open.abort();
        if (ev.by !== "user") this.note(ev.message, "error");
        break;
      }
    }
    this.app.requestRender();
  }

  private yolo = false;
  private readonly approvalsOpen = new Map<string, AbortController>();

  /** The approval dialog; the answer goes to the daemon's approval service. */
  private async askApproval(approval: PendingApproval): Promise<void> {
    if (this.approvalsOpen.has(approval.id)) return;
    const controller = new AbortController();
    this.approvalsOpen.set(approval.id, controller);
    this.app.status.approvalsWaiting++;
    this.app.requestRender();
    try {
      const answer = await this.app.askApproval(approval, controller.signal);
      if (!answer) return;
      const r = await this.app.conn.call("approvals.answer", { id: approval.id, choice: answer.choice, ...(answer.reason ? { reason: answer.reason } : {}) });
      this.note(
        r.allowed ? `approved (${answer.choice}): ${terminalText(approval.summary).slice(0, 200)}` : `denied${answer.reason ? `: ${answer.reason}` : ""}`,
      );
    } catch (error) {
      this.note(errorText(error), "error");
    } finally {
      this.approvalsOpen.delete(approval.id);
      this.app.status.approvalsWaiting--;
      this.app.requestRender();
    }
  }

  /** An MCP server's elicitation dialog; the answer goes to the daemon's approval service. */
  private async askElicitation(elicitation: PendingElicitation): Promise<void> {
    if (this.approvalsOpen.has(elicitation.id)) return;
    const controller = new AbortController();
    this.approvalsOpen.set(elicitation.id, controller);
    this.app.status.approvalsWaiting++;
    this.app.requestRender();
    try {
      const answer = await this.app.askElicitation(elicitation, controller.signal);
      if (!answer) return;
      await this.app.conn.call("approvals.elicitation.answer", {
        id: elicitation.id,
        action: answer.action,
        ...(answer.content ? { content: answer.content } : {}),
      });
      this.note(
        `${answer.action === "accept" ? "answered" : answer.action === "decline" ? "declined" : "cancelled"}: MCP server ${terminalText(elicitation.server)}`,
      );
    } catch (error) {
      this.note(errorText(error), "error");
    } finally {
      this.approvalsOpen.delete(elicitation.id);
      this.app.status.approvalsWaiting--;
      this.app.requestRender();
    }
  }

  private setRunning(running: boolean): void {
    if (!running && this.interrupting) {
      const note = this.interrupting;
      this.log.items = this.log.items.filter((i) => i !== note);
      this.interrupting = null;
    }
    this.turnRunning = running;
    this.app.status.turnRunning = running;
    this.app.requestRender();
  }

  private async submit(raw: string): Promise<void> {
    const text = raw.trim();
    if (!text) return;
    this.input.addHistory(raw);
    this.input.clear();
    this.selecting = false;
    this.log.toBottom();
    const parsed = parseSlash(text);
    try {
      if (parsed.kind === "error") this.note(parsed.message, "error");
      else if (parsed.kind === "none") await this.send(raw.replace(/^\s+|\s+$/g, ""));
      else if (parsed.kind === "forward") await this.loadSkill(parsed.name, parsed.args, parsed.hint);
      else {
        this.log.push(new UserItem(terminalText(text)));
        await this.command(parsed.command.handler, parsed.args, parsed.flags);
      }
    } catch (error) {
      const e = toAgentError(error);
      this.note(`error: ${e.message}`, "error");
    }
    this.app.requestRender();
  }

  private async send(prompt: string, slash?: string): Promise<void> {
    if (this.turnRunning) {
      this.note("a turn is running: wait for it, or Ctrl-C to interrupt it", "error");
      return;
    }
    if (!slash) this.log.push(new UserItem(terminalText(prompt)));
    const images = this.pendingImages;
    this.pendingImages = [];
    this.current = null;
    this.setRunning(true);
    try {
      const result = await this.app.conn.call("chat.send", {
        prompt,
        ...(this.sessionId ? { sessionId: this.sessionId } : {}),
        ...(images.length ? { images } : {}),
        ...(this.fast ? { fast: true } : {}),
        ...(slash ? { slash } : {}),
        ...(this.yolo ? { yolo: true } : {}),
        // A person is here to answer approval questions.
        interactive: true,
        cwd: process.cwd(),
      });
      this.finishTurn(result);
    } catch (error) {
      this.turnFailed(error);
    } finally {
      this.setRunning(false);
    }
  }

  private turnFailed(error: unknown): void {
    const e = toAgentError(error);
    if (e.code === "daemon.disconnected") this.note("the daemon went away during the turn; it resumes the turn when it is back", "error");
    else this.note(e.message, "error");
  }

  private finishTurn(result: ChatSendResult): void {
    if (!this.sessionId) {
      this.sessionId = result.sessionId;
      void chatTopic(result.sessionId).then((t) => this.app.conn.subscribe([t]));
    }
    this.app.status.sessionId = this.sessionId;
    const tail = this.deltas.end();
    if (tail && this.current) this.current.append(tail);
    // Following a turn after a reconnect, the first deltas may have streamed before this client
    // subscribed again: the stored answer is whole, so it replaces the cut one.
    if (this.current && result.answer) {
      let whole = terminalText(result.answer);
      if (result.footer) {
        const foot = terminalText(result.footer);
        if (whole.endsWith(foot)) whole = whole.slice(0, -foot.length).trimEnd();
      }
      const shown = this.current.text;
      if (shown.trim() && whole !== shown && whole.includes(shown.trim()) && !whole.startsWith(shown)) {
        this.current.text = "";
        this.current.append(whole);
      }
    }
    // An answer that was not streamed (no events reached us): show it whole.
    if (!this.current && result.answer && !this.log.items.some((i) => i instanceof AssistantItem && i.text.trim() === terminalText(result.answer).trim())) {
      const a = new AssistantItem();
      a.append(terminalText(result.answer));
      this.log.push(a);
    }
    if (result.footer) this.note(result.footer);
    if (result.stopReason === "interrupted") this.note("(interrupted)");
    if (result.stopReason === "max_turns") this.note(`(stopped: reached the turn limit after ${result.modelCalls} model calls)`);
    this.app.status.sessionTokens = result.usage.session.total;
    this.current = null;
  }

  private async loadSkill(name: string, args: string, hint: string): Promise<void> {
    let found: { kind: "skill" | "bundle"; slug: string; name: string; skills: string[]; missing: string[] };
    try {
      found = await this.app.conn.call("skills.resolve", { name });
    } catch (error) {
      if (toAgentError(error).code !== "skills.not_found") throw error;
      this.note(hint, "error");
      return;
    }
    const skipped = found.missing.length ? `; skipped, not installed: ${found.missing.join(", ")}` : "";
    this.log.push(new UserItem(terminalText(`/${name}${args ? ` ${args}` : ""}`)));
    this.note(found.kind === "bundle" ? `loading bundle ${found.name}: ${found.skills.join(", ") || "no skills"}${skipped}` : `loading skill ${found.name}`);
    await this.send(args, found.slug);
  }

  private async command(handler: string, args: string, flags: string[]): Promise<void> {
    const conn = this.app.conn;
    switch (handler) {
      case "help":
        {
          const { rows, notes } = slashHelpParts();
          this.log.push(new ColumnsItem("Commands:", rows, [...notes, "F1 lists the TUI's keys."]));
        }
        return;
      case "exit":
        if (flags.includes("--delete") || flags.includes("-d")) {
          if (!this.sessionId) this.note("no session to delete yet");
          else {
            await conn.call("chat.sessions.delete", { sessionId: this.sessionId });
            this.sessionId = null;
          }
        }
        this.app.exit();
        return;
      case "image": {
        const path = resolve(args.replace(/^["']|["']$/g, ""));
        if (!existsSync(path)) this.note(`no file at ${path}`, "error");
        else {
          this.pendingImages.push(path);
          this.note(`image attached to the next prompt: ${path}`);
        }
        return;
      }
      case "debug":
        this.debug = !this.debug;
        for (const item of this.log.items) if (item instanceof ToolItem && item.expanded !== this.debug) item.toggle();
        this.note(`debug ${this.debug ? "on: tool arguments and results are shown" : "off"}`);
        return;
      case "statusbar":
        this.note(`status bar ${this.app.toggleStatusbar() ? "on" : "off"}`);
        return;
      case "mcp": {
        const r = await conn.call("mcp.list", {});
        if (!r.servers.length) this.note(`no MCP servers configured for profile ${r.profile} (agent mcp add <name> -- <command>)`);
        for (const s of r.servers)
          this.note(
            `${s.name} (${s.transport}): ${s.state}${s.state === "ready" ? `, ${s.tools} tools` : ""}${s.last_error ? ` — ${s.last_error}` : ""}`,
            s.state === "failed" ? "error" : "info",
          );
        return;
      }
      case "yolo":
        this.yolo = !this.yolo;
        if (this.sessionId) await conn.call("approvals.yolo", { sessionId: this.sessionId, on: this.yolo });
        this.note(this.yolo ? "yolo on: approvals are off for this session; risky tool calls run unasked" : "yolo off: approvals are back on for this session");
        return;
      case "fast": {
        const s = await conn.call("chat.status", {});
        if (!s.fastModel) {
          this.note("model.fast is not set in config.yaml (e.g. model: { fast: gpt-4o-mini })", "error");
          return;
        }
        this.fast = !this.fast;
        this.note(this.fast ? `fast mode on: next turns use ${s.fastModel}` : `fast mode off: back to ${s.model ?? "the default model"}`);
        await this.refreshStatus();
        return;
      }
      case "reload": {
        await conn.call("daemon.reload", {});
        await this.refreshStatus();
        const s = this.chatStatus;
        this.note(s?.configured ? `reloaded config and .env: ${s.provider} ${s.model}` : `reloaded config and .env; ${s?.problem ?? ""}`, "ok");
        return;
      }
      case "restart": {
        this.note("restarting the daemon…");
        // The connection then starts a new daemon and reconnects; the app says so.
        await conn.restartDaemon();
        return;
      }
      case "btw": {
        this.note("(btw) thinking…");
        const r = await conn.call("chat.btw", { question: args, ...(this.sessionId ? { sessionId: this.sessionId } : {}) });
        const a = new AssistantItem();
        a.append(terminalText(`(btw) ${r.answer}`));
        this.log.push(a);
        return;
      }
      case "snapshot": {
        if (!this.sessionId) {
          this.note("nothing to snapshot yet: send a prompt first");
          return;
        }
        const r = await conn.call("chat.snapshot", { sessionId: this.sessionId, ...(args ? { name: args } : {}) });
        this.note(`snapshot written: ${r.path}`, "ok");
        return;
      }
      case "handoff": {
        if (!this.sessionId) {
          this.note("nothing to hand off yet: send a prompt first");
          return;
        }
        const [platform, chat] = args.split(/\s+/).filter(Boolean);
        const r = await conn.call("channels.handoff", { sessionId: this.sessionId, platform: platform ?? "", ...(chat ? { chat } : {}) });
        this.note(`handed off: this session continues in ${r.platform} chat ${r.chatId}`, "ok");
        return;
      }
      case "gquota": {
        const r = await conn.call("chat.quota", {});
        this.note(renderQuota(r.buckets));
        return;
      }
      case "skills": {
        const r = await conn.call("skills.list", {});
        this.note(
          r.skills.length
            ? r.skills.map((k) => `${pad(`/${k.slug}`, 24)} ${k.description}`).join("\n")
            : `no skills yet (add folders with a SKILL.md to ${r.dir})`,
        );
        for (const w of r.warnings) this.note(`skipped: ${w}`);
        return;
      }
      case "bundles": {
        const r = await conn.call("bundles.list", {});
        this.note(
          r.bundles.length
            ? r.bundles.map((b) => `${pad(`/${b.slug}`, 24)} ${b.skills.join(", ")}  ${b.description}`).join("\n")
            : "no skill bundles yet (agent bundles create <name> --skill <s>...)",
        );
        for (const w of r.warnings) this.note(`skipped: ${w}`);
        return;
      }
      case "reload-skills": {
        const r = await conn.call("skills.reload", {});
        this.note(
          `skills rescanned: ${r.skills.length} skill${r.skills.length === 1 ? "" : "s"}${r.warnings.length ? `, ${r.warnings.length} skipped` : ""}`,
          "ok",
        );
        for (const w of r.warnings) this.note(`skipped: ${w}`);
        await this.refreshStatus();
        return;
      }
      case "sessions": {
        const { sessions } = await conn.call("chat.sessions.list", { limit: 20 });
        const pick = args.trim();
        if (pick) {
          const chosen = /^\d+$/.test(pick) ? sessions[Number(pick) - 1]?.id : pick;
          if (!chosen) this.note(`no session #${pick}: /sessions lists ${sessions.length}`, "error");
          else await this.open(chosen);
          return;
        }
        this.note(
          sessions.length
            ? `${sessions
                .map(
                  (s, i) => `${String(i + 1).padStart(2)}  ${s.id}${s.id === this.sessionId ? " *" : "  "} ${String(s.messageCount).padStart(5)}  ${s.title}`,
                )
                .join("\n")}\n/sessions <n|id> resumes one; F3 opens the Sessions view (search, branch, delete)`
            : "no sessions yet",
        );
        return;
      }
      case "branch": {
        if (!this.sessionId) {
          this.note("nothing to branch yet: send a prompt first");
          return;
        }
        const from = this.sessionId;
        const { session } = await conn.call("sessions.branch", { sessionId: from, ...(args.trim() ? { title: args.trim() } : {}) });
        await this.open(session.id);
        this.note(`branched: now in session ${session.id} "${session.title}" (${session.messageCount} messages copied from ${from})`, "ok");
        return;
      }
      default:
        this.note(`/${handler} is not available in the TUI`, "error");
    }
  }

  inputEmpty(): boolean {
    return this.input.empty;
  }

  noteReconnected(pid: number): void {
    this.note(`reconnected to the daemon (pid ${pid})`, "ok");
  }

  /** Run a slash command as if typed (the palette). */
  runSlash(text: string): Promise<void> {
    return this.submit(text);
  }

  /** Palette entries for the slash commands: those that need an argument are put in the input. */
  slashEntries(): Array<{ label: string; hint: string; run: () => void }> {
    return SLASH_COMMANDS.map((c) => ({
      label: `/${c.name}${c.args ? ` ${c.args}` : ""}`,
      hint: c.summary,
      run: () => {
        if (c.needsArg) {
          this.input.text = `/${c.name} `;
          this.app.requestRender();
        } else void this.submit(`/${c.name}`);
      },
    }));
  }

  /** Items for tests and the benchmark. */
  get items(): LogItem[] {
    return this.log.items;
  }
}

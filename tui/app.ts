import { writeFileSync } from "node:fs";
import { terminalText } from "../shared/terminal-text.js";
import blessed from "blessed";
import type { DaemonClient } from "../shared/client/index.js";
import type { DaemonStatus } from "../shared/protocol/daemon.js";
import { Connection, type TrafficEntry } from "./connection.js";
import { GLOBAL_KEYS, globalAction, VIEW_ORDER } from "./keymap.js";
import { blessedTerminal } from "./terminal.js";
import { fitStatus, messagePart, part, type StatusPart } from "./status-bar.js";
import { ago, compact, esc, truncate } from "./text.js";
import { ActorsView } from "./views/actors.js";
import { ChatView } from "./views/chat.js";
import { KanbanView } from "./views/kanban.js";
import { LogsView } from "./views/logs.js";
import { ProfilesView } from "./views/profiles.js";
import { ChannelsView, stateDot } from "./views/channels.js";
import type { ChannelInfo } from "../shared/protocol/messaging.js";
import { SessionsView } from "./views/sessions.js";
import type { AppContext, StatusInfo, View, ViewId } from "./views/view.js";
import type { Key } from "./widgets/input.js";
import { ApprovalOverlay, ConfirmOverlay, HelpOverlay, type Overlay, Palette, type PaletteEntry, PromptOverlay } from "./widgets/overlays.js";

export interface AppOptions {
  home: string;
  dev: boolean;
  resume?: string;
  profile?: string;
  /** A connection to the daemon already being made (started before the UI modules load). */
  connecting?: Promise<DaemonClient>;
}

const SIDEBAR_WIDTH = 34;
/** Below this many columns the sidebar is hidden. */
const SIDEBAR_MIN_COLUMNS = 100;
const DEV_HEIGHT = envNumber("AGENT_TUI_DEV_HEIGHT", 9);

import type { ApprovalChoice, PendingApproval, PendingElicitation } from "../shared/protocol/approvals.js";
import { type ElicitationAnswer, ElicitationOverlay } from "./widgets/elicitation-overlay.js";
import { envNumber, envValue } from "../shared/config/env.js";

/** The TUI's frame: header tabs, the current view, sidebar, status bar, overlays and keys. */
export class App implements AppContext {
  readonly screen: blessed.Widgets.Screen;
  readonly conn: Connection;
  readonly home: string;
  readonly status: StatusInfo = {
    profile: "default",
    model: "…",
    contextTokens: 0,
    sessionTokens: 0,
    workers: null,
    turnRunning: false,
    sessionId: null,
    approvalsWaiting: 0,
  };
  private readonly views: Map<ViewId, View>;
  private readonly chat: ChatView;
  private readonly kanban: KanbanView;
  private current: View;
  private readonly header: blessed.Widgets.BoxElement;
  private readonly body: blessed.Widgets.BoxElement;
  private readonly sidebarBox: blessed.Widgets.BoxElement;
  private readonly statusBar: blessed.Widgets.BoxElement;
  private readonly devPanel: blessed.Widgets.BoxElement | null;
  private readonly traffic: TrafficEntry[] = [];
  private overlays: Overlay[] = [];
  private sidebarShown = true;
  private statusShown = true;
  private flashText = "";
  private flashLevel: "info" | "error" = "info";
  private flashTimer: NodeJS.Timeout | null = null;
  private exitArmedAt = 0;
  private renderScheduled = false;
  private lastRender = 0;
  private daemonStatus: DaemonStatus | null = null;
  private daemonTimer: NodeJS.Timeout | null = null;
  private resolveExit: (code: number) => void = () => undefined;
  readonly exited: Promise<number>;
  /** Set when the first complete frame (connected, views loaded) was drawn. */
  firstFrameAt: number | null = null;

  constructor(private readonly options: AppOptions) {
    this.home = options.home;
    this.exited = new Promise((r) => (this.resolveExit = r));
    this.conn = new Connection(options.home, options.profile, options.dev);
    const terminal = blessedTerminal();
    this.screen = blessed.screen({ title: "agent", fullUnicode: true, forceUnicode: true, autoPadding: false, ...(terminal ? { terminal } : {}) });
    // Draw borders with the Unicode box glyphs, never the terminal's ACS line set: tmux and many
    // terminals show ACS as "lqqk".
    (this.screen.tput as unknown as { brokenACS: boolean }).brokenACS = true;
    this.header = blessed.box({ parent: this.screen, top: 0, left: 0, width: "100%", height: 1, tags: true, wrap: false, style: { bg: "blue", fg: "white" } });
    this.body = blessed.box({ parent: this.screen, top: 1, left: 0, width: "100%", height: "100%-2" });
    this.sidebarBox = blessed.box({
      parent: this.screen,
      top: 1,
      right: 0,
      width: SIDEBAR_WIDTH,
      height: "100%-2",
      tags: true,
      border: { type: "line" },
      label: " agent ",
      wrap: false,
      padding: { left: 1 },
      style: { border: { fg: "gray" } },
    });
    this.devPanel = options.dev
      ? blessed.box({
          parent: this.screen,
          bottom: 1,
          left: 0,
          width: "100%",
          height: DEV_HEIGHT,
          tags: true,
          border: { type: "line" },
          label: " RPC traffic (--dev) ",
        })
      : null;
    this.statusBar = blessed.box({ parent: this.screen, bottom: 0, left: 0, width: "100%", height: 1, tags: true, wrap: false, style: { bg: "black" } });
    this.chat = new ChatView(this);
    this.kanban = new KanbanView(this);
    const views: View[] = [
      this.chat,
      new SessionsView(this),
      this.kanban,
      new ActorsView(this),
      new LogsView(this),
      new ProfilesView(this),
      new ChannelsView(this),
    ];
    this.views = new Map(views.map((v) => [v.id, v]));
    for (const v of views) {
      this.body.append(v.root);
      v.root.hide();
    }
    this.current = this.chat;
    this.chat.root.show();
    this.layout();
    this.wire();
  }

  private wire(): void {
    this.screen.on("keypress", (ch: string | undefined, key: Key) => this.onKey(ch, key));
    this.screen.on("resize", () => {
      this.layout();
      this.requestRender();
    });
    this.conn.on("state", (state: string) => {
      if (state === "reconnecting") this.flash("lost the daemon connection; reconnecting…", "error");
      this.requestRender();
    });
    this.conn.on("reconnected", (pid: number) => {
      this.status.profile = this.conn.connectedProfile;
      this.flash(`reconnected to the daemon (pid ${pid})`);
      this.chat.noteReconnected(pid);
      for (const v of this.views.values()) v.reconnected?.();
      void this.refreshDaemonStatus();
    });
    if (this.devPanel) {
      this.conn.on("traffic", (t: TrafficEntry) => {
        this.traffic.push(t);
        if (this.traffic.length > 500) this.traffic.splice(0, 100);
        this.requestRender();
      });
    }
  }

  /** Connect (starting the daemon if needed), then load the first view. */
  async start(): Promise<void> {
    this.render();
    try {
      await this.conn.start(this.options.connecting);
    } catch (error) {
      this.screen.destroy();
      throw error;
    }
    this.status.profile = this.conn.connectedProfile;
    if (this.options.resume) {
      await this.chat.open(this.options.resume).catch((e) => this.flash(`cannot open ${this.options.resume}: ${(e as Error).message}`, "error"));
    }
    await this.chat.refreshStatus();
    this.render();
    this.firstFrameAt = Date.now();
    // For scripts/bench/tui.mjs: milliseconds from process start to this first full frame.
    const firstFrameFile = envValue("AGENT_TUI_FIRST_FRAME_FILE");
    if (firstFrameFile) writeFileSync(firstFrameFile, String(performance.now()));
    void this.refreshDaemonStatus();
    void this.kanban.init();
    this.daemonTimer = setInterval(() => void this.refreshDaemonStatus(), 5000);
    this.daemonTimer.unref();
  }

  private async refreshDaemonStatus(): Promise<void> {
    try {
      this.daemonStatus = await this.conn.call("daemon.status", {});
      this.channels = (await this.conn.call("channels.list", {}).catch(() => null))?.channels ?? [];
      this.requestRender();
    } catch {
      // Shown as the connection state.
    }
  }

  private layout(): void {
    const devH = this.devPanel ? DEV_HEIGHT : 0;
    const statusH = this.statusShown ? 1 : 0;
    // The sidebar gives the chat its room below 100 columns (Ctrl-B still toggles it above).
    const wide = (this.screen.width as number) >= SIDEBAR_MIN_COLUMNS;
    const side = this.sidebarShown && wide;
    this.body.height = `100%-${1 + statusH + devH}` as unknown as number;
    this.body.width = side ? (`100%-${SIDEBAR_WIDTH}` as unknown as number) : "100%";
    this.sidebarBox.height = `100%-${1 + statusH + devH}` as unknown as number;
    if (side) this.sidebarBox.show();
    else this.sidebarBox.hide();
    if (this.devPanel) this.devPanel.bottom = statusH;
    if (this.statusShown) this.statusBar.show();
    else this.statusBar.hide();
  }

  requestRender(): void {
    if (this.renderScheduled) return;
    this.renderScheduled = true;
    // At most ~60 frames a second, however fast deltas stream in.
    const wait = Math.max(0, 16 - (Date.now() - this.lastRender));
    setTimeout(() => {
      this.renderScheduled = false;
      this.render();
    }, wait);
  }

  private render(): void {
    this.lastRender = Date.now();
    this.current.draw?.();
    this.header.setContent(this.headerText());
    if (this.statusShown) this.statusBar.setContent(this.statusText());
    if (this.sidebarBox.visible) {
      const own = this.current.sidebar?.();
      this.sidebarBox.setContent(own ? `${own}\n\n${this.daemonSidebar(true)}` : this.daemonSidebar(false));
    }
    if (this.devPanel) {
      const h = (this.devPanel.height as number) - 2;
      const w = (this.devPanel.width as number) - 2;
      this.devPanel.setContent(
        this.traffic
          .slice(-h)
          .map((t) => {
            const color = t.dir === "✗" ? "red" : t.dir === "⇠" ? "magenta" : t.dir === "→" ? "cyan" : "green";
            return `{${color}-fg}${t.dir}{/} ${esc(truncate(`${new Date(t.at).toISOString().slice(11, 23)} ${t.text}`, w - 2))}`;
          })
          .join("\n"),
      );
    }
    this.screen.render();
  }

  private headerText(): string {
    const tabs = VIEW_ORDER.map((v, i) => {
      const label = ` ${i + 1} ${v.title} `;
      return v.id === this.current.id ? `{inverse}{bold}${label}{/bold}{/inverse}` : label;
    }).join("");
    return ` {bold}agent{/bold} │${tabs}`;
  }

  /** The status bar: its parts shrink, least important first, to fit the width (tui/status-bar.ts). */
  private statusText(): string {
    const s = this.status;
    const state = this.conn.state;
    const pid = this.conn.pid ?? "";
    const daemon: StatusPart =
      state === "connected"
        ? { rank: 90, plain: [`● daemon ${pid}`, `● ${pid}`, "●"], forms: [`{green-fg}●{/} daemon ${pid}`, `{green-fg}●{/} ${pid}`, "{green-fg}●{/}"] }
        : state === "reconnecting"
          ? part(90, "{yellow-fg}", "● daemon reconnecting…", "● reconnecting…", "●")
          : part(90, "{yellow-fg}", "● connecting…", "●");
    const model = s.model.includes("/") ? s.model.slice(s.model.indexOf("/") + 1) : s.model;
    const parts: StatusPart[] = [];
    // A question waiting for an answer goes first and goes last, so a narrow screen still shows it.
    if (s.approvalsWaiting > 0) {
      const n = s.approvalsWaiting > 1 ? ` (${s.approvalsWaiting})` : "";
      parts.push(part(110, "{red-fg}{bold}", `⚠ approval waiting${n}`, `⚠ approval${n}`, "⚠"));
    }
    // A message goes first, so a narrow screen still shows it.
    if (this.flashText) parts.push(messagePart(100, `{${this.flashLevel === "error" ? "red" : "cyan"}-fg}`, this.flashText, esc));
    parts.push(
      daemon,
      part(60, "", `profile ${s.profile}`, s.profile),
      part(70, "", `model ${s.model}`, model, truncate(model, 16)),
      part(50, "", `ctx ${compact(s.contextTokens)}`),
      part(30, "", `tok ${compact(s.sessionTokens)}`),
      part(40, "", `workers ${s.workers === null ? "–" : s.workers}`, `w ${s.workers === null ? "–" : s.workers}`),
    );
    // The messaging adapters, each a dot coloured by its state (the Channels view has the details).
    if (this.channels.length) {
      const dots = this.channels.map((c) => `${stateDot(c.state)} ${c.platform}`);
      const plain = this.channels.map((c) => `● ${c.platform}`);
      parts.push({
        rank: 35,
        plain: [plain.join(" "), `● ${this.channels.length} ch`],
        forms: [dots.join(" "), `${stateDot(worst(this.channels))} ${this.channels.length} ch`],
      });
    }
    if (s.turnRunning) parts.push(part(80, "{yellow-fg}", "turn running", "running"));
    parts.push(part(20, "", "F1 keys", "F1"));
    return fitStatus(parts, this.screen.width as number);
  }

  /** The messaging adapters as last polled with the daemon status. */
  private channels: ChannelInfo[] = [];

  private daemonSidebar(brief: boolean): string {
    const d = this.daemonStatus;
    if (this.conn.state !== "connected") return "{yellow-fg}agentd: reconnecting…{/}";
    if (!d) return "{gray-fg}daemon status…{/}";
    const head = [`{bold}agentd{/bold} running  pid ${d.pid}`, `home     ${esc(d.home)}`];
    if (brief) return head.join("\n");
    return [
      ...head,
      `version  ${esc(d.version)}`,
      `uptime   ${ago(d.startedAt)}`,
      `clients  ${d.connections}`,
      `gateway  ${esc(d.gateway_url ?? "off")}`,
      "",
      "{bold}Components{/bold}",
      ...Object.entries(d.components).map(([n, c]) => {
        const color = c.status === "ok" ? "green" : c.status === "disabled" ? "gray" : c.status === "degraded" ? "yellow" : "red";
        return `{${color}-fg}●{/} ${esc(n)}`;
      }),
    ].join("\n");
  }

  flash(message: string, level: "info" | "error" = "info"): void {
    this.flashText = terminalText(message).replace(/\s+/g, " ");
    this.flashLevel = level;
    if (this.flashTimer) clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => {
      this.flashText = "";
      this.requestRender();
    }, 5000);
    this.flashTimer.unref();
    this.requestRender();
  }

  private pushOverlay(o: Overlay): void {
    this.overlays.push(o);
    this.render();
  }

  private popOverlay(o: Overlay): void {
    this.overlays = this.overlays.filter((x) => x !== o);
    o.el.destroy();
    this.requestRender();
  }

  prompt(label: string, initial = "", options: { secret?: boolean } = {}): Promise<string | null> {
    return new Promise((resolve) => {
      const o: Overlay = new PromptOverlay(
        this.screen,
        label,
        initial,
        (value) => {
          this.popOverlay(o);
          resolve(value);
        },
        options.secret,
      );
      this.pushOverlay(o);
    });
  }

  askApproval(approval: PendingApproval, signal: AbortSignal): Promise<{ choice: ApprovalChoice; reason?: string } | null> {
    return this.askInOverlay<{ choice: ApprovalChoice; reason?: string }>(signal, (done) => new ApprovalOverlay(this.screen, approval, done));
  }

  askElicitation(elicitation: PendingElicitation, signal: AbortSignal): Promise<ElicitationAnswer | null> {
    return this.askInOverlay<ElicitationAnswer>(signal, (done) => new ElicitationOverlay(this.screen, elicitation, done));
  }

  /** A question in an overlay: its answer, or null when `signal` aborts first (the overlay goes either way). */
  private askInOverlay<T>(signal: AbortSignal, make: (done: (answer: T | null) => void) => Overlay): Promise<T | null> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(null);
      const o: Overlay = make((answer) => {
        signal.removeEventListener("abort", onAbort);
        this.popOverlay(o);
        resolve(answer);
      });
      const onAbort = () => {
        this.popOverlay(o);
        resolve(null);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.pushOverlay(o);
    });
  }

  confirm(question: string): Promise<boolean> {
    return new Promise((resolve) => {
      const o: Overlay = new ConfirmOverlay(this.screen, question, (yes) => {
        this.popOverlay(o);
        resolve(yes);
      });
      this.pushOverlay(o);
    });
  }

  private showHelp(): void {
    const sections = [
      { title: "Everywhere", keys: GLOBAL_KEYS },
      { title: `${this.current.title} (this view)`, keys: this.current.keys },
      ...[...this.views.values()].filter((v) => v !== this.current).map((v) => ({ title: v.title, keys: v.keys })),
    ];
    const o: Overlay = new HelpOverlay(this.screen, sections, () => this.popOverlay(o));
    this.pushOverlay(o);
  }

  private showPalette(): void {
    const entries: PaletteEntry[] = [
      ...VIEW_ORDER.map((v) => ({ label: `Go to ${v.title}`, hint: v.fkey.toUpperCase(), run: () => this.switchView(v.id) })),
      { label: "New chat", hint: "Ctrl-N", run: () => (this.switchView("chat"), this.chat.newChat()) },
      { label: "Toggle sidebar", hint: "Ctrl-B", run: () => this.toggleSidebar() },
      { label: "Toggle status bar", hint: "/statusbar", run: () => this.toggleStatusbar() },
      { label: "Show keys", hint: "F1", run: () => this.showHelp() },
      { label: "Restart the daemon", hint: "/restart", run: () => void this.chat.runSlash("/restart") },
      { label: "Reload config and .env", hint: "/reload", run: () => void this.chat.runSlash("/reload") },
      { label: "Quit", hint: "Ctrl-C Ctrl-C", run: () => this.exit() },
      ...this.chat.slashEntries().map((e) => ({ label: `Chat: ${e.label}`, hint: e.hint, run: () => (this.switchView("chat"), e.run()) })),
    ];
    const o: Overlay = new Palette(this.screen, entries, () => this.popOverlay(o));
    this.pushOverlay(o);
  }

  private toggleSidebar(): void {
    this.sidebarShown = !this.sidebarShown;
    this.layout();
    this.requestRender();
  }

  toggleStatusbar(): boolean {
    this.statusShown = !this.statusShown;
    this.layout();
    this.requestRender();
    return this.statusShown;
  }

  switchView(id: ViewId): void {
    const next = this.views.get(id);
    if (!next || next === this.current) return;
    this.current.hide?.();
    this.current.root.hide();
    this.current = next;
    next.root.show();
    next.show();
    this.requestRender();
  }

  async openSession(sessionId: string): Promise<void> {
    this.switchView("chat");
    await this.chat.open(sessionId);
    this.requestRender();
  }

  private onKey(ch: string | undefined, key: Key): void {
    if (!key) return;
    const overlay = this.overlays[this.overlays.length - 1];
    if (overlay) {
      overlay.handleKey(ch, key);
      this.requestRender();
      return;
    }
    // `?` opens the keys from the chat too, while its input is empty.
    const typing = this.current.typing() && !(this.current === this.chat && ch === "?" && this.chat.inputEmpty());
    const action = globalAction(ch, key, typing);
    if (action) {
      if (action === "palette") this.showPalette();
      else if (action === "help") this.showHelp();
      else if (action === "sidebar") this.toggleSidebar();
      else if (action === "redraw") this.screen.realloc();
      else if (action === "next-view" || action === "prev-view") {
        const i = VIEW_ORDER.findIndex((v) => v.id === this.current.id);
        const n = VIEW_ORDER.length;
        this.switchView(VIEW_ORDER[(i + (action === "next-view" ? 1 : n - 1)) % n]!.id);
      } else this.switchView(action.view);
      this.requestRender();
      return;
    }
    if (this.current.handleKey(ch, key)) {
      if (key.full !== "C-c") this.exitArmedAt = 0;
      this.requestRender();
      return;
    }
    if (key.full === "C-c" || key.full === "C-d") {
      if (key.full === "C-d" || Date.now() - this.exitArmedAt < 3000) {
        this.exit();
        return;
      }
      this.exitArmedAt = Date.now();
      this.flash("press Ctrl-C again to quit");
      return;
    }
    if (key.full === "escape" && this.current !== this.chat) {
      this.switchView("chat");
    }
  }

  exit(): void {
    if (this.daemonTimer) clearInterval(this.daemonTimer);
    this.screen.destroy();
    this.conn.close();
    this.resolveExit(0);
  }
}

/** The state to show for several adapters: the worst of them. */
function worst(channels: ChannelInfo[]): ChannelInfo["state"] {
  const order: ChannelInfo["state"][] = ["error", "refused", "retrying", "starting", "stopped", "running"];
  for (const st of order) if (channels.some((c) => c.state === st)) return st;
  return "running";
}

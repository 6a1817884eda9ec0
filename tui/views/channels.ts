import blessed from "blessed";
import type { ChannelInfo } from "../../shared/protocol/messaging.js";
import { terminalText } from "../../shared/terminal-text.js";
import { ago, esc } from "../text.js";
import type { Key } from "../widgets/input.js";
import { SelectList, TextPane } from "../widgets/select-list.js";
import { type AppContext, errorText, type KeyHelp, type View } from "./view.js";

/** Channels: the messaging adapters (`agent channels status`), each with its counts and last error. */
export class ChannelsView implements View {
  readonly id = "channels" as const;
  readonly title = "Channels";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [
    { keys: "↑/↓, j/k", does: "select an adapter" },
    { keys: "r", does: "refresh" },
  ];
  private readonly list: SelectList<ChannelInfo>;
  private readonly detail: TextPane;
  private pending = 0;

  constructor(private readonly app: AppContext) {
    this.root = blessed.box({ width: "100%", height: "100%" });
    this.list = new SelectList<ChannelInfo>(
      { parent: this.root, top: 0, left: 0, width: "35%", height: "100%", label: " Channels " },
      (c) => `${stateDot(c.state)} ${c.platform}/${c.profile}`,
    );
    this.detail = new TextPane({ parent: this.root, top: 0, left: "35%", width: "65%", height: "100%", label: " Adapter " });
  }

  typing(): boolean {
    return false;
  }

  show(): void {
    void this.load();
  }

  reconnected(): void {
    if (this.root.visible) void this.load();
  }

  private async load(): Promise<void> {
    try {
      const r = await this.app.conn.call("channels.status", {});
      this.pending = r.pendingInbound;
      this.list.setItems(r.channels, (a, b) => a.platform === b.platform && a.profile === b.profile);
      this.showDetail();
    } catch (error) {
      this.app.flash(`channels: ${errorText(error)}`, "error");
    }
    this.app.requestRender();
  }

  private showDetail(): void {
    const c = this.list.selected;
    if (!c) {
      this.detail.setLines(["{gray-fg}no messaging adapter is configured (docs/messaging.md){/}"]);
      return;
    }
    const lines = [
      `{bold}${esc(c.platform)}{/bold} for profile ${esc(c.profile)}`,
      `state    ${stateDot(c.state)} ${c.state}${c.allowAll ? "  {red-fg}allow all users!{/}" : ""}`,
      `detail   ${esc(terminalText(c.detail ?? "-"))}`,
      `limit    ${c.limits.maxTextChars} characters per message`,
      "",
      `inbound  ${c.counts.inbound}   outbound ${c.counts.outbound}   refused ${c.counts.refused}   errors ${c.counts.errors}`,
      `chats    ${c.chats}   queued ${c.queued}   waiting inbound (all adapters) ${this.pending}`,
    ];
    if (c.lastError) lines.push("", "{bold}{red-fg}Last error{/}", esc(terminalText(c.lastError)), `{gray-fg}${c.lastErrorAt ? ago(c.lastErrorAt) : ""}{/}`);
    this.detail.setLines(lines);
  }

  handleKey(ch: string | undefined, key: Key): boolean {
    if (this.list.handleKey(ch, key)) {
      this.showDetail();
      return true;
    }
    if (ch === "r") {
      void this.load();
      return true;
    }
    return false;
  }

  draw(): void {
    this.list.draw();
    this.detail.draw();
  }
}

/** A coloured dot for an adapter's state (status bar and list). */
export function stateDot(state: ChannelInfo["state"]): string {
  const color = state === "running" ? "green" : state === "starting" || state === "retrying" ? "yellow" : state === "stopped" ? "gray" : "red";
  return `{${color}-fg}●{/}`;
}

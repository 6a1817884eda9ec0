import { closeSync, fstatSync, openSync, readdirSync, readSync, unwatchFile, watchFile } from "node:fs";
import { join } from "node:path";
import blessed from "blessed";
import { homePaths } from "../../shared/paths.js";
import { terminalText } from "../../shared/terminal-text.js";
import { esc, truncate } from "../text.js";
import type { Key } from "../widgets/input.js";
import { SelectList, TextPane } from "../widgets/select-list.js";
import type { AppContext, KeyHelp, View } from "./view.js";

/** How much of the end of a log file is read (the view shows its last lines). */
const TAIL_BYTES = 256 * 1024;
const MAX_LINES = 2000;
const LEVELS = ["debug", "info", "warn", "error"] as const;
const LEVEL_COLOR: Record<string, string> = { debug: "gray", info: "white", warn: "yellow", error: "red", fatal: "red" };

interface LogLine {
  level: string;
  text: string;
}

/**
 * Logs: the daemon components' JSON-lines files under $AGENT_HOME/logs, read directly (read-only,
 * like `agent logs`), so they show when the daemon is down. Followed as they grow.
 */
export class LogsView implements View {
  readonly id = "logs" as const;
  readonly title = "Logs";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [
    { keys: "↑/↓, j/k", does: "select a component" },
    { keys: "Enter, Tab", does: "move into the log to scroll it (Tab or Esc back)" },
    { keys: "f", does: "follow new lines on or off" },
    { keys: "/", does: "filter lines by text (empty clears)" },
    { keys: "l", does: "minimum level: debug, info, warn, error" },
    { keys: "r", does: "reload the list of components" },
  ];
  private readonly list: SelectList<string>;
  private readonly pane: TextPane;
  private lines: LogLine[] = [];
  private watching: string | null = null;
  private offset = 0;
  private follow = true;
  private filter = "";
  private minLevel = 0;
  private inPane = false;

  constructor(private readonly app: AppContext) {
    this.root = blessed.box({ width: "100%", height: "100%" });
    this.list = new SelectList<string>({ parent: this.root, top: 0, left: 0, width: 22, height: "100%", label: " Components " }, (c) => c);
    this.list.empty = "no logs yet";
    this.pane = new TextPane({ parent: this.root, top: 0, left: 22, width: "100%-22", height: "100%", label: " Log " });
  }

  private get dir(): string {
    return homePaths(this.app.home).logs;
  }

  typing(): boolean {
    return false;
  }

  show(): void {
    this.loadComponents();
    this.open();
  }

  hide(): void {
    this.stopWatching();
  }

  private loadComponents(): void {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir)
        .filter((f) => f.endsWith(".log"))
        .map((f) => f.slice(0, -4))
        .sort((a, b) => (a === "daemon" ? -1 : b === "daemon" ? 1 : a.localeCompare(b)));
    } catch {
      // No logs folder yet.
    }
    this.list.setItems(names, (a, b) => a === b);
  }

  private stopWatching(): void {
    if (this.watching) unwatchFile(this.watching);
    this.watching = null;
  }

  /** Read the end of the selected component's file and watch it. */
  private open(): void {
    this.stopWatching();
    const c = this.list.selected;
    this.lines = [];
    this.offset = 0;
    if (!c) {
      this.render();
      return;
    }
    const file = join(this.dir, `${c}.log`);
    this.watching = file;
    this.readFrom(file, true);
    watchFile(file, { interval: 300 }, () => {
      if (this.watching === file) this.readFrom(file, false);
    });
    this.render();
  }

  private readFrom(file: string, initial: boolean): void {
    let fd: number;
    try {
      fd = openSync(file, "r");
    } catch {
      return;
    }
    try {
      const size = fstatSync(fd).size;
      // A smaller file was rotated: start again from its beginning.
      if (size < this.offset) this.offset = 0;
      const start = initial ? Math.max(0, size - TAIL_BYTES) : this.offset;
      if (size <= start) return;
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.length, start);
      let text = buf.toString("utf8");
      // Keep a partial last line for the next read.
      const end = text.lastIndexOf("\n");
      if (end < 0) return;
      this.offset = start + Buffer.byteLength(text.slice(0, end + 1));
      text = text.slice(0, end);
      const fresh = text.split("\n").slice(initial && start > 0 ? 1 : 0);
      for (const raw of fresh) if (raw.trim()) this.lines.push(parseLine(raw));
      if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
    } finally {
      closeSync(fd);
    }
    if (!initial) this.render();
  }

  private render(): void {
    const w = this.pane.width;
    const f = this.filter.toLowerCase();
    const shown = this.lines
      .filter((l) => LEVELS.indexOf(l.level as (typeof LEVELS)[number]) >= this.minLevel || !LEVELS.includes(l.level as never))
      .filter((l) => !f || l.text.toLowerCase().includes(f));
    this.pane.setLines(
      shown.map((l) => `{${LEVEL_COLOR[l.level] ?? "white"}-fg}${esc(truncate(l.text, w))}{/}`),
      true,
    );
    this.pane.follow = this.follow;
    const c = this.list.selected ?? "";
    const bits = [c, this.follow ? "following" : "paused", `≥ ${LEVELS[this.minLevel]}`, this.filter ? `filter "${this.filter}"` : ""].filter(Boolean);
    this.pane.box.setLabel(` ${bits.join(" · ")} `);
    this.app.requestRender();
  }

  handleKey(ch: string | undefined, key: Key): boolean {
    if (this.inPane) {
      if (key.name === "tab" || key.name === "escape") {
        this.setPaneFocus(false);
        return true;
      }
      if (this.pane.handleKey(ch, key)) {
        this.follow = this.pane.follow;
        this.render();
        return true;
      }
    } else {
      if (this.list.handleKey(ch, key)) {
        this.open();
        return true;
      }
      if (key.name === "return" || key.name === "tab") {
        this.setPaneFocus(true);
        return true;
      }
    }
    if (ch === "f") {
      this.follow = !this.follow;
      this.render();
    } else if (ch === "l") {
      this.minLevel = (this.minLevel + 1) % LEVELS.length;
      this.render();
    } else if (ch === "r") {
      this.loadComponents();
      this.open();
    } else if (ch === "/") {
      void this.app.prompt("Filter log lines", this.filter).then((f) => {
        if (f === null) return;
        this.filter = f.trim();
        this.render();
      });
    } else return false;
    return true;
  }

  private setPaneFocus(on: boolean): void {
    this.inPane = on;
    this.list.focused = !on;
    this.pane.focused = on;
  }

  draw(): void {
    this.list.draw();
    this.pane.draw();
  }
}

function parseLine(raw: string): LogLine {
  try {
    const r = JSON.parse(raw) as Record<string, unknown>;
    const { ts, level, component, msg, ...rest } = r;
    const fields = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : "";
    const time = typeof ts === "string" ? ts.slice(11, 23) : "";
    return { level: String(level ?? "info"), text: terminalText(`${time} ${String(level ?? "").padEnd(5)} ${msg ?? ""}${fields}`).replace(/\n/g, " ") };
  } catch {
    return { level: "info", text: terminalText(raw) };
  }
}

import { fg, type Role } from "../theme.js";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import blessed from "blessed";
import { LogFollower, readLastLines } from "../../shared/log-follow.js";
import { homePaths } from "../../shared/paths.js";
import { terminalText } from "../../shared/terminal-text.js";
import { esc, truncate } from "../text.js";
import type { Key } from "../widgets/input.js";
import { SelectList, TextPane } from "../widgets/select-list.js";
import type { AppContext, KeyHelp, View } from "./view.js";

/** Lines kept (the view shows the last ones of a log, reaching into its rotated files). */
const MAX_LINES = 2000;
/** How often the followed file is looked at (shared/log-follow.ts). */
const FOLLOW_INTERVAL_MS = 300;
const LEVELS = ["debug", "info", "warn", "error"] as const;
const LEVEL_ROLE: Record<string, Role> = { debug: "muted", info: "text", warn: "warn", error: "error", fatal: "error" };

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
  private follower: LogFollower | null = null;
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
    this.follower?.stop();
    this.follower = null;
  }

  /** Read the last lines of the selected component's log and follow it (across rotations). */
  private open(): void {
    this.stopWatching();
    const c = this.list.selected;
    this.lines = [];
    if (!c) {
      this.render();
      return;
    }
    const file = join(this.dir, `${c}.log`);
    const { lines, end } = readLastLines(file, MAX_LINES);
    this.add(lines);
    const follower = new LogFollower(file, {
      from: end > 0 ? end : "start",
      onLines: (fresh) => {
        if (this.follower !== follower) return;
        this.add(fresh);
        this.render();
      },
    });
    this.follower = follower.start(FOLLOW_INTERVAL_MS);
    this.render();
  }

  private add(raw: string[]): void {
    for (const line of raw) if (line.trim()) this.lines.push(parseLine(line));
    if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
  }

  private render(): void {
    const w = this.pane.width;
    const f = this.filter.toLowerCase();
    const shown = this.lines
      .filter((l) => LEVELS.indexOf(l.level as (typeof LEVELS)[number]) >= this.minLevel || !LEVELS.includes(l.level as never))
      .filter((l) => !f || l.text.toLowerCase().includes(f));
    this.pane.setLines(
      shown.map((l) => `${fg(LEVEL_ROLE[l.level] ?? "text")}${esc(truncate(l.text, w))}{/}`),
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

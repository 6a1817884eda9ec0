import { color, fg } from "../theme.js";
import blessed from "blessed";
import { twoColumns } from "../columns.js";
import { diffLines } from "../highlight.js";
import { esc, pad, tagged } from "../text.js";
import { InputEditor, type Key } from "./input.js";
import type { ApprovalChoice, PendingApproval } from "../../shared/protocol/approvals.js";
import { terminalText } from "../../shared/terminal-text.js";

/** A modal box on top of the views: it gets every key until it closes. */
export interface Overlay {
  readonly el: blessed.Widgets.BoxElement;
  handleKey(ch: string | undefined, key: Key): void;
  onClose?: () => void;
}

/** A centred box; sizes are fractions of the screen (≤ 1) or columns/rows. */
export function frame(screen: blessed.Widgets.Screen, label: string, width: number, height: number): blessed.Widgets.BoxElement {
  const sw = screen.width as number;
  const sh = screen.height as number;
  const w = Math.min(sw, Math.max(20, Math.floor(width <= 1 ? sw * width : width)));
  const h = Math.min(sh, Math.max(3, Math.floor(height <= 1 ? sh * height : height)));
  return blessed.box({
    parent: screen,
    top: Math.floor((sh - h) / 2),
    left: Math.floor((sw - w) / 2),
    width: w,
    height: h,
    label: ` ${label} `,
    border: { type: "line" },
    tags: true,
    wrap: false,
    style: { border: { fg: color("borderActive") }, bg: color("chromeBg") },
  });
}

/** The `?` overlay: every key, scrollable. */
export class HelpOverlay implements Overlay {
  readonly el: blessed.Widgets.BoxElement;
  private top = 0;
  private readonly lines: string[];
  constructor(
    screen: blessed.Widgets.Screen,
    sections: Array<{ title: string; keys: Array<{ keys: string; does: string }> }>,
    private readonly close: () => void,
  ) {
    this.el = frame(screen, "Keys (Esc closes, ↑/↓ scroll)", 0.9, 0.9);
    const width = (this.el.width as number) - 2;
    const keyWidth = Math.max(10, ...sections.flatMap((s) => s.keys.filter((k) => k.keys.length <= 24).map((k) => k.keys.length)));
    this.lines = sections.flatMap((s) => [
      `{bold}${fg("accent")}${esc(s.title)}{/}`,
      ...twoColumns(
        s.keys.map((k) => [k.keys, k.does] as const),
        width,
        // One key column for every section, so they all line up.
        { maxLeft: keyWidth, minLeft: keyWidth, leftStyle: `${fg("warn")}` },
      ),
      "",
    ]);
    this.draw();
  }
  private draw(): void {
    const h = Math.max(1, (this.el.height as number) - 2);
    this.top = Math.max(0, Math.min(this.top, this.lines.length - h));
    this.el.setContent(this.lines.slice(this.top, this.top + h).join("\n"));
  }
  handleKey(ch: string | undefined, key: Key): void {
    const n = key.name;
    if (n === "escape" || n === "q" || ch === "?" || n === "f1" || n === "return") {
      this.close();
      return;
    }
    if (n === "down" || ch === "j") this.top++;
    else if (n === "up" || ch === "k") this.top--;
    else if (n === "pagedown" || n === "space") this.top += 10;
    else if (n === "pageup") this.top -= 10;
    this.draw();
  }
}

export interface PaletteEntry {
  label: string;
  hint?: string;
  run: () => void;
}

/** The command palette (Ctrl-P): type to filter, Enter runs. */
export class Palette implements Overlay {
  readonly el: blessed.Widgets.BoxElement;
  private filter = "";
  private index = 0;
  constructor(
    screen: blessed.Widgets.Screen,
    private readonly entries: PaletteEntry[],
    private readonly close: () => void,
  ) {
    this.el = frame(screen, "Command palette", 0.7, Math.min(entries.length + 4, 24));
    this.draw();
  }
  private matches(): PaletteEntry[] {
    const words = this.filter.toLowerCase().split(/\s+/).filter(Boolean);
    return this.entries.filter((e) => words.every((w) => e.label.toLowerCase().includes(w)));
  }
  private draw(): void {
    const list = this.matches();
    this.index = Math.max(0, Math.min(this.index, list.length - 1));
    const h = Math.max(1, (this.el.height as number) - 4);
    const start = Math.max(0, this.index - h + 1);
    const w = (this.el.width as number) - 4;
    const rows = list.slice(start, start + h).map((e, i) => {
      const text = pad(`${e.label}${e.hint ? `   ${e.hint}` : ""}`, w);
      return start + i === this.index ? `{inverse}${esc(text)}{/inverse}` : esc(text);
    });
    this.el.setContent([`${fg("accent")}>{/} ${esc(this.filter)}{inverse} {/inverse}`, "", ...(rows.length ? rows : [`${fg("muted")}no match{/}`])].join("\n"));
  }
  handleKey(ch: string | undefined, key: Key): void {
    const n = key.name;
    if (n === "escape" || key.full === "C-p" || key.full === "C-c") {
      this.close();
      return;
    }
    if (n === "return") {
      const e = this.matches()[this.index];
      this.close();
      e?.run();
      return;
    }
    if (n === "down" || key.full === "C-n") this.index++;
    else if (n === "up") this.index--;
    else if (n === "backspace") this.filter = this.filter.slice(0, -1);
    else if (ch && !key.ctrl && !key.meta && ch >= " ") {
      this.filter += ch;
      this.index = 0;
    }
    this.draw();
  }
}

/** A one-line question (Enter answers, Esc cancels). */
export class PromptOverlay implements Overlay {
  readonly el: blessed.Widgets.BoxElement;
  private readonly input = new InputEditor();
  constructor(
    screen: blessed.Widgets.Screen,
    label: string,
    initial: string,
    private readonly done: (value: string | null) => void,
    /** Typed text is shown as dots (an API key). */
    private readonly secret = false,
  ) {
    this.el = frame(screen, label, 0.7, 5);
    this.input.text = initial;
    this.input.onSubmit = (text) => this.done(text);
    this.input.onChange = () => this.draw();
    this.draw();
  }
  draw(): void {
    const w = (this.el.width as number) - 2;
    const shown = this.secret ? `${"•".repeat(Math.min([...this.input.text].length, w - 2))}{inverse} {/inverse}` : null;
    const line = shown ?? this.input.render(w, true).slice(-1)[0] ?? "";
    this.el.setContent(`${line}\n\n${fg("muted")}Enter confirms · Esc cancels{/}`);
  }
  handleKey(ch: string | undefined, key: Key): void {
    if (key.name === "escape" || key.full === "C-c") {
      this.done(null);
      return;
    }
    if (key.name === "enter" || (key.name === "return" && key.meta)) return;
    this.input.handleKey(ch, key);
    this.draw();
  }
}

/** A yes/no question. */
export class ConfirmOverlay implements Overlay {
  readonly el: blessed.Widgets.BoxElement;
  constructor(
    screen: blessed.Widgets.Screen,
    question: string,
    private readonly done: (yes: boolean) => void,
  ) {
    this.el = frame(screen, "Confirm", 0.6, 5);
    this.el.setContent(`${esc(question)}\n${fg("muted")}y: yes · n or Esc: no{/}`);
  }
  handleKey(ch: string | undefined, key: Key): void {
    if (ch === "y" || ch === "Y") this.done(true);
    else if (ch === "n" || ch === "N" || key.name === "escape" || key.full === "C-c") this.done(false);
  }
}

/**
 * An approval question (docs/approvals.md): the command and where it runs, or the diff of the
 * write (↑/↓ scroll); o once · s session · a always · d deny, then an optional reason.
 * Every text from the model is cleaned of terminal escapes and blessed tags.
 */
export class ApprovalOverlay implements Overlay {
  readonly el: blessed.Widgets.BoxElement;
  private top = 0;
  private readonly body: string[];
  private reason: InputEditor | null = null;
  constructor(
    screen: blessed.Widgets.Screen,
    private readonly approval: PendingApproval,
    private readonly done: (answer: { choice: ApprovalChoice; reason?: string } | null) => void,
  ) {
    this.el = frame(screen, "Approval needed", 0.85, 0.8);
    const clean = (s: string) => esc(terminalText(s).replace(/\r/g, ""));
    const a = approval;
    const lines = [`${fg("warn")}⚠ ${clean(a.why)}{/}`, `${fg("muted")}${clean(a.tool)} · session ${clean(a.sessionId)}{/}`, ""];
    if (a.kind === "command") {
      lines.push(
        "{bold}command{/bold}",
        ...clean(a.details.command ?? a.summary)
          .split("\n")
          .map((l) => `  ${l}`),
      );
      lines.push("", `{bold}cwd{/bold}  ${clean(a.details.cwd ?? "?")}`);
    } else if (a.kind === "file_write") {
      lines.push(`{bold}file{/bold}  ${clean(a.details.path ?? a.summary)}`, "");
      // The diff coloured by its marks (tui/highlight.ts), as in the chat's tool rows.
      for (const line of diffLines(terminalText(a.details.diff ?? "").replace(/\r/g, ""))) lines.push(line.map((r) => tagged(r)).join(""));
    } else {
      lines.push(clean(a.summary), "", clean(JSON.stringify(a.details.args ?? {})));
    }
    this.body = lines;
    this.draw();
  }
  private draw(): void {
    const h = Math.max(1, (this.el.height as number) - 5);
    this.top = Math.max(0, Math.min(this.top, this.body.length - h));
    const seconds = Math.max(0, Math.round((this.approval.expiresAt - Date.now()) / 1000));
    const footer = this.reason
      ? `reason for the model (optional): ${this.reason.render((this.el.width as number) - 40, true).slice(-1)[0] ?? ""}\n${fg("muted")}Enter denies · Esc back{/}`
      : `{bold}o{/bold} once · {bold}s{/bold} this session · {bold}a{/bold} always · {bold}d{/bold} deny (with a reason) · ↑/↓ scroll\n${fg("muted")}denied unanswered in ${seconds} s{/}`;
    this.el.setContent([...this.body.slice(this.top, this.top + h), ...Array(Math.max(0, h - this.body.length)).fill(""), "", footer].join("\n"));
  }
  handleKey(ch: string | undefined, key: Key): void {
    if (this.reason) {
      if (key.name === "escape") this.reason = null;
      else if (key.name === "enter" || (key.name === "return" && key.meta)) return;
      else this.reason.handleKey(ch, key);
      this.draw();
      return;
    }
    const n = key.name;
    if (ch === "o") this.done({ choice: "once" });
    else if (ch === "s") this.done({ choice: "session" });
    else if (ch === "a") this.done({ choice: "always" });
    else if (ch === "d") {
      const input = new InputEditor();
      input.onSubmit = (text) => this.done({ choice: "deny", ...(text.trim() ? { reason: text.trim() } : {}) });
      input.onChange = () => this.draw();
      this.reason = input;
      this.draw();
    } else if (n === "down" || ch === "j") {
      this.top++;
      this.draw();
    } else if (n === "up" || ch === "k") {
      this.top--;
      this.draw();
    } else if (n === "pagedown" || n === "space") {
      this.top += 10;
      this.draw();
    } else if (n === "pageup") {
      this.top -= 10;
      this.draw();
    }
  }
}

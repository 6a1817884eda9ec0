import { fg } from "../theme.js";
import type { Widgets } from "blessed";
import { esc, textWidth } from "../text.js";

export interface Key {
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
  full?: string;
  sequence?: string;
}

const MAX_ROWS = 8;

/**
 * A multi-line text input drawn into a bordered box: Enter sends, Alt-Enter or Ctrl-J adds a
 * line, Up/Down walk the lines and then the history. A pasted block arrives as keys in one burst;
 * an Enter followed by more keys of the same burst is a newline, not a send.
 */
export class InputEditor {
  lines: string[] = [""];
  row = 0;
  col = 0;
  private history: string[] = [];
  private historyIndex: number | null = null;
  private draft = "";
  private pendingReturn = false;
  private viewTop = 0;
  placeholder = "";
  onSubmit: (text: string) => void = () => undefined;
  onChange: () => void = () => undefined;

  /** `box` is where draw() puts the text; without one, render() gives the lines. */
  constructor(readonly box: Widgets.BoxElement = null as unknown as Widgets.BoxElement) {}

  get text(): string {
    return this.lines.join("\n");
  }

  set text(value: string) {
    this.lines = value.split("\n");
    this.row = this.lines.length - 1;
    this.col = this.lines[this.row]!.length;
  }

  get empty(): boolean {
    return this.lines.length === 1 && this.lines[0] === "";
  }

  clear(): void {
    this.text = "";
    this.historyIndex = null;
  }

  addHistory(entry: string): void {
    if (entry.trim() && this.history[this.history.length - 1] !== entry) this.history.push(entry);
    if (this.history.length > 500) this.history.shift();
    this.historyIndex = null;
  }

  /** Handle a key; false when it is not the editor's. */
  handleKey(ch: string | undefined, key: Key): boolean {
    if (this.pendingReturn) {
      // More keys in the same burst as an Enter: a paste, so that Enter was a line break.
      this.pendingReturn = false;
      this.newline();
    }
    const name = key.name ?? "";
    if (name === "return" && key.meta) return this.edit(() => this.newline());
    if (name === "return") {
      this.pendingReturn = true;
      setImmediate(() => {
        if (!this.pendingReturn) return;
        this.pendingReturn = false;
        this.onSubmit(this.text);
      });
      return true;
    }
    if (name === "enter" || key.full === "C-j") return this.edit(() => this.newline());
    if (name === "backspace") return this.edit(() => this.backspace());
    if (name === "delete" || key.full === "C-d") {
      if (key.full === "C-d" && this.empty) return false;
      return this.edit(() => this.deleteForward());
    }
    if (name === "left") return this.move(() => this.left());
    if (name === "right") return this.move(() => this.right());
    if (name === "home" || key.full === "C-a") return this.move(() => (this.col = 0));
    if (name === "end" || key.full === "C-e") return this.move(() => (this.col = this.line.length));
    if (key.full === "C-u") return this.edit(() => this.killBefore());
    if (key.full === "C-k") return this.edit(() => (this.lines[this.row] = this.line.slice(0, this.col)));
    if (key.full === "C-w" || (key.meta && name === "backspace")) return this.edit(() => this.deleteWord());
    if (name === "up" && !key.ctrl && !key.meta) {
      if (this.row > 0) return this.move(() => this.vertical(-1));
      return this.recall(-1);
    }
    if (name === "down" && !key.ctrl && !key.meta) {
      if (this.row < this.lines.length - 1) return this.move(() => this.vertical(1));
      return this.recall(1);
    }
    if (ch && !key.ctrl && !key.meta && isPrintable(ch)) return this.edit(() => this.insert(ch));
    return false;
  }

  private get line(): string {
    return this.lines[this.row]!;
  }

  private edit(fn: () => void): true {
    fn();
    this.onChange();
    return true;
  }

  private move(fn: () => void): true {
    fn();
    this.onChange();
    return true;
  }

  insert(text: string): void {
    const parts = text.replace(/\r\n?/g, "\n").split("\n");
    const after = this.line.slice(this.col);
    this.lines[this.row] = this.line.slice(0, this.col) + parts[0];
    this.col = this.lines[this.row]!.length;
    for (const p of parts.slice(1)) {
      this.lines.splice(++this.row, 0, p);
      this.col = p.length;
    }
    this.lines[this.row] += after;
  }

  private newline(): void {
    const after = this.line.slice(this.col);
    this.lines[this.row] = this.line.slice(0, this.col);
    this.lines.splice(++this.row, 0, after);
    this.col = 0;
  }

  private backspace(): void {
    if (this.col > 0) {
      const n = charBefore(this.line, this.col);
      this.lines[this.row] = this.line.slice(0, this.col - n) + this.line.slice(this.col);
      this.col -= n;
    } else if (this.row > 0) {
      const prev = this.lines[this.row - 1]!;
      this.lines.splice(this.row - 1, 2, prev + this.line);
      this.row--;
      this.col = prev.length;
    }
  }

  private deleteForward(): void {
    if (this.col < this.line.length) {
      const n = charAfter(this.line, this.col);
      this.lines[this.row] = this.line.slice(0, this.col) + this.line.slice(this.col + n);
    } else if (this.row < this.lines.length - 1) {
      this.lines.splice(this.row, 2, this.line + this.lines[this.row + 1]);
    }
  }

  private killBefore(): void {
    this.lines[this.row] = this.line.slice(this.col);
    this.col = 0;
  }

  private deleteWord(): void {
    const before = this.line.slice(0, this.col);
    const m = /\S*\s*$/.exec(before)!;
    const cut = m[0].length || (before.length ? 1 : 0);
    if (!cut && this.row > 0) {
      this.backspace();
      return;
    }
    this.lines[this.row] = before.slice(0, before.length - cut) + this.line.slice(this.col);
    this.col -= cut;
  }

  private left(): void {
    if (this.col > 0) this.col -= charBefore(this.line, this.col);
    else if (this.row > 0) {
      this.row--;
      this.col = this.line.length;
    }
  }

  private right(): void {
    if (this.col < this.line.length) this.col += charAfter(this.line, this.col);
    else if (this.row < this.lines.length - 1) {
      this.row++;
      this.col = 0;
    }
  }

  private vertical(d: number): void {
    this.row += d;
    this.col = Math.min(this.col, this.line.length);
  }

  private recall(d: -1 | 1): boolean {
    if (!this.history.length) return false;
    if (this.historyIndex === null) {
      if (d > 0) return false;
      this.draft = this.text;
      this.historyIndex = this.history.length;
    }
    const next = this.historyIndex + d;
    if (next < 0) return true;
    this.historyIndex = next;
    this.text = next >= this.history.length ? this.draft : this.history[next]!;
    if (next >= this.history.length) this.historyIndex = null;
    this.onChange();
    return true;
  }

  /** Rows the box needs for its content (without the border). */
  rows(width: number): number {
    return Math.min(MAX_ROWS, this.visual(width).rows.length);
  }

  /** The lines wrapped to `width`, with where the cursor lands. */
  private visual(width: number): { rows: string[]; cursorRow: number; cursorCol: number } {
    const rows: string[] = [];
    let cursorRow = 0;
    let cursorCol = 0;
    const w = Math.max(2, width - 1);
    this.lines.forEach((line, li) => {
      const chars = Array.from(line);
      let row = "";
      let rowWidth = 0;
      let idx = 0;
      const push = () => {
        rows.push(row);
        row = "";
        rowWidth = 0;
      };
      for (const ch of chars) {
        if (li === this.row && idx === this.col) {
          cursorRow = rows.length;
          cursorCol = row.length;
        }
        const cw = textWidth(ch);
        if (rowWidth + cw > w) push();
        if (li === this.row && idx === this.col) {
          cursorRow = rows.length;
          cursorCol = row.length;
        }
        row += ch;
        rowWidth += cw;
        idx += ch.length;
      }
      if (li === this.row && idx <= this.col) {
        cursorRow = rows.length;
        cursorCol = row.length;
      }
      push();
    });
    return { rows, cursorRow, cursorCol };
  }

  /** Draw into the box; `focused` shows the cursor. */
  draw(focused: boolean): void {
    this.box.setContent(this.render((this.box.width as number) - Number(this.box.iwidth ?? 2), focused).join("\n"));
  }

  /** The visible rows as tagged lines, the cursor shown inverse when focused. */
  render(width: number, focused: boolean): string[] {
    if (this.empty && this.placeholder) return [`${focused ? "{inverse} {/inverse}" : ""}${fg("muted")}${esc(this.placeholder)}{/}`];
    const { rows, cursorRow, cursorCol } = this.visual(width);
    const height = Math.min(MAX_ROWS, rows.length);
    if (cursorRow < this.viewTop) this.viewTop = cursorRow;
    if (cursorRow >= this.viewTop + height) this.viewTop = cursorRow - height + 1;
    this.viewTop = Math.max(0, Math.min(this.viewTop, rows.length - height));
    return rows.slice(this.viewTop, this.viewTop + height).map((r, i) => {
      if (!focused || i + this.viewTop !== cursorRow) return esc(r);
      const at = r.slice(cursorCol);
      const first = Array.from(at)[0] ?? " ";
      return `${esc(r.slice(0, cursorCol))}{inverse}${esc(first)}{/inverse}${esc(at.slice(first === " " && !at ? 0 : first.length))}`;
    });
  }
}

function isPrintable(ch: string): boolean {
  const c = ch.codePointAt(0) ?? 0;
  return c >= 0x20 && c !== 0x7f && !(c >= 0x80 && c <= 0x9f);
}

function charBefore(s: string, i: number): number {
  const c = s.charCodeAt(i - 1);
  return c >= 0xdc00 && c <= 0xdfff && i >= 2 ? 2 : 1;
}

function charAfter(s: string, i: number): number {
  const c = s.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff ? 2 : 1;
}

import { color, fg } from "../theme.js";
import blessed from "blessed";
import { esc, pad } from "../text.js";
import type { Key } from "./input.js";

/**
 * A list with a selection that draws only the rows on screen. Rows are plain strings (escaped
 * here); `style` colours a row.
 */
export class SelectList<T> {
  readonly box: blessed.Widgets.BoxElement;
  items: T[] = [];
  index = 0;
  private top = 0;
  focused = true;
  empty = "nothing here";

  constructor(
    options: blessed.Widgets.BoxOptions,
    private readonly row: (item: T, width: number) => string,
    private readonly style: (item: T) => string = () => "",
  ) {
    this.box = blessed.box({ tags: true, border: { type: "line" }, wrap: false, ...options });
  }

  get selected(): T | undefined {
    return this.items[this.index];
  }

  setItems(items: T[], keep?: (a: T, b: T) => boolean): void {
    const prev = this.selected;
    this.items = items;
    if (prev !== undefined && keep) {
      const i = items.findIndex((x) => keep(x, prev));
      if (i >= 0) this.index = i;
    }
    this.index = Math.max(0, Math.min(this.index, items.length - 1));
  }

  /** Move with ↑/↓ j/k PgUp/PgDn Home/End g/G; true when the key was a move. */
  handleKey(ch: string | undefined, key: Key): boolean {
    const h = this.height;
    const n = key.name;
    if (n === "up" || ch === "k") this.index--;
    else if (n === "down" || ch === "j") this.index++;
    else if (n === "pageup") this.index -= h;
    else if (n === "pagedown") this.index += h;
    else if (n === "home" || ch === "g") this.index = 0;
    else if (n === "end" || ch === "G") this.index = this.items.length - 1;
    else return false;
    this.index = Math.max(0, Math.min(this.index, this.items.length - 1));
    return true;
  }

  private get height(): number {
    return Math.max(1, (this.box.height as number) - 2);
  }

  draw(): void {
    const h = this.height;
    const w = Math.max(1, (this.box.width as number) - 2);
    if (!this.items.length) {
      this.box.setContent(`${fg("muted")}${esc(this.empty)}{/}`);
      return;
    }
    if (this.index < this.top) this.top = this.index;
    if (this.index >= this.top + h) this.top = this.index - h + 1;
    this.top = Math.max(0, Math.min(this.top, this.items.length - h));
    const rows: string[] = [];
    for (let i = this.top; i < Math.min(this.items.length, this.top + h); i++) {
      const item = this.items[i]!;
      const text = esc(pad(this.row(item, w), w));
      if (i === this.index) rows.push(this.focused ? `{inverse}${text}{/inverse}` : `{underline}${text}{/underline}`);
      else {
        const style = this.style(item);
        rows.push(style ? `${style}${text}{/}` : text);
      }
    }
    this.box.setContent(rows.join("\n"));
    this.box.style.border = { fg: color(this.focused ? "borderActive" : "border") };
  }
}

/** A read-only scrolling text pane (details, previews, inspector). Lines are tagged strings. */
export class TextPane {
  readonly box: blessed.Widgets.BoxElement;
  lines: string[] = [];
  top = 0;
  /** Keep showing the end as lines are added. */
  follow = false;
  focused = false;

  constructor(options: blessed.Widgets.BoxOptions) {
    this.box = blessed.box({ tags: true, border: { type: "line" }, wrap: false, ...options });
  }

  get height(): number {
    return Math.max(1, (this.box.height as number) - 2);
  }

  get width(): number {
    return Math.max(10, (this.box.width as number) - 3);
  }

  setLines(lines: string[], keepPosition = false): void {
    this.lines = lines;
    if (!keepPosition) this.top = 0;
  }

  handleKey(ch: string | undefined, key: Key): boolean {
    const n = key.name;
    const h = this.height;
    if (n === "up" || ch === "k") this.top--;
    else if (n === "down" || ch === "j") this.top++;
    else if (n === "pageup") this.top -= h;
    else if (n === "pagedown" || n === "space") this.top += h;
    else if (n === "home" || ch === "g") this.top = 0;
    else if (n === "end" || ch === "G") this.top = this.lines.length;
    else return false;
    this.follow = this.top >= this.lines.length - h;
    return true;
  }

  draw(): void {
    const h = this.height;
    const max = Math.max(0, this.lines.length - h);
    this.top = this.follow ? max : Math.max(0, Math.min(this.top, max));
    this.box.setContent(this.lines.slice(this.top, this.top + h).join("\n"));
    this.box.style.border = { fg: color(this.focused ? "borderActive" : "border") };
  }
}

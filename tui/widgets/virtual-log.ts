import type { Widgets } from "blessed";

/** An entry of a virtual log: renders itself to tagged lines for a width. */
export interface LogItem {
  /** Bumped whenever the item's content changes (streamed text), to drop its cached lines. */
  version: number;
  render(width: number, selected: boolean): string[];
}

interface Cached {
  width: number;
  version: number;
  selected: boolean;
  lines: string[];
}

/**
 * A scrolling list of items that renders only what is on screen: the position is an anchor
 * (item index, line within it), so drawing and scrolling cost what the screen holds, whether
 * the list has ten items or ten thousand. Items are rendered lazily and their lines cached per
 * width. At the bottom it follows new items.
 */
export class VirtualLog {
  items: LogItem[] = [];
  selected: number | null = null;
  private follow = true;
  private anchor = { index: 0, offset: 0 };
  private cache = new WeakMap<LogItem, Cached>();
  /** Called when the top is reached (to load older items). */
  onTop: (() => void) | null = null;

  constructor(readonly box: Widgets.BoxElement) {}

  get following(): boolean {
    return this.follow;
  }

  private get width(): number {
    return Math.max(10, (this.box.width as number) - Number(this.box.iwidth ?? 0) - 1);
  }

  private get height(): number {
    return Math.max(1, (this.box.height as number) - Number(this.box.iheight ?? 0));
  }

  private lines(index: number): string[] {
    const item = this.items[index]!;
    const width = this.width;
    const selected = this.selected === index;
    const c = this.cache.get(item);
    if (c && c.width === width && c.version === item.version && c.selected === selected) return c.lines;
    const lines = item.render(width, selected);
    this.cache.set(item, { width, version: item.version, selected, lines });
    return lines;
  }

  setItems(items: LogItem[]): void {
    this.items = items;
    this.selected = null;
    this.follow = true;
  }

  push(item: LogItem): void {
    this.items.push(item);
  }

  /** Older items put in front; the view stays where it was. */
  prepend(items: LogItem[]): void {
    this.items = [...items, ...this.items];
    this.anchor.index += items.length;
    if (this.selected !== null) this.selected += items.length;
  }

  /** Place the anchor so the last `height` lines end at the bottom. */
  private anchorAtBottom(): void {
    let need = this.height;
    let i = this.items.length - 1;
    while (i >= 0) {
      const n = this.lines(i).length;
      if (n >= need) {
        this.anchor = { index: i, offset: n - need };
        return;
      }
      need -= n;
      i--;
    }
    this.anchor = { index: 0, offset: 0 };
  }

  /** Scroll by `delta` lines (negative: up). */
  scroll(delta: number): void {
    if (!this.items.length) return;
    if (this.follow) this.anchorAtBottom();
    this.follow = false;
    let { index, offset } = this.anchor;
    if (delta < 0) {
      let left = -delta;
      while (left > 0) {
        if (offset >= left) {
          offset -= left;
          left = 0;
        } else {
          left -= offset;
          if (index === 0) {
            offset = 0;
            break;
          }
          index--;
          offset = this.lines(index).length;
        }
      }
      if (index <= 2) this.onTop?.();
    } else {
      let left = delta;
      while (left > 0 && index < this.items.length) {
        const n = this.lines(index).length;
        if (offset + left < n) {
          offset += left;
          left = 0;
        } else {
          left -= n - offset;
          index++;
          offset = 0;
        }
      }
    }
    this.anchor = { index: Math.min(index, this.items.length - 1), offset };
    if (this.linesBelowAnchor() <= this.height) this.follow = true;
  }

  private linesBelowAnchor(): number {
    let total = -this.anchor.offset;
    for (let i = this.anchor.index; i < this.items.length; i++) {
      total += this.lines(i).length;
      if (total > this.height) break;
    }
    return total;
  }

  page(dir: 1 | -1): void {
    this.scroll(dir * Math.max(1, this.height - 2));
  }

  toTop(): void {
    this.follow = false;
    this.anchor = { index: 0, offset: 0 };
    this.onTop?.();
    if (this.linesBelowAnchor() <= this.height) this.follow = true;
  }

  toBottom(): void {
    this.follow = true;
  }

  /** Move the selection (for expanding rows) and keep it on screen. */
  select(index: number | null): void {
    this.selected = index === null ? null : Math.max(0, Math.min(this.items.length - 1, index));
    if (this.selected === null) return;
    if (this.follow) this.anchorAtBottom();
    if (this.selected < this.anchor.index || (this.selected === this.anchor.index && this.anchor.offset > 0)) {
      this.follow = false;
      this.anchor = { index: this.selected, offset: 0 };
      return;
    }
    // Below the screen: scroll until its first line shows.
    let rows = -this.anchor.offset;
    for (let i = this.anchor.index; i < this.selected; i++) rows += this.lines(i).length;
    if (rows >= this.height) this.scroll(rows - this.height + Math.min(this.lines(this.selected).length, this.height));
  }

  draw(): void {
    const height = this.height;
    if (this.follow) this.anchorAtBottom();
    const out: string[] = [];
    let { index, offset } = this.anchor;
    while (out.length < height && index < this.items.length) {
      const lines = this.lines(index);
      for (let j = offset; j < lines.length && out.length < height; j++) out.push(lines[j]!);
      index++;
      offset = 0;
    }
    this.box.setContent(out.join("\n"));
  }
}

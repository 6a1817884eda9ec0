import blessed from "blessed";
import { renderMarkdown } from "./markdown.js";

/**
 * An ANSI backend for the TUI's Markdown renderer (tui/markdown.ts: marked's lexer, one mapping
 * of tokens to styles), for the line-mode chat on a terminal. The renderer's blessed tags are
 * turned into SGR sequences (or dropped with `color: false`, e.g. NO_COLOR); the text between
 * them was tag-escaped by the renderer and must already be clean of terminal escapes.
 */
export function renderMarkdownAnsi(source: string, width: number, color: boolean): string {
  return renderMarkdown(source, width)
    .map((line) => tagsToAnsi(line, color))
    .join("\n");
}

const SGR: Record<string, string> = {
  bold: "1",
  underline: "4",
  "cyan-fg": "36",
  "gray-fg": "90",
  "yellow-fg": "33",
  "blue-fg": "34",
};

/** A tag's SGR parameters: the named styles above, or a palette colour (`#rrggbb-fg`) as its 256-colour index. */
function sgr(name: string): string | undefined {
  const known = SGR[name];
  if (known) return known;
  const m = /^(#[0-9a-f]{6})-(fg|bg)$/i.exec(name);
  if (!m) return undefined;
  const index = (blessed as unknown as { colors: { match(hex: string): number } }).colors.match(m[1]!);
  return `${m[2] === "fg" ? 38 : 48};5;${index}`;
}

/** One tagged line to ANSI: `{open}`/`{close}` are braces, `{/}` ends every style, `{/x}` one. */
export function tagsToAnsi(line: string, color: boolean): string {
  const active: string[] = [];
  let out = "";
  let styled = false;
  const apply = () => {
    if (!color) return;
    if (styled) out += "\x1b[0m";
    styled = active.length > 0;
    if (styled) out += `\x1b[${active.map((t) => sgr(t)).join(";")}m`;
  };
  for (const part of line.split(/(\{[^{}]*\})/)) {
    const m = /^\{(\/?)([a-z0-9#-]*)\}$/i.exec(part);
    if (!m) {
      out += part;
      continue;
    }
    const [, close, name] = m;
    if (!close && name === "open") out += "{";
    else if (!close && name === "close") out += "}";
    else if (close && !name) {
      active.length = 0;
      apply();
    } else if (name && sgr(name)) {
      const at = active.indexOf(name);
      if (close && at >= 0) active.splice(at, 1);
      else if (!close && at < 0) active.push(name);
      apply();
    }
    // An unknown tag is not text the model wrote (that was escaped): drop it.
  }
  if (color && styled) out += "\x1b[0m";
  return out;
}

/**
 * Streamed Markdown for the line-mode chat: text is held until a block is complete (a blank
 * line outside a code fence), then that part is rendered; `end` renders the rest. Each rendered
 * part is separated from the previous one by a blank line.
 */
export class MarkdownStream {
  private buffer = "";
  private printed = false;

  constructor(
    private readonly width: () => number,
    private readonly color: boolean,
  ) {}

  /** Clean text in; what can be printed now out (may be ""). */
  push(text: string): string {
    this.buffer += text;
    const cut = completeBlocks(this.buffer);
    if (cut <= 0) return "";
    const done = this.buffer.slice(0, cut);
    this.buffer = this.buffer.slice(cut);
    return this.render(done);
  }

  /** Everything still held, rendered (the turn ended, or a tool line is about to be printed). */
  end(): string {
    const rest = this.buffer;
    this.buffer = "";
    const out = this.render(rest);
    return out;
  }

  /** A new turn: the next part starts without a separating blank line. */
  reset(): void {
    this.buffer = "";
    this.printed = false;
  }

  private render(text: string): string {
    if (!text.trim()) return "";
    const body = renderMarkdownAnsi(text, Math.max(20, this.width()), this.color);
    const out = `${this.printed ? "\n" : ""}${body}\n`;
    this.printed = true;
    return out;
  }
}

/** Where the complete blocks of `text` end: after its last blank line outside a code fence, or 0. */
function completeBlocks(text: string): number {
  let fenced = false;
  let end = 0;
  let at = 0;
  const lines = text.split("\n");
  // The last piece has no newline yet: it is never complete.
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i]!;
    at += line.length + 1;
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && line.trim() === "" && i > 0) end = at;
  }
  return end;
}

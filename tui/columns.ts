import { esc, textWidth, wrapRuns } from "./text.js";

/**
 * Two columns of plain text (a key or command, then what it does) as tagged lines for `width`
 * columns: the left column as wide as its longest entry up to `maxLeft`, two spaces, then the
 * right one wrapped under itself. An entry longer than the left column takes a line of its own
 * and its text starts on the next line, at the column, so the two never run together.
 */
export function twoColumns(
  rows: ReadonlyArray<readonly [string, string]>,
  width: number,
  options: {
    indent?: number;
    maxLeft?: number;
    leftStyle?: string;
    gap?: number /** A left column at least this wide (tables that line up with each other). */;
    minLeft?: number;
  } = {},
): string[] {
  const indent = " ".repeat(options.indent ?? 2);
  const gap = options.gap ?? 2;
  const style = options.leftStyle ?? "";
  const cap = Math.max(8, Math.min(options.maxLeft ?? 30, Math.floor((width - indent.length) * 0.45)));
  const left = Math.min(cap, Math.max(options.minLeft ?? 0, ...rows.map(([k]) => textWidth(k))));
  const col = indent.length + left + gap;
  const tag = (s: string) => (style ? `${style}${esc(s)}{/}` : esc(s));
  const out: string[] = [];
  for (const [key, does] of rows) {
    const kw = textWidth(key);
    if (kw > left) {
      // The key alone (wrapped if even the whole width is too narrow), then its text below.
      out.push(...wrapRuns([{ text: key, style }], width, { first: indent, rest: indent, firstWidth: indent.length, restWidth: indent.length }));
      out.push(...wrapRuns([{ text: does, style: "" }], width, { first: " ".repeat(col), rest: " ".repeat(col), firstWidth: col, restWidth: col }));
      continue;
    }
    const first = `${indent}${tag(key)}${" ".repeat(left - kw + gap)}`;
    out.push(...wrapRuns([{ text: does, style: "" }], width, { first, rest: " ".repeat(col), firstWidth: col, restWidth: col }));
  }
  return out;
}

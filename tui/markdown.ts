import { fg } from "./theme.js";
import { Lexer, type Token, type Tokens } from "marked";
import { highlightCode, looksLikeDiff } from "./highlight.js";
import { esc, type Run, textWidth, truncate, wrapRuns } from "./text.js";

/**
 * Markdown (assistant text) to blessed-tagged lines of at most `width` columns. Parsing is
 * marked's lexer; this only maps its tokens to styles. The input must already be clean of
 * terminal escapes (shared/terminal-text.ts); every piece of text is tag-escaped here.
 */
export function renderMarkdown(source: string, width: number): string[] {
  let tokens: Token[];
  try {
    tokens = Lexer.lex(source, { gfm: true });
  } catch {
    return wrapRuns([{ text: source, style: "" }], width);
  }
  const out: string[] = [];
  blocks(tokens, width, out, { first: "", rest: "", firstWidth: 0, restWidth: 0 });
  while (out.length && out[out.length - 1] === "") out.pop();
  return out.length ? out : [""];
}

interface Prefix {
  first: string;
  rest: string;
  firstWidth: number;
  restWidth: number;
}

const same = (p: Prefix): Prefix => ({ first: p.rest, rest: p.rest, firstWidth: p.restWidth, restWidth: p.restWidth });

function blocks(tokens: Token[], width: number, out: string[], prefix: Prefix): void {
  let p = prefix;
  for (const token of tokens) {
    const before = out.length;
    block(token, width, out, p);
    if (out.length > before) p = same(prefix);
  }
}

function block(token: Token, width: number, out: string[], p: Prefix): void {
  switch (token.type) {
    case "space":
      return;
    case "heading": {
      const t = token as Tokens.Heading;
      const style = t.depth === 1 ? `{bold}{underline}${fg("heading")}` : t.depth === 2 ? `{bold}${fg("heading")}` : "{bold}";
      if (out.length && out[out.length - 1] !== "") out.push(p.rest);
      out.push(...wrapRuns(inline(t.tokens ?? [], style), width, p));
      out.push(p.rest);
      return;
    }
    case "paragraph": {
      const t = token as Tokens.Paragraph;
      out.push(...wrapRuns(inline(t.tokens ?? [], ""), width, p));
      out.push(p.rest);
      return;
    }
    case "text": {
      const t = token as Tokens.Text;
      out.push(...wrapRuns(t.tokens ? inline(t.tokens, "") : [{ text: t.text, style: "" }], width, p));
      return;
    }
    case "code": {
      const t = token as Tokens.Code;
      const gutter = `${fg("muted")}│{/} `;
      if (t.lang) out.push(`${p.first}${fg("muted")}┌ ${esc(t.lang)}{/}`);
      const inner: Prefix = { first: p.rest + gutter, rest: `${p.rest}${fg("muted")}┆{/} `, firstWidth: p.restWidth + 2, restWidth: p.restWidth + 2 };
      // Highlighted in its language (a diff by its marks); one colour when the language is unknown.
      const lang = t.lang || (looksLikeDiff(t.text) ? "diff" : "");
      const lines = highlightCode(t.text, lang) ?? t.text.split("\n").map((line) => [{ text: line, style: fg("code") }]);
      for (const line of lines)
        out.push(...wrapRuns(line.length ? line.map((r) => ({ text: r.text.replace(/\t/g, "  "), style: r.style })) : [{ text: "", style: "" }], width, inner));
      out.push(p.rest);
      return;
    }
    case "blockquote": {
      const t = token as Tokens.Blockquote;
      const bar = `${fg("muted")}▌{/} `;
      const before = out.length;
      blocks(t.tokens, width, out, { first: p.first + bar, rest: p.rest + bar, firstWidth: p.firstWidth + 2, restWidth: p.restWidth + 2 });
      if (out.length > before && out[out.length - 1] === p.rest + bar) out[out.length - 1] = p.rest;
      return;
    }
    case "list": {
      const t = token as Tokens.List;
      let n = typeof t.start === "number" ? t.start : 1;
      t.items.forEach((item, i) => {
        const mark = t.ordered ? `${n++}.` : "•";
        const box = item.task ? (item.checked ? "[x] " : "[ ] ") : "";
        const bullet = `${mark} ${box}`;
        const w = textWidth(bullet);
        const first = i === 0 ? p.first : p.rest;
        const before = out.length;
        blocks(item.tokens, width, out, {
          first: `${first}${fg("accent")}${esc(bullet)}{/}`,
          rest: p.rest + " ".repeat(w),
          firstWidth: (i === 0 ? p.firstWidth : p.restWidth) + w,
          restWidth: p.restWidth + w,
        });
        // Tight lists: no blank line between items.
        for (let j = out.length - 1; j >= before && out[j]!.trim() === ""; j--) if (!t.loose || i < t.items.length - 1) out.splice(j, 1);
      });
      out.push(p.rest);
      return;
    }
    case "hr":
      out.push(`${p.first}${fg("muted")}${"─".repeat(Math.max(1, width - p.firstWidth))}{/}`);
      return;
    case "table": {
      const t = token as Tokens.Table;
      const cell = (c: Tokens.TableCell) => plain(c.tokens);
      const rows = [t.header.map(cell), ...t.rows.map((r) => r.map(cell))];
      const cols = t.header.length;
      const widths = Array.from({ length: cols }, (_, c) => Math.max(...rows.map((r) => textWidth(r[c] ?? ""))));
      // Too wide for the pane: the widest columns give way first, their cells cut with "…".
      fitColumns(widths, width - p.restWidth - 3 * (cols - 1));
      rows.forEach((r, ri) => {
        const cells = r.map((v, c) => {
          const cut = truncate(v.replace(/\s+/g, " "), widths[c]!);
          const pad = " ".repeat(Math.max(0, widths[c]! - textWidth(cut)));
          return ri === 0 ? `{bold}${esc(cut)}{/bold}${pad}` : esc(cut) + pad;
        });
        // The last cell's padding is not drawn: a line never ends in spaces that could wrap.
        out.push((p.rest + cells.join(` ${fg("muted")}│{/} `)).replace(/ +$/, ""));
        if (ri === 0) out.push(`${p.rest}${fg("muted")}${widths.map((w) => "─".repeat(w)).join("─┼─")}{/}`);
      });
      out.push(p.rest);
      return;
    }
    case "html":
      out.push(...wrapRuns([{ text: (token as Tokens.HTML).text.trimEnd(), style: `${fg("muted")}` }], width, p));
      return;
    default: {
      const raw = (token as { raw?: string }).raw ?? "";
      if (raw.trim()) out.push(...wrapRuns([{ text: raw.trimEnd(), style: "" }], width, p));
    }
  }
}

/** Shrink column widths (in place) until they add up to at most `room`: the widest first, none below 3. */
function fitColumns(widths: number[], room: number): void {
  let total = widths.reduce((a, b) => a + b, 0);
  while (total > room) {
    let widest = 0;
    for (let c = 1; c < widths.length; c++) if (widths[c]! > widths[widest]!) widest = c;
    if (widths[widest]! <= 3) break;
    widths[widest]!--;
    total--;
  }
}

/** Inline tokens to styled runs; `base` is the style of the surrounding block. */
function inline(tokens: Token[], base: string): Run[] {
  const runs: Run[] = [];
  for (const t of tokens) {
    switch (t.type) {
      case "strong":
        runs.push(...inline((t as Tokens.Strong).tokens, `${base}{bold}`));
        break;
      case "em":
        runs.push(...inline((t as Tokens.Em).tokens, `${base}{underline}`));
        break;
      case "del":
        runs.push(...inline((t as Tokens.Del).tokens, `${base}${fg("muted")}`));
        break;
      case "codespan":
        runs.push({ text: decode((t as Tokens.Codespan).text), style: `${base}${fg("code")}` });
        break;
      case "link": {
        const l = t as Tokens.Link;
        runs.push(...inline(l.tokens, `${base}${fg("link")}{underline}`));
        const label = plain(l.tokens);
        if (label !== l.href) runs.push({ text: ` (${l.href})`, style: `${base}${fg("muted")}` });
        break;
      }
      case "image": {
        const i = t as Tokens.Image;
        runs.push({ text: `[image: ${i.text || i.href}]`, style: `${base}${fg("muted")}` });
        break;
      }
      case "br":
        runs.push({ text: "\n", style: "" });
        break;
      case "text": {
        const x = t as Tokens.Text;
        if (x.tokens?.length) runs.push(...inline(x.tokens, base));
        else runs.push({ text: decode(x.text), style: base });
        break;
      }
      case "escape":
        runs.push({ text: decode((t as Tokens.Escape).text), style: base });
        break;
      default:
        runs.push({ text: decode((t as { raw?: string }).raw ?? ""), style: base });
    }
  }
  return runs;
}

function plain(tokens: Token[]): string {
  return inline(tokens, "")
    .map((r) => r.text)
    .join("");
}

/** marked leaves HTML entities in text tokens. */
function decode(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e]!);
}

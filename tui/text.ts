import blessed from "blessed";

/**
 * Styled text for blessed: a run of text with the tags that open and close its style. Rendering
 * wraps runs into lines of tagged strings; the text of a run is escaped, so model or tool text
 * can never inject a blessed tag.
 */
export interface Run {
  text: string;
  /** e.g. `{bold}${fg("accent")}` (tui/theme.ts); empty for plain text. */
  style: string;
}

const unicode = (blessed as unknown as { unicode: { strWidth(s: string): number } }).unicode;

/** Columns a string takes on the terminal (wide CJK and emoji count 2). */
export function textWidth(s: string): number {
  // ASCII fast path: most text is.
  return /^[\x20-\x7e]*$/.test(s) ? s.length : unicode.strWidth(s);
}

/** Escape blessed's tag braces in text. */
export function esc(text: string): string {
  return text.replace(/[{}]/g, (c) => (c === "{" ? "{open}" : "{close}"));
}

/** One run rendered as a tagged string. */
export function tagged(run: Run): string {
  return run.style ? `${run.style}${esc(run.text)}{/}` : esc(run.text);
}

export function styled(style: string, text: string): string {
  return tagged({ text, style });
}

/** Cut a plain string to `width` columns, with an ellipsis when cut. */
export function truncate(s: string, width: number): string {
  if (width <= 0) return "";
  if (textWidth(s) <= width) return s;
  let out = "";
  let w = 0;
  for (const ch of s) {
    const cw = textWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return `${out}…`;
}

/** Pad a plain string with spaces to `width` columns (cut when longer). */
export function pad(s: string, width: number): string {
  const t = truncate(s, width);
  return t + " ".repeat(Math.max(0, width - textWidth(t)));
}

/**
 * Wrap runs to `width` columns. `first` and `rest` are tagged prefixes (already escaped) of
 * `firstWidth`/`restWidth` columns put before the first and the following lines (list bullets,
 * quote bars, code gutters). Newlines in run text break lines; long words are split.
 */
export function wrapRuns(runs: Run[], width: number, prefix: { first: string; rest: string; firstWidth: number; restWidth: number } = NO_PREFIX): string[] {
  const lines: string[] = [];
  let line = prefix.first;
  let col = 0;
  let avail = Math.max(1, width - prefix.firstWidth);
  let pendStyle = "";
  let pend = "";
  const flush = () => {
    if (pend) line += pendStyle ? `${pendStyle}${esc(pend)}{/}` : esc(pend);
    pend = "";
  };
  const newline = () => {
    flush();
    lines.push(line);
    line = prefix.rest;
    col = 0;
    avail = Math.max(1, width - prefix.restWidth);
  };
  const emit = (style: string, text: string) => {
    if (style !== pendStyle) flush();
    pendStyle = style;
    pend += text;
    col += textWidth(text);
  };
  for (const run of runs) {
    const parts = run.text.split("\n");
    for (let pi = 0; pi < parts.length; pi++) {
      if (pi > 0) newline();
      // Words with their following spaces, so lines break at spaces.
      for (let word of parts[pi]!.match(/\S+\s*|\s+/g) ?? []) {
        // A word that fits on a line of its own moves to the next line; a longer one is split here.
        const ww = textWidth(word.trimEnd());
        if (col > 0 && col + ww > avail && ww <= Math.max(1, width - prefix.restWidth)) {
          newline();
          word = word.trimStart();
          if (!word) continue;
        }
        // A word longer than the line is split by columns.
        while (textWidth(word.trimEnd()) > avail - col) {
          let cut = "";
          let w = 0;
          for (const ch of word) {
            const cw = textWidth(ch);
            if (w + cw > avail - col) break;
            cut += ch;
            w += cw;
          }
          if (!cut) {
            if (col === 0) break;
            newline();
            continue;
          }
          emit(run.style, cut);
          word = word.slice(cut.length);
          newline();
        }
        if (word) emit(run.style, word);
      }
    }
  }
  flush();
  lines.push(line);
  return lines;
}

const NO_PREFIX = { first: "", rest: "", firstWidth: 0, restWidth: 0 };

/** Plain multi-line text (already sanitized) wrapped, with one style. */
export function wrapText(text: string, width: number, style = ""): string[] {
  return wrapRuns([{ text, style }], width);
}

/** Compact numbers for the status bar: 1234 → 1.2k. */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function ago(ts: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ts) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

import { esc, textWidth, truncate } from "./text.js";

/** One part of the status bar: its forms from the fullest to the shortest, and its rank. */
export interface StatusPart {
  /** Tagged forms, fullest first; `plain` holds the same forms without tags (for widths). */
  forms: string[];
  plain: string[];
  /** Higher is more important: kept longest, shortened last. */
  rank: number;
}

const SEP = " │ ";
/** Parts of this rank or more (a message, the daemon's state) give way only after all others. */
export const ESSENTIAL = 90;

/**
 * Fit the status bar's parts into `width` columns without cutting one in the middle: the least
 * important part is shortened first (each of its shorter forms in turn), then the next one; when
 * the shortest forms still do not fit, parts are left out, least important first. Essential parts
 * (rank ESSENTIAL and up) are shortened and left out only after every other part. The parts keep
 * their order on the bar.
 */
export function fitStatus(parts: StatusPart[], width: number): string {
  const level = parts.map(() => 0);
  const shown = parts.map(() => true);
  const total = () => {
    let w = 1;
    let n = 0;
    parts.forEach((p, i) => {
      if (!shown[i]) return;
      w += textWidth(p.plain[level[i]!]!) + (n++ ? SEP.length : 0);
    });
    return w;
  };
  const byRank = [...parts.keys()].sort((a, b) => parts[a]!.rank - parts[b]!.rank);
  const shorten = (i: number) => {
    while (total() > width && level[i]! < parts[i]!.forms.length - 1) level[i]!++;
  };
  const drop = (i: number) => {
    if (total() > width && shown.filter(Boolean).length > 1) shown[i] = false;
  };
  // The ordinary parts shrink, then go, least important first; only then the essential ones
  // (a message, the daemon's state) shrink, and go as the last resort.
  const ordinary = byRank.filter((i) => parts[i]!.rank < ESSENTIAL);
  const essential = byRank.filter((i) => parts[i]!.rank >= ESSENTIAL);
  for (const i of ordinary) shorten(i);
  for (const i of ordinary) drop(i);
  for (const i of essential) shorten(i);
  for (const i of essential) drop(i);
  return ` ${parts
    .map((p, i) => (shown[i] ? p.forms[level[i]!]! : null))
    .filter((f): f is string => f !== null)
    .join(SEP)}`;
}

/** A part whose forms are plain text (escaped here) in one style (`fg("error")` …; "" for none). */
export function part(rank: number, style: string, ...forms: string[]): StatusPart {
  return { rank, plain: forms, forms: forms.map((f) => (style ? `${style}${esc(f)}{/}` : esc(f))) };
}

/** A message put on the bar: it may be cut (with an ellipsis) down to `min` columns. */
export function messagePart(rank: number, style: string, text: string, escapeTags: (s: string) => string, min = 12): StatusPart {
  const forms: string[] = [text];
  for (let w = textWidth(text) - 8; w >= min; w -= 8) forms.push(truncate(text, w));
  return { rank, plain: forms, forms: forms.map((f) => `${style}${escapeTags(f)}{/}`) };
}

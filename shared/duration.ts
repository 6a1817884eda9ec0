/**
 * The one parser of durations people type: `90` (seconds), `90s`, `30m`, `2h`, `1d`, `1h30m`.
 * Seconds, or null when the text is not a positive duration (callers word their own error).
 */
export function parseDurationSeconds(text: string): number | null {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) > 0 ? Number(t) : null;
  const re = /(\d+(?:\.\d+)?)\s*(d|h|m|s)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    total += Number(m[1]) * { d: 86400, h: 3600, m: 60, s: 1 }[m[2] as "d" | "h" | "m" | "s"];
    end = re.lastIndex;
  }
  return end === t.length && total > 0 ? total : null;
}

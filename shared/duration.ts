/**
 * The one parser of durations people type: `90` (seconds), `90s`, `30m`, `2h`, `1d`, `1h30m`
 * (units s, m, h, d, in any case; parts may repeat and be separated by spaces: `1h 30m`). Used by
 * `--max-runtime`, a plan file's `max_runtime` and cron schedules (`every 30m`, a one-shot `45m`).
 */
export interface DurationOptions {
  /** A number without a unit is seconds (default true; a cron schedule says false: `30` is not one). */
  bareSeconds?: boolean;
  /** Fractions such as `1.5h` (default true). */
  fractions?: boolean;
  /** Zero is a duration (default false: null; a caller that words its own "too short" says true). */
  zero?: boolean;
}

/** Milliseconds per unit, largest first. */
export const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 } as const;

/** Milliseconds, or null when the text is not a duration (callers word their own error). */
export function parseDurationMs(text: string, options: DurationOptions = {}): number | null {
  const t = text.trim().toLowerCase();
  const number = options.fractions === false ? "\\d+" : "\\d+(?:\\.\\d+)?";
  let total = 0;
  if (new RegExp(`^${number}$`).test(t)) {
    if (options.bareSeconds === false) return null;
    total = Number(t) * 1000;
  } else {
    const re = new RegExp(`(${number})\\s*([dhms])\\s*`, "gy");
    let end = 0;
    let parts = 0;
    for (let m = re.exec(t); m; m = re.exec(t)) {
      total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
      end = re.lastIndex;
      parts++;
    }
    if (parts === 0 || end !== t.length) return null;
  }
  total = Math.round(total);
  if (!Number.isSafeInteger(total)) return null;
  return total > 0 || (options.zero === true && total === 0) ? total : null;
}

/** Seconds, or null when the text is not a positive duration (callers word their own error). */
export function parseDurationSeconds(text: string, options: DurationOptions = {}): number | null {
  const ms = parseDurationMs(text, options);
  return ms === null ? null : ms / 1000;
}

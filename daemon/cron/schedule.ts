import { createRequire } from "node:module";
import type { Cron } from "croner";
import { parseDurationMs, UNIT_MS } from "../../shared/duration.js";
import { AgentError } from "../../shared/errors.js";
import type { CronSchedule } from "../../shared/protocol/cron.js";

/**
 * Cron schedules: parsing the forms a job accepts, the next fire time, and what to do with fire
 * times that passed while the daemon was down. Five-field expressions are croner's; time zones
 * are the platform's Intl, never computed by hand.
 */

const MINUTE = 60_000;
const HOUR = 3_600_000;
/** The catch-up window of a missed fire time: half the period, clamped to 2 min .. 2 h. */
export const CATCH_UP_MIN_MS = 2 * MINUTE;
export const CATCH_UP_MAX_MS = 2 * HOUR;

export const VALID_FORMS =
  '"every 30m" (units s, m, h, d; combined as "every 1h30m"), a five-field cron expression such as "0 9 * * 1-5", ' +
  "an ISO time such as 2026-12-01T09:00 (one shot; without Z or an offset it is in the configured time zone), " +
  'or a duration such as "45m" (one shot, that long from now)';

/** The system's time zone (the default of `cron.timezone`). */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** `1h30m` → ms, or null when it is not a duration: the one parser (shared/duration.ts), units required, whole numbers. */
export function parseDuration(text: string): number | null {
  return parseDurationMs(text, { bareSeconds: false, fractions: false, zero: true });
}

/** A cron expression with no fire time within this many years is refused as never firing. */
export const NEVER_FIRES_HORIZON_YEARS = 10;
const NEVER_FIRES_HORIZON_MS = NEVER_FIRES_HORIZON_YEARS * 366 * 86_400_000;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

function refuse(text: string, why?: string): AgentError {
  const shown = JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
  return new AgentError("cron.invalid_schedule", `${shown} ${why ?? "is not a schedule"}; valid forms: ${VALID_FORMS}`, { schedule: text.slice(0, 200) });
}

const crons = new Map<string, Cron>();
let CronClass: typeof Cron | undefined;
/** croner, loaded on the first cron expression rather than at every daemon start (~10 ms of its CPU); its CommonJS build, synchronously, as the callers are. */
const cronClass = (): typeof Cron => (CronClass ??= (createRequire(import.meta.url)("croner") as typeof import("croner")).Cron);
function cronOf(expr: string, timeZone: string): Cron {
  const key = `${timeZone} ${expr}`;
  let c = crons.get(key);
  if (!c) {
    c = new (cronClass())(expr, { timezone: timeZone, mode: "5-part" });
    if (crons.size > 500) crons.clear();
    crons.set(key, c);
  }
  return c;
}

/**
 * Parse a schedule as a job gives it. `now` anchors bare durations and refuses one-shots in the
 * past; `timeZone` is where naive times and cron expressions are read.
 */
export function parseSchedule(input: string, now: number, timeZone: string): CronSchedule {
  const text = input.trim().replace(/\s+/g, " ");
  const every = /^every (.+)$/i.exec(text);
  if (every) {
    const ms = parseDuration(every[1]!.replace(/ /g, ""));
    if (ms === null) throw refuse(input, `has no interval after "every"`);
    if (ms < 1000) throw refuse(input, "is too short (at least 1s)");
    return { kind: "every", ms };
  }
  const fields = text.split(" ");
  if (fields.length === 5 && fields.every((f) => /^[0-9*/,\-A-Za-z?#]+$/.test(f)) && !ISO.test(text)) {
    let next: Date | null;
    try {
      next = cronOf(text, timeZone).nextRun(new Date(now));
    } catch (error) {
      throw refuse(input, `is not a valid cron expression (${(error as Error).message.replace(/^CronPattern: /, "")})`);
    }
    // An expression that names no real day (31 February) parses but never fires: refused, so a
    // job that can never run is not kept enabled.
    if (!next || next.getTime() > now + NEVER_FIRES_HORIZON_MS)
      throw refuse(input, `never fires: it has no fire time in the next ${NEVER_FIRES_HORIZON_YEARS} years (is the day of the month real for that month?)`);
    return { kind: "cron", expr: text };
  }
  const iso = ISO.exec(text);
  if (iso) {
    const at = isoToEpoch(iso, timeZone);
    if (at === null) throw refuse(input, "is not a real date and time");
    if (at <= now) throw refuse(input, `is in the past (it is ${new Date(at).toISOString()})`);
    return { kind: "once", at };
  }
  const ms = parseDuration(text.replace(/ /g, ""));
  if (ms !== null) {
    if (ms < 1000) throw refuse(input, "is too short (at least 1s)");
    return { kind: "once", at: now + ms };
  }
  throw refuse(input);
}

function isoToEpoch(m: RegExpExecArray, timeZone: string): number | null {
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4] ?? "0", m[5] ?? "0", m[6] ?? "0"].map(Number) as number[];
  const ms = m[7] ? Math.round(Number(m[7]) * 1000) : 0;
  const wall = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!, ms);
  const d = new Date(wall);
  // Date.UTC rolls 2026-02-30 over to March: such a date is refused, not moved.
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month! - 1 || d.getUTCDate() !== day || d.getUTCHours() !== hour || d.getUTCMinutes() !== minute)
    return null;
  const zone = m[8];
  if (zone) {
    if (zone.toUpperCase() === "Z") return wall;
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const offset = (Number(z[2]) * 60 + Number(z[3])) * MINUTE * (z[1] === "-" ? -1 : 1);
    return wall - offset;
  }
  return zonedWallToEpoch(wall, timeZone);
}

/** The UTC offset (ms) of `timeZone` at `epoch`, from Intl. */
export function zoneOffset(timeZone: string, epoch: number): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(epoch));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return asUtc - (epoch - (((epoch % 1000) + 1000) % 1000));
}

/** A wall-clock time in `timeZone` (given as if it were UTC) as an epoch; DST gaps move forward. */
function zonedWallToEpoch(wall: number, timeZone: string): number {
  const first = wall - zoneOffset(timeZone, wall);
  const second = wall - zoneOffset(timeZone, first);
  return second === first ? first : Math.min(first, second);
}

/** The first fire time strictly after `after`, or null when there is none. */
export function nextFire(s: CronSchedule, after: number, timeZone: string, previous?: number): number | null {
  switch (s.kind) {
    case "every": {
      // Anchored to the previous fire time, so an interval does not drift with run times.
      const base = previous ?? after;
      if (base > after) return base;
      return base + (Math.floor((after - base) / s.ms) + 1) * s.ms;
    }
    case "cron":
      return cronOf(s.expr, timeZone).nextRun(new Date(after))?.getTime() ?? null;
    case "once":
      return s.at > after ? s.at : null;
  }
}

export interface DuePlan {
  /** The latest fire time at or before now. */
  latest: number;
  /** Fire times before `latest` that passed too (the daemon was down, or a run overran). */
  missedBefore: number;
  /** The next fire time after now (null: none, a one-shot). */
  next: number | null;
  /** How late `latest` may be and still run. */
  windowMs: number;
}

/** Bound on fire times walked for one plan (a one-minute expression after months down). */
const MAX_WALK = 100_000;

/**
 * What to do with a job whose fire time `due` is at or before `now`: the latest fire time that
 * passed runs if it is within the catch-up window, all earlier ones are skipped, and the next
 * fire time is the first after now, so a long downtime never turns into a burst of runs.
 */
export function planDue(s: CronSchedule, due: number, now: number, timeZone: string): DuePlan {
  const clamp = (period: number) => Math.min(CATCH_UP_MAX_MS, Math.max(CATCH_UP_MIN_MS, period / 2));
  switch (s.kind) {
    case "every": {
      const k = Math.floor((now - due) / s.ms);
      const latest = due + k * s.ms;
      return { latest, missedBefore: k, next: latest + s.ms, windowMs: clamp(s.ms) };
    }
    case "cron": {
      let latest = due;
      let missedBefore = 0;
      let next = nextFire(s, latest, timeZone);
      while (next !== null && next <= now && missedBefore < MAX_WALK) {
        latest = next;
        missedBefore++;
        next = nextFire(s, latest, timeZone);
      }
      if (next !== null && next <= now) next = nextFire(s, now, timeZone);
      return { latest, missedBefore, next, windowMs: clamp((next ?? latest + 2 * CATCH_UP_MAX_MS) - latest) };
    }
    case "once":
      // No period: a one-shot missed while the daemon was down still runs within the largest window.
      return { latest: due, missedBefore: 0, next: null, windowMs: CATCH_UP_MAX_MS };
  }
}

/** A schedule for listings: `every 30m` stays as typed; a one-shot shows its moment. */
export function describeSchedule(s: CronSchedule): string {
  return s.kind === "every" ? `every ${formatMs(s.ms)}` : s.kind === "cron" ? s.expr : `once at ${new Date(s.at).toISOString()}`;
}

export function formatMs(ms: number): string {
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ["d", UNIT_MS.d],
    ["h", UNIT_MS.h],
    ["m", UNIT_MS.m],
    ["s", UNIT_MS.s],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join("") || `${ms}ms`;
}

/**
 * The c.log lines of actors: a bounded ring per actor for this run (for `agent actors logs`),
 * every line also sent to the actor logger; after a restart, the lines come from its log file
 * (and the rotated ones, as far as needed).
 */
import { existsSync, readFileSync } from "node:fs";
import type { Logger } from "../../log/logger.js";

export interface ActorLogLine {
  ts: number;
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

export class ActorLogs {
  private readonly rings = new Map<string, ActorLogLine[]>();

  constructor(
    private readonly logger: Logger,
    /** Lines kept per actor. */
    private readonly capacity: number | undefined,
    /** The JSON-lines file `logger` writes to. */
    private readonly file: string | undefined,
  ) {}

  /** Keep a line in the actor's ring and send it to the actor logger. */
  add(actorId: string, actorName: string | undefined, level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>): void {
    let ring = this.rings.get(actorId);
    if (!ring) this.rings.set(actorId, (ring = []));
    ring.push({ ts: Date.now(), level, msg: String(msg), ...(fields ? { fields } : {}) });
    if (ring.length > (this.capacity ?? 500)) ring.splice(0, ring.length - (this.capacity ?? 500));
    this.logger[level](String(msg), { actor_id: actorId, actor_name: actorName, ...fields });
  }

  /** The last `limit` lines of an actor (newest last): this run's ring, else the log file's lines. */
  lines(actorId: string, limit: number): ActorLogLine[] {
    let ring = this.rings.get(actorId) ?? [];
    if (ring.length === 0 && this.file) ring = readLogFiles(this.file, actorId, limit);
    return ring.slice(Math.max(0, ring.length - limit));
  }
}

/**
 * An actor's lines from the log file, newest last, reaching into the rotated files (`.1`, `.2`,
 * … written by the one log writer) until `limit` lines are found.
 */
function readLogFiles(file: string, actorId: string, limit: number): ActorLogLine[] {
  const out: ActorLogLine[] = [];
  for (let i = 0; out.length < limit; i++) {
    const path = i === 0 ? file : `${file}.${i}`;
    if (i > 0 && !existsSync(path)) break;
    out.unshift(...readLogFile(path, actorId));
  }
  return out;
}

function readLogFile(file: string, actorId: string): ActorLogLine[] {
  const out: ActorLogLine[] = [];
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return out;
  }
  const needle = `"actor_id":${JSON.stringify(actorId)}`;
  for (const line of text.split("\n")) {
    if (!line.includes(needle)) continue;
    try {
      const { ts, level, msg, component: _c, actor_id: _a, actor_name: _n, ...fields } = JSON.parse(line) as Record<string, unknown>;
      out.push({ ts: Date.parse(String(ts)), level: String(level), msg: String(msg), ...(Object.keys(fields).length ? { fields } : {}) });
    } catch {}
  }
  return out;
}

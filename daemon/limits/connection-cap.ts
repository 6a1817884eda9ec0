/**
 * The connections of one listener (the gateway's TCP port, the daemon's Unix socket), kept in
 * the order they were last active, so that a cap can drop the oldest idle one first and an
 * idle sweep finds the connections idle too long at the front (docs/limits.md).
 *
 * A connection is `busy` while it has a request in flight (it is then never dropped), and has
 * a `rank`: when the cap is reached, the oldest idle connection of the lowest rank goes (a
 * socket connection that never initialized before a CLI's, a CLI's before a TUI's with its
 * subscriptions). A connection can also be `pinned` (a WebSocket: it is not idle in the HTTP
 * sense), so the idle sweep leaves it; the cap may still drop it when nothing else is idle.
 */
import { type Clock, systemClock } from "../../shared/clock.js";
import type { Logger } from "../log/logger.js";

interface Entry {
  busy: number;
  rank: number;
  pinned: boolean;
  lastActive: number;
}

export type DropReason = "cap" | "idle";

/** A connection this recent is dropped by the cap only when no older one is idle (ms). */
const GRACE_MS = 1000;
/** The cap's drops are logged at most once in this long (ms), with the counts so far. */
const WARN_EVERY_MS = 10_000;

export class ConnectionCap<K> {
  /** Least recently active first (a Map keeps insertion order; activity re-inserts). */
  private readonly entries = new Map<K, Entry>();
  /** Connections dropped so far, by reason (for status and tests). */
  readonly dropped = { cap: 0, idle: 0, refused: 0 };

  constructor(
    /** At most this many connections at once. */
    public max: number,
    /** Close a connection the cap or the idle sweep chose. */
    private readonly drop: (key: K, reason: DropReason) => void,
    private readonly clock: Pick<Clock, "now"> = systemClock,
  ) {}

  private lastWarning = Number.NEGATIVE_INFINITY;

  get size(): number {
    return this.entries.size;
  }

  /** Log that the cap dropped a connection of `listener` ("gateway", "socket"): the first drop in 10 s. */
  warnReached(log: Pick<Logger, "warn">, listener: string): void {
    const now = this.clock.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    log.warn(`${listener} connection cap reached: the oldest idle connections are closed`, {
      max_connections: this.max,
      dropped: this.dropped.cap,
      refused: this.dropped.refused,
    });
  }

  /**
   * A new connection: admitted when under the cap, or after dropping the oldest idle connection
   * of the lowest rank. False when every connection is busy: the caller refuses the new one.
   */
  admit(key: K, rank = 0): boolean {
    while (this.entries.size >= this.max) {
      const victim = this.victim();
      if (victim === undefined) {
        this.dropped.refused++;
        return false;
      }
      this.entries.delete(victim);
      this.dropped.cap++;
      this.drop(victim, "cap");
    }
    this.entries.set(key, { busy: 0, rank, pinned: false, lastActive: this.clock.now() });
    return true;
  }

  /**
   * The idle connection to drop: the lowest score, the oldest among equals (the map is oldest
   * first). A connection active in the last `GRACE_MS` (one that just connected and has not
   * sent its first call yet: a CLI during a flood) goes only after every older idle one of
   * ranks 0 and 1, and after young ones that already initialized (they had their turn);
   * connections of rank 2 and above (a TUI with its subscriptions) go only after all of those,
   * and pinned ones (WebSockets) last.
   */
  private victim(): K | undefined {
    const young = this.clock.now() - GRACE_MS;
    let best: K | undefined;
    let bestScore = Number.POSITIVE_INFINITY;
    for (const [key, e] of this.entries) {
      if (e.busy > 0) continue;
      // Old idle (never initialized, then initialized) < young initialized < young not yet initialized < subscribed.
      let score = e.rank >= 2 ? 4 + e.rank : e.lastActive > young ? 3 - e.rank : e.rank;
      if (e.pinned) score += 100;
      if (score < bestScore) {
        best = key;
        bestScore = score;
        if (score === 0) break;
      }
    }
    return best;
  }

  private touch(key: K, e: Entry): void {
    e.lastActive = this.clock.now();
    this.entries.delete(key);
    this.entries.set(key, e);
  }

  /** A request started on the connection. */
  begin(key: K): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.busy++;
    this.touch(key, e);
  }

  /** A request on the connection ended (answered, or its client went). */
  end(key: K): void {
    const e = this.entries.get(key);
    if (!e) return;
    if (e.busy > 0) e.busy--;
    this.touch(key, e);
  }

  /** The connection's rank changed (a socket client initialized or subscribed). */
  setRank(key: K, rank: number): void {
    const e = this.entries.get(key);
    if (e) e.rank = rank;
  }

  /** The connection became a WebSocket: the idle sweep leaves it. */
  pin(key: K): void {
    const e = this.entries.get(key);
    if (e) e.pinned = true;
  }

  remove(key: K): void {
    this.entries.delete(key);
  }

  /** Drop every connection idle (not busy, not pinned) for longer than `idleMs`; returns how many. */
  sweep(idleMs: number): number {
    const cutoff = this.clock.now() - idleMs;
    const victims: K[] = [];
    for (const [key, e] of this.entries) {
      // Ordered by activity: past the first recent one, every later one is recent too.
      if (e.lastActive > cutoff) break;
      if (e.busy === 0 && !e.pinned) victims.push(key);
    }
    for (const key of victims) {
      this.entries.delete(key);
      this.dropped.idle++;
      this.drop(key, "idle");
    }
    return victims.length;
  }
}

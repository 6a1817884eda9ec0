/**
 * The dashboard's one live stream (`GET /api/events`, Server-Sent Events): the daemon's events
 * as they happen, from the sources it already has:
 *
 *   kanban   every board event (KanbanApi.onEvent), in full
 *   topic    any other broadcast of the daemon (chat turns, actors), as its topic only, at most
 *            one per topic every 250 ms (a view re-reads what it shows)
 *   log      each new line of $AGENT_HOME/logs/<component>.log (the one log follower,
 *            shared/log-follow.ts), parsed; the files are followed only while a client listens
 *
 * A client that does not keep up (more than MAX_BUFFERED bytes waiting) is dropped; its
 * EventSource reconnects and re-reads. Every event has an id (a counter of this daemon run) and
 * the first event, `hello`, carries the daemon's start time, so a page sees a restart.
 */
import { readdirSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { LogFollower } from "../../shared/log-follow.js";
import type { HeaderMap } from "../http/response.js";

/** Bytes waiting for a slow client before it is dropped. */
const MAX_BUFFERED = 1024 * 1024;
const HEARTBEAT_MS = 15_000;
/** How often the log files are looked at (a stat each), and the directory for new ones. */
const LOG_POLL_MS = 100;
const LOG_RESCAN_MS = 1_000;
/** At most this many lines of one file per poll: a burst is cut, not relayed whole. */
const MAX_LINES_PER_POLL = 200;
const TOPIC_COALESCE_MS = 250;

export interface EventSources {
  /** Board events; returns the unsubscribe. */
  onKanban(listener: (event: unknown) => void): () => void;
  /** Every broadcast of the daemon; returns the unsubscribe. */
  onBroadcast(listener: (topic: string, data: unknown) => void): () => void;
  /** The logs directory. */
  logsDir: string;
  startedAt: number;
}

export class EventStream {
  private readonly clients = new Set<ServerResponse>();
  private seq = 0;
  private stopSources: Array<() => void> = [];
  private followers = new Map<string, LogFollower>();
  private timers: NodeJS.Timeout[] = [];
  private readonly pendingTopics = new Map<string, NodeJS.Timeout>();

  constructor(private readonly sources: EventSources) {}

  get clientCount(): number {
    return this.clients.size;
  }

  /** Serve one client until it goes away. */
  attach(req: IncomingMessage, res: ServerResponse, cors: HeaderMap | null): void {
    res.writeHead(200, {
      ...(cors ?? {}),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
      connection: "keep-alive",
    });
    res.socket?.setNoDelay(true);
    // The gateway closes connections idle for a few seconds; a stream is not idle.
    req.socket.setTimeout(0);
    res.write(`retry: 1000\nid: ${this.seq}\nevent: hello\ndata: ${JSON.stringify({ started_at: this.sources.startedAt })}\n\n`);
    this.clients.add(res);
    if (this.clients.size === 1) this.startSources();
    const drop = () => {
      if (!this.clients.delete(res)) return;
      if (this.clients.size === 0) this.stopAll();
    };
    res.on("close", drop);
    req.on("close", drop);
  }

  /** Send one event to every client. */
  emit(type: string, data: unknown): void {
    if (this.clients.size === 0) return;
    const text = `id: ${++this.seq}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const res of this.clients) {
      if (res.writableLength > MAX_BUFFERED) {
        res.destroy();
        continue;
      }
      res.write(text);
    }
  }

  /** End every stream (the daemon is stopping). */
  close(): void {
    for (const res of this.clients) res.end();
    this.clients.clear();
    this.stopAll();
  }

  private startSources(): void {
    this.stopSources.push(this.sources.onKanban((event) => this.emit("kanban", event)));
    this.stopSources.push(
      this.sources.onBroadcast((topic) => {
        if (topic.startsWith("kanban.event.")) return;
        // Coalesced per topic: a streaming turn broadcasts many deltas a second.
        if (this.pendingTopics.has(topic)) return;
        this.pendingTopics.set(
          topic,
          setTimeout(() => {
            this.pendingTopics.delete(topic);
            this.emit("topic", { topic });
          }, TOPIC_COALESCE_MS),
        );
      }),
    );
    this.scanLogs(true);
    const heartbeat = setInterval(() => {
      for (const res of this.clients) res.write(": ping\n\n");
    }, HEARTBEAT_MS);
    const poll = setInterval(() => {
      for (const f of this.followers.values()) f.poll();
    }, LOG_POLL_MS);
    const rescan = setInterval(() => this.scanLogs(false), LOG_RESCAN_MS);
    for (const t of [heartbeat, poll, rescan]) t.unref();
    this.timers.push(heartbeat, poll, rescan);
  }

  /**
   * Follow every `<component>.log`: those there when the first client came from their end (the
   * page reads the tail itself), those that appear later from their start (their first line is news).
   */
  private scanLogs(initial = false): void {
    let names: string[];
    try {
      names = readdirSync(this.sources.logsDir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.endsWith(".log") || this.followers.has(name)) continue;
      const component = name.slice(0, -4);
      const follower = new LogFollower(join(this.sources.logsDir, name), {
        from: initial ? "end" : "start",
        onLines: (lines) => {
          const cut = lines.length > MAX_LINES_PER_POLL ? lines.slice(-MAX_LINES_PER_POLL) : lines;
          if (cut.length < lines.length) this.emit("log", { component, skipped: lines.length - cut.length });
          for (const line of cut) if (line.trim()) this.emit("log", { component, record: parseLine(line) });
        },
      });
      follower.poll();
      this.followers.set(name, follower);
    }
  }

  private stopAll(): void {
    for (const stop of this.stopSources) stop();
    this.stopSources = [];
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    for (const t of this.pendingTopics.values()) clearTimeout(t);
    this.pendingTopics.clear();
    for (const f of this.followers.values()) f.stop();
    this.followers.clear();
  }
}

/** A log line as a record (`{msg, raw: true}` for one that is not JSON). */
export function parseLine(line: string): Record<string, unknown> {
  try {
    const value = JSON.parse(line) as unknown;
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {}
  return { msg: line, raw: true };
}

import { randomBytes } from "node:crypto";

/**
 * Spans recorded by the runtime (one per action, request, lifecycle hook and workflow step),
 * kept in a bounded ring per actor and rendered as OTLP/JSON on demand. Recording is cheap:
 * ids come from a counter under a random per-process prefix, times are epoch ms. The runtime
 * saves an actor's ring (at most its capacity) when the actor goes to sleep, which includes a
 * graceful daemon stop, and every second while it is awake and recording (trace-store.ts), and
 * reads it back on first use; the hot path only records.
 */
export const MAX_TRACE_LIMIT = 10_000;
export const DEFAULT_TRACE_RING = 2_000;

export interface SpanRecord {
  /** Random per daemon run; with `seq` it makes the span's ids unique across restarts. */
  prefix: string;
  seq: number;
  name: string;
  kind: string;
  startMs: number;
  endMs: number;
  ok: boolean;
  error: string | undefined;
  attrs: Record<string, string | number | boolean> | undefined;
}

const PREFIX = randomBytes(8).toString("hex");
let counter = 0;

export class TraceRing {
  private readonly spans: SpanRecord[] = [];
  private head = 0;
  /** Spans recorded since the ring was made (a save is needed only when it moved). */
  version = 0;

  constructor(private readonly capacity = DEFAULT_TRACE_RING) {}

  /** Cheap on the hot path: one object of a fixed shape; ids are derived when rendered. */
  record(kind: string, name: string, startMs: number, endMs: number, error?: unknown, attrs?: Record<string, string | number | boolean>): void {
    counter = counter >= Number.MAX_SAFE_INTEGER ? 1 : counter + 1;
    this.version++;
    const span: SpanRecord = {
      prefix: PREFIX,
      seq: counter,
      kind,
      name,
      startMs,
      endMs,
      ok: error === undefined,
      error: error === undefined ? undefined : error instanceof Error ? error.message : String(error),
      attrs,
    };
    if (this.spans.length < this.capacity) this.spans.push(span);
    else {
      this.spans[this.head] = span;
      this.head = (this.head + 1) % this.capacity;
    }
  }

  /** Spans in time order. */
  all(): SpanRecord[] {
    return this.spans.length < this.capacity ? this.spans.slice() : [...this.spans.slice(this.head), ...this.spans.slice(0, this.head)];
  }

  get size(): number {
    return this.spans.length;
  }

  /** A ring holding `spans` (oldest first; the newest `capacity` are kept). */
  static from(spans: readonly SpanRecord[], capacity = DEFAULT_TRACE_RING): TraceRing {
    const ring = new TraceRing(capacity);
    for (const s of spans.slice(Math.max(0, spans.length - capacity))) ring.spans.push(s);
    return ring;
  }
}

/** Spans read back from `TraceRing.all()` serialized as JSON; anything malformed is dropped. */
export function parseSpans(text: string): SpanRecord[] {
  const raw = JSON.parse(text) as unknown;
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (s): s is SpanRecord =>
      !!s &&
      typeof s === "object" &&
      typeof s.prefix === "string" &&
      typeof s.seq === "number" &&
      typeof s.name === "string" &&
      typeof s.kind === "string" &&
      typeof s.startMs === "number" &&
      typeof s.endMs === "number",
  );
}

type AttrValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

function attrValue(v: string | number | boolean): AttrValue {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}

const ns = (ms: number) => `${Math.trunc(ms)}000000`;

/** OTLP/JSON (`resourceSpans → scopeSpans → spans`) for spans between startMs and endMs. */
export function queryTraces(
  ring: TraceRing | undefined,
  actor: { id: string; name: string; key: string },
  query: { startMs: number; endMs: number; limit: number },
): { otlp: unknown; clamped: boolean } {
  const clamped = query.limit > MAX_TRACE_LIMIT;
  const limit = Math.max(0, Math.min(query.limit, MAX_TRACE_LIMIT));
  const selected = (ring?.all() ?? []).filter((s) => s.startMs >= query.startMs && s.startMs <= query.endMs);
  const spans = selected.slice(Math.max(0, selected.length - limit)).map((s) => ({
    traceId: s.prefix + s.seq.toString(16).padStart(16, "0"),
    spanId: s.prefix.slice(0, 8) + (s.seq % 0x100000000).toString(16).padStart(8, "0"),
    name: s.name,
    kind: 1,
    startTimeUnixNano: ns(s.startMs),
    endTimeUnixNano: ns(s.endMs),
    attributes: [
      { key: "actor.id", value: { stringValue: actor.id } },
      { key: "actor.name", value: { stringValue: actor.name } },
      { key: "actor.key", value: { stringValue: actor.key } },
      { key: "span.kind", value: { stringValue: s.kind } },
      ...Object.entries(s.attrs ?? {}).map(([key, v]) => ({ key, value: attrValue(v) })),
    ],
    status: s.ok ? { code: 1 } : { code: 2, message: s.error ?? "error" },
  }));
  return {
    otlp: {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "agent" } }] },
          scopeSpans: [{ scope: { name: "agent.actors", version: "1" }, spans }],
        },
      ],
    },
    clamped,
  };
}

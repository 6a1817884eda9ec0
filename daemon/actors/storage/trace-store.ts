/**
 * The span rings of actors (traces.ts) and their files (`<id>.traces`): a ring is loaded from
 * its file on first use in a run and saved when the actor sleeps, so traces survive sleep and a
 * graceful restart. A ring is saved only when it recorded spans since it was loaded, through
 * the batched writer (a sleep storm or a graceful stop writes them together, off the main
 * thread), and a sleeping actor's ring leaves memory (`release`), so rings are kept for awake
 * actors only; an actor that never recorded a span has no file. While an actor is awake its
 * ring is also saved every TRACE_FLUSH_MS when it recorded spans, so a kill -9 loses at most
 * the spans of that last interval (plus a save still being written): README, "Actor traces".
 */
import type { Logger } from "../../log/logger.js";
import type { FileJournal } from "./file-journal.js";
import { errorSummary } from "../errors.js";
import { parseSpans, TraceRing } from "../observe/traces.js";

/** How often the rings of awake actors that recorded spans are saved. */
export const TRACE_FLUSH_MS = 1000;
/** Rings saved per write of a periodic flush (the event loop runs between them). */
const FLUSH_BATCH = 256;

export class TraceStore {
  private readonly rings = new Map<string, TraceRing>();
  /** The ring's version when it was loaded or last saved. */
  private readonly savedVersion = new Map<TraceRing, number>();
  /** The save in progress per actor: saves of one file are chained, never concurrent. */
  private readonly saving = new Map<string, Promise<void>>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing = false;
  private closed = false;

  constructor(
    /** The journal of small files the rings are saved to (the runtime's, once started). */
    private readonly files: () => FileJournal,
    /** Spans kept per actor. */
    private readonly capacity: number | undefined,
    private readonly logger: Logger,
  ) {}

  /** The actor's span ring; on first use in this run, the spans saved at its last sleep. */
  ring(actorId: string): TraceRing {
    let ring = this.rings.get(actorId);
    if (!ring) {
      let saved: ReturnType<typeof parseSpans> = [];
      try {
        const text = this.files().read(`${actorId}.traces`);
        if (text !== null) saved = parseSpans(text);
      } catch {}
      this.rings.set(actorId, (ring = TraceRing.from(saved, this.capacity)));
      this.savedVersion.set(ring, ring.version);
      this.startFlushing();
    }
    return ring;
  }

  /** A new actor: its ring starts empty, without looking for a file. */
  fresh(actorId: string): void {
    if (this.rings.has(actorId)) return;
    const ring = new TraceRing(this.capacity);
    this.rings.set(actorId, ring);
    this.savedVersion.set(ring, ring.version);
    this.startFlushing();
  }

  /** Save the ring (bounded by its capacity) if it moved; a failure is logged, not thrown. */
  save(actorId: string): Promise<void> {
    const next = (this.saving.get(actorId) ?? Promise.resolve()).then(() => this.saveNow(actorId));
    this.saving.set(actorId, next);
    void next.then(() => {
      if (this.saving.get(actorId) === next) this.saving.delete(actorId);
    });
    return next;
  }

  private async saveNow(actorId: string): Promise<void> {
    const ring = this.rings.get(actorId);
    if (!ring || ring.size === 0 || this.savedVersion.get(ring) === ring.version) return;
    try {
      const version = ring.version;
      // Nothing is written for a ring that left meanwhile (its actor was destroyed).
      await this.files().write(`${actorId}.traces`, () => (this.rings.get(actorId) === ring ? JSON.stringify(ring.all()) : null));
      this.savedVersion.set(ring, version);
    } catch (error) {
      this.logger.warn("could not save an actor's traces", { actor_id: actorId, error: errorSummary(error) });
    }
  }

  private startFlushing(): void {
    if (this.flushTimer || this.closed) return;
    this.flushTimer = setInterval(() => void this.flush(), TRACE_FLUSH_MS);
    this.flushTimer.unref();
  }

  /** Save every ring that recorded spans since its last save, a batch per write. */
  async flush(): Promise<void> {
    if (this.flushing || this.closed) return;
    this.flushing = true;
    try {
      const moved: string[] = [];
      for (const [id, ring] of this.rings) if (ring.size && this.savedVersion.get(ring) !== ring.version) moved.push(id);
      for (let i = 0; i < moved.length && !this.closed; i += FLUSH_BATCH) {
        await Promise.all(moved.slice(i, i + FLUSH_BATCH).map((id) => this.save(id)));
      }
    } finally {
      this.flushing = false;
    }
  }

  /** The runtime stops: no more periodic saves (the stop saves each ring as its actor sleeps). */
  close(): void {
    this.closed = true;
    clearInterval(this.flushTimer);
  }

  /** The actor sleeps (its ring was saved): read it back from its file when needed. */
  release(actorId: string): void {
    const ring = this.rings.get(actorId);
    if (ring && this.savedVersion.get(ring) === ring.version) {
      this.rings.delete(actorId);
      this.savedVersion.delete(ring);
    }
  }

  /** The actor was destroyed (its file is removed with its other files). */
  forget(actorId: string): void {
    const ring = this.rings.get(actorId);
    if (ring) this.savedVersion.delete(ring);
    this.rings.delete(actorId);
  }
}

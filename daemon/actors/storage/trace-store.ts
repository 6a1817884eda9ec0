/**
 * The span rings of actors (traces.ts) and their files (`<id>.traces`): a ring is loaded from
 * its file on first use in a run and saved when the actor sleeps, so traces survive sleep and a
 * graceful restart. A ring is saved only when it recorded spans since it was loaded, through
 * the batched writer (a sleep storm or a graceful stop writes them together, off the main
 * thread), and a sleeping actor's ring leaves memory (`release`), so rings are kept for awake
 * actors only; an actor that never recorded a span has no file.
 */
import type { Logger } from "../../log/logger.js";
import type { FileJournal } from "./file-journal.js";
import { errorSummary } from "../errors.js";
import { parseSpans, TraceRing } from "../observe/traces.js";

export class TraceStore {
  private readonly rings = new Map<string, TraceRing>();
  /** The ring's version when it was loaded or last saved. */
  private readonly savedVersion = new Map<TraceRing, number>();

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
    }
    return ring;
  }

  /** Save the ring (bounded by its capacity); a failure is logged, not thrown. */
  async save(actorId: string): Promise<void> {
    const ring = this.rings.get(actorId);
    if (!ring || ring.size === 0 || this.savedVersion.get(ring) === ring.version) return;
    try {
      const version = ring.version;
      await this.files().write(`${actorId}.traces`, () => JSON.stringify(ring.all()));
      this.savedVersion.set(ring, version);
    } catch (error) {
      this.logger.warn("could not save an actor's traces", { actor_id: actorId, error: errorSummary(error) });
    }
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

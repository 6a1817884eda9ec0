/**
 * The span rings of actors (traces.ts) and their files (`<id>.traces`): a ring is loaded from
 * its file on first use in a run and saved when the actor sleeps, so traces survive sleep and a
 * graceful restart.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "../../log/logger.js";
import { writeFileAtomic } from "../../store/atomic-file.js";
import { actorTraceFile } from "./actor-storage.js";
import { errorSummary } from "../errors.js";
import { parseSpans, TraceRing } from "../observe/traces.js";

export class TraceStore {
  private readonly rings = new Map<string, TraceRing>();

  constructor(
    private readonly dataDir: string,
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
        saved = parseSpans(readFileSync(actorTraceFile(this.dataDir, actorId), "utf8"));
      } catch {}
      this.rings.set(actorId, (ring = TraceRing.from(saved, this.capacity)));
    }
    return ring;
  }

  /** Save the ring (bounded by its capacity); a failure is logged, not thrown. */
  async save(actorId: string): Promise<void> {
    const ring = this.rings.get(actorId);
    if (!ring || ring.size === 0) return;
    const file = actorTraceFile(this.dataDir, actorId);
    try {
      await writeFileAtomic(file, JSON.stringify(ring.all()));
    } catch (error) {
      this.logger.warn("could not save an actor's traces", { actor_id: actorId, error: errorSummary(error) });
    }
  }

  /** The actor was destroyed (its file is removed with its other files). */
  forget(actorId: string): void {
    this.rings.delete(actorId);
  }
}

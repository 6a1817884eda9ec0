/**
 * Webhook event ids already handled, on disk, so a redelivered event (LINE retries a webhook it
 * thinks failed, with the same `webhookEventId`) is dropped, also after a daemon restart. Ids are
 * kept for a week and at most MAX_IDS of them (the oldest go first): LINE redelivers within hours.
 */
import type { Clock } from "../../../shared/clock.js";
import { DocStore } from "../../store/doc-store.js";

const KEEP_MS = 7 * 24 * 3600_000;
const MAX_IDS = 20_000;

interface EventIdsData {
  /** id → when it was seen (clock ms), oldest first (insertion order). */
  seen: Record<string, number>;
}

export class LineEventIds {
  private constructor(
    private readonly doc: DocStore<EventIdsData>,
    private readonly clock: Clock,
  ) {}

  static async open(file: string, clock: Clock): Promise<LineEventIds> {
    const doc = await DocStore.open<EventIdsData>({ file, kind: "line-event-ids", version: 1, initial: () => ({ seen: {} }) });
    return new LineEventIds(doc, clock);
  }

  has(id: string): boolean {
    return Object.hasOwn(this.doc.data.seen, id);
  }

  /** Records the ids (pruning old ones); resolves once on disk. */
  async add(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const now = this.clock.now();
    const seen = this.doc.data.seen;
    for (const id of ids) seen[id] = now;
    const keys = Object.keys(seen);
    let drop = Math.max(0, keys.length - MAX_IDS);
    for (const key of keys) {
      if (drop > 0) {
        delete seen[key];
        drop--;
        continue;
      }
      if (now - seen[key] > KEEP_MS) delete seen[key];
      else break;
    }
    await this.doc.write();
  }
}

/**
 * The slow-response postback cache (spec: "Slow-response postback cache"). When a turn takes
 * longer than LINE_SLOW_RESPONSE_THRESHOLD, the user gets a message with a get-answer button
 * (a postback action), and the answer waits here:
 *
 *   PENDING --answer finishes--> READY --user taps the button--> DELIVERED
 *   PENDING --run cancelled----> ERROR (the answer is the configurable interrupted text)
 *
 * The cache is a file (DocStore), so it survives a daemon restart. A PENDING entry found at open
 * is an orphan (its run died with the daemon): it goes to ERROR with the interrupted text, so a
 * tap still gets an answer. Entries are dropped a day after they were made.
 */
import { randomBytes } from "node:crypto";
import type { Clock } from "../../../shared/clock.js";
import { DocStore } from "../../store/doc-store.js";

export type PostbackState = "PENDING" | "READY" | "DELIVERED" | "ERROR";

export interface PostbackEntry {
  id: string;
  chatId: string;
  state: PostbackState;
  /** The answer (READY/DELIVERED), or the interrupted text (ERROR). */
  text: string | null;
  createdAt: number;
  updatedAt: number;
}

interface CacheData {
  entries: Record<string, PostbackEntry>;
}

const KEEP_MS = 24 * 3600_000;
/** The postback data a get-answer button carries: `agent-answer:<id>`. */
export const POSTBACK_PREFIX = "agent-answer:";

export class LinePostbackCache {
  private constructor(
    private readonly doc: DocStore<CacheData>,
    private readonly clock: Clock,
    private readonly interruptedText: string,
  ) {}

  /** Opens the cache; orphans (PENDING at open) resolve to ERROR with the interrupted text. */
  static async open(file: string, options: { clock: Clock; interruptedText: string }): Promise<LinePostbackCache> {
    const doc = await DocStore.open<CacheData>({ file, kind: "line-postback-cache", version: 1, initial: () => ({ entries: {} }) });
    const cache = new LinePostbackCache(doc, options.clock, options.interruptedText);
    const now = options.clock.now();
    let changed = false;
    for (const [id, entry] of Object.entries(doc.data.entries)) {
      if (now - entry.createdAt > KEEP_MS) {
        delete doc.data.entries[id];
        changed = true;
      } else if (entry.state === "PENDING") {
        Object.assign(entry, { state: "ERROR", text: options.interruptedText, updatedAt: now });
        changed = true;
      }
    }
    if (changed) await doc.write();
    return cache;
  }

  get(id: string): PostbackEntry | undefined {
    const entry = this.doc.data.entries[id];
    return entry ? { ...entry } : undefined;
  }

  list(): PostbackEntry[] {
    return Object.values(this.doc.data.entries).map((e) => ({ ...e }));
  }

  /** A new PENDING entry (on disk when this resolves). */
  async create(chatId: string): Promise<PostbackEntry> {
    const now = this.clock.now();
    const id = randomBytes(12).toString("base64url");
    const entry: PostbackEntry = { id, chatId, state: "PENDING", text: null, createdAt: now, updatedAt: now };
    for (const [old, e] of Object.entries(this.doc.data.entries)) if (now - e.createdAt > KEEP_MS) delete this.doc.data.entries[old];
    this.doc.data.entries[id] = entry;
    await this.doc.write();
    return { ...entry };
  }

  /** PENDING → READY with the answer. False when the entry is not PENDING. */
  async ready(id: string, text: string): Promise<boolean> {
    return this.move(id, "PENDING", "READY", text);
  }

  /** PENDING → ERROR (the run was cancelled or failed): the answer becomes the interrupted text. */
  async cancelled(id: string): Promise<boolean> {
    return this.move(id, "PENDING", "ERROR", this.interruptedText);
  }

  /**
   * The user tapped the button: what to answer with. READY → DELIVERED with the answer; ERROR
   * gives the interrupted text; PENDING gives null (still working; the caller says so);
   * DELIVERED gives the answer again (a second tap), unknown ids undefined.
   */
  async tap(id: string): Promise<{ state: PostbackState; text: string | null } | undefined> {
    const entry = this.doc.data.entries[id];
    if (!entry) return undefined;
    if (entry.state === "READY") {
      await this.move(id, "READY", "DELIVERED", entry.text);
      return { state: "DELIVERED", text: entry.text };
    }
    return { state: entry.state, text: entry.state === "PENDING" ? null : entry.text };
  }

  private async move(id: string, from: PostbackState, to: PostbackState, text: string | null): Promise<boolean> {
    const entry = this.doc.data.entries[id];
    if (!entry || entry.state !== from) return false;
    Object.assign(entry, { state: to, text, updatedAt: this.clock.now() });
    await this.doc.write();
    return true;
  }
}

import type { StoredMessage } from "../../shared/protocol/chat.js";
import type { ActorKv } from "../actors/api.js";
import { type ChunkTail, ChunkedKv } from "../store/chunked-kv.js";

/**
 * A session transcript in the daemon's chunked KV (store/chunked-kv.ts): messages
 * `[k*64, (k+1)*64)` live under the key `msg/<k, 8 digits>`. An append rewrites only the last chunk, so it costs the same at
 * message 10 and 10,000. Positions are explicit: writing a message at a position that already
 * holds one is a no-op, which makes a replayed workflow's appends idempotent.
 *
 * A deferred append (`{defer: true}`) is for messages a workflow step already recorded (a
 * model reply, a tool result): it joins the transcript in memory (reads see it) and reaches
 * the chunk with the next write (a non-deferred append, a full chunk, or `flush()` at the end
 * of the turn). The persisted count only moves with the chunks, so after a crash it never
 * claims a message the chunks lack; the workflow's replay writes the lost ones again.
 */
export const CHUNK_SIZE = 64;

const OPTIONS = { prefix: "msg/", chunkSize: CHUNK_SIZE };

export interface TranscriptCache {
  /** Every message, once loaded (null until the first full read). */
  all: StoredMessage[] | null;
  /** The chunk being filled: its index and contents. */
  tail: ChunkTail<StoredMessage> | null;
  /** Serializes writes to the chunks. */
  chain: Promise<unknown>;
  /** The end of the transcript in memory, when deferred messages are not in the chunks yet. */
  end: number | null;
}

export function newTranscriptCache(): TranscriptCache {
  return { all: null, tail: null, chain: Promise.resolve(), end: null };
}

export class Transcript {
  private readonly chunks: ChunkedKv<StoredMessage>;

  constructor(
    kv: ActorKv,
    private readonly cache: TranscriptCache,
    /** Reads and writes the persisted message count (the session state's `messageCount`). */
    private readonly count: { get(): number; set(n: number): Promise<void> },
  ) {
    // The tail lives in the cache (the actor's vars), so it outlives this object.
    this.chunks = new ChunkedKv<StoredMessage>(kv, OPTIONS, cache);
  }

  /** Messages in the transcript, deferred ones included. */
  get length(): number {
    return this.cache.end ?? this.count.get();
  }

  /** Messages `[from, to)`. */
  async read(from = 0, to = this.length): Promise<StoredMessage[]> {
    const end = this.length;
    to = Math.min(to, end);
    if (from >= to) return [];
    if (this.cache.all && this.cache.all.length >= to) return this.cache.all.slice(from, to);
    // Deferred messages are in the tail in memory only.
    const out = await this.chunks.read(from, to, { useTail: this.cache.end !== null });
    if (from === 0 && to === end) this.cache.all = out.slice();
    return out;
  }

  /** Append at the end. */
  append(messages: StoredMessage[]): Promise<number> {
    return this.serialize(() => this.writeAt(this.length, messages, false));
  }

  /** Write messages starting at `position`; those before the current end are already there. */
  appendAt(position: number, messages: StoredMessage[], options: { defer?: boolean } = {}): Promise<number> {
    return this.serialize(() => this.writeAt(position, messages, options.defer === true));
  }

  /** Write deferred messages to their chunk and move the persisted count. */
  flush(): Promise<number> {
    return this.serialize(async () => {
      await this.flushTail();
      return this.length;
    });
  }

  private async flushTail(): Promise<void> {
    const end = this.cache.end;
    if (end === null) return;
    if (end > this.count.get()) await this.chunks.writeTail();
    this.cache.end = null;
    await this.count.set(end);
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.cache.chain.then(fn, fn);
    this.cache.chain = run.catch(() => undefined);
    return run;
  }

  private async writeAt(position: number, messages: StoredMessage[], defer: boolean): Promise<number> {
    let n = this.length;
    const fresh = messages.slice(Math.max(0, n - position));
    if (position > n) throw new Error(`transcript gap: writing at ${position} but it holds ${n} messages`);
    for (const m of fresh) {
      const full = await this.chunks.stage(n, m);
      n++;
      if (this.cache.all && this.cache.all.length === n - 1) this.cache.all.push(m);
      else this.cache.all = null;
      this.cache.end = n;
      // A full chunk is written at once; otherwise when the batch ends, unless deferred.
      const last = m === fresh[fresh.length - 1];
      if (full || (last && !defer)) await this.flushTail();
    }
    return n;
  }
}

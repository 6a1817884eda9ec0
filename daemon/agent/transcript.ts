import type { StoredMessage } from "../../shared/protocol/chat.js";
import type { ActorKv } from "../actors/types.js";

/**
 * A session transcript in chunked KV records: messages `[k*64, (k+1)*64)` live under the key
 * `msg/<k, 8 digits>`. An append rewrites only the last chunk, so it costs the same at
 * message 10 and 10,000. Positions are explicit: writing a message at a position that already
 * holds one is a no-op, which makes a replayed workflow's appends idempotent.
 */
export const CHUNK_SIZE = 64;

const chunkKey = (k: number) => `msg/${String(k).padStart(8, "0")}`;

export interface TranscriptCache {
  /** Every message, once loaded (null until the first full read). */
  all: StoredMessage[] | null;
  /** The chunk being filled: its index and contents. */
  tail: { index: number; messages: StoredMessage[] } | null;
  /** Serializes writes to the chunks. */
  chain: Promise<unknown>;
}

export function newTranscriptCache(): TranscriptCache {
  return { all: null, tail: null, chain: Promise.resolve() };
}

export class Transcript {
  constructor(
    private readonly kv: ActorKv,
    private readonly cache: TranscriptCache,
    /** Reads and writes the persisted message count (the session state's `messageCount`). */
    private readonly count: { get(): number; set(n: number): Promise<void> },
  ) {}

  get length(): number {
    return this.count.get();
  }

  /** Messages `[from, to)`. */
  async read(from = 0, to = this.count.get()): Promise<StoredMessage[]> {
    to = Math.min(to, this.count.get());
    if (from >= to) return [];
    if (this.cache.all && this.cache.all.length >= to) return this.cache.all.slice(from, to);
    const out: StoredMessage[] = [];
    for (let k = Math.floor(from / CHUNK_SIZE); k * CHUNK_SIZE < to; k++) {
      const chunk = (await this.kv.getJson<StoredMessage[]>(chunkKey(k))) ?? [];
      const start = k * CHUNK_SIZE;
      for (let i = 0; i < chunk.length; i++) if (start + i >= from && start + i < to) out.push(chunk[i]!);
    }
    if (from === 0 && to === this.count.get()) this.cache.all = out.slice();
    return out;
  }

  /** Append at the end. */
  append(messages: StoredMessage[]): Promise<number> {
    return this.serialize(() => this.writeAt(this.count.get(), messages));
  }

  /** Write messages starting at `position`; those before the current end are already there. */
  appendAt(position: number, messages: StoredMessage[]): Promise<number> {
    return this.serialize(() => this.writeAt(position, messages));
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.cache.chain.then(fn, fn);
    this.cache.chain = run.catch(() => undefined);
    return run;
  }

  private async writeAt(position: number, messages: StoredMessage[]): Promise<number> {
    let n = this.count.get();
    const fresh = messages.slice(Math.max(0, n - position));
    if (position > n) throw new Error(`transcript gap: writing at ${position} but it holds ${n} messages`);
    for (const m of fresh) {
      const k = Math.floor(n / CHUNK_SIZE);
      let tail = this.cache.tail;
      if (!tail || tail.index !== k) {
        tail = { index: k, messages: n % CHUNK_SIZE === 0 ? [] : ((await this.kv.getJson<StoredMessage[]>(chunkKey(k))) ?? []) };
        this.cache.tail = tail;
      }
      tail.messages.length = n % CHUNK_SIZE; // drop anything past the persisted count
      tail.messages.push(m);
      n++;
      // Flush when the chunk is full or the batch ends in it.
      const last = m === fresh[fresh.length - 1];
      if (last || n % CHUNK_SIZE === 0) await this.kv.putJson(chunkKey(k), tail.messages);
    }
    if (fresh.length) {
      if (this.cache.all && this.cache.all.length === n - fresh.length) this.cache.all.push(...fresh);
      else this.cache.all = null;
      await this.count.set(n);
    }
    return n;
  }
}

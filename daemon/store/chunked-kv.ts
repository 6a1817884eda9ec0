/**
 * The one chunked KV store: a list of records kept N to a record of an actor's KV, so a change
 * rewrites one chunk (N records), never the whole list, and costs the same at record 10 and
 * 10,000. Record `p` lives in chunk `k = floor(p / N)` under the key `<prefix><k, 8 digits>`
 * (zero-padded, so the keys list in order). Used by a session's transcript (`msg/`, 64 per
 * chunk), a kanban board's tasks (`chunk/`, 32 per chunk, committed through `tx`) and a cron
 * job's run index (`idx/<job>/`, 64 per chunk, with a head record).
 *
 * Two layers:
 * - `ChunkedKv`: chunk addressing, reads of a range or of everything, the chunk being filled
 *   kept in memory (the tail), and `writeChunks`, the transactional write of several chunks.
 * - `ChunkedList`: a list over it that knows its own bounds: append, update in place, read,
 *   and dropping the oldest records (its first position is kept in a head record).
 *
 * A write of one chunk is one put, atomic by itself (the actor KV replaces a bucket file by an
 * atomic rename). A write of several chunks first puts all of them as one record under the tx
 * key (one atomic put: the commit point), then each chunk, then deletes the tx record. A
 * `recover()` (at open) that finds a tx record (a crash between the two) writes its chunks again,
 * so the change lands whole or not at all. Writers are serialized by their owner (one actor, one
 * chain), so at most one tx record exists.
 */

/** The part of an actor's KV the store uses (`ActorKv` has it). */
export interface ChunkKv {
  getJson<T = unknown>(key: string): Promise<T | null>;
  putJson(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<Array<{ key: Uint8Array; value: Uint8Array }>>;
}

export interface ChunkedKvOptions {
  /** Chunk keys are `<prefix><k, 8 digits>`. */
  prefix: string;
  /** Records per chunk. */
  chunkSize: number;
  /** Where a write of several chunks is committed; default `<prefix>tx`. */
  txKey?: string;
}

/** The chunk being filled, in memory: its index and records. */
export interface ChunkTail<T> {
  index: number;
  records: T[];
}

/** Where the tail lives: by default in the store; an owner whose stores are short-lived (a session's transcript) passes one that outlives them. */
export interface ChunkTailCache<T> {
  tail: ChunkTail<T> | null;
}

interface TxRecord<T> {
  chunks: Array<[number, T[]]>;
}

const DIGITS = 8;

export class ChunkedKv<T> {
  readonly prefix: string;
  readonly chunkSize: number;
  readonly txKey: string;
  private readonly cache: ChunkTailCache<T>;
  /** A write of several chunks failed after its commit: the next write finishes it first. */
  private unfinished = false;

  constructor(
    private readonly kv: ChunkKv,
    options: ChunkedKvOptions,
    cache?: ChunkTailCache<T>,
  ) {
    if (!Number.isInteger(options.chunkSize) || options.chunkSize < 1) throw new RangeError(`chunk size must be a positive integer, not ${options.chunkSize}`);
    this.prefix = options.prefix;
    this.chunkSize = options.chunkSize;
    this.txKey = options.txKey ?? `${options.prefix}tx`;
    this.cache = cache ?? { tail: null };
  }

  /** The key of chunk `k`. */
  key(k: number): string {
    return `${this.prefix}${String(k).padStart(DIGITS, "0")}`;
  }

  /** The chunk holding position `p`. */
  chunkOf(position: number): number {
    return Math.floor(position / this.chunkSize);
  }

  /** The tail kept in memory (null until a record is staged). */
  get tail(): ChunkTail<T> | null {
    return this.cache.tail;
  }

  /** The records of chunk `k` as stored ([] when there is none). */
  async readChunk(k: number): Promise<T[]> {
    return (await this.kv.getJson<T[]>(this.key(k))) ?? [];
  }

  /**
   * Records `[from, to)`, reading only their chunks. `useTail`: take the tail chunk from memory
   * (records staged but not written yet are then included).
   */
  async read(from: number, to: number, options: { useTail?: boolean } = {}): Promise<T[]> {
    const out: T[] = [];
    if (from >= to) return out;
    for (let k = this.chunkOf(from); k * this.chunkSize < to; k++) {
      const tail = this.cache.tail;
      const chunk = options.useTail && tail && tail.index === k ? tail.records : await this.readChunk(k);
      const start = k * this.chunkSize;
      for (let i = Math.max(0, from - start); i < chunk.length && start + i < to; i++) out.push(chunk[i]!);
    }
    return out;
  }

  /** Every stored chunk, in order, with its index (one listing of the prefix). */
  async readChunks(): Promise<Array<[number, T[]]>> {
    const out: Array<[number, T[]]> = [];
    for (const entry of await this.kv.list(this.prefix)) {
      const rest = Buffer.from(entry.key).toString("utf8").slice(this.prefix.length);
      // Only chunk keys: a tx or head record may share the prefix.
      if (rest.length !== DIGITS || !/^\d+$/.test(rest)) continue;
      out.push([Number(rest), JSON.parse(Buffer.from(entry.value).toString("utf8")) as T[]]);
    }
    return out;
  }

  /** Every stored record, in order. */
  async readAll(): Promise<T[]> {
    return (await this.readChunks()).flatMap(([, records]) => records);
  }

  /**
   * Replace whole chunks: one is one put; several are committed through the tx record (see the
   * top of the file). `onCommit` runs once the change is sure to land (a failure after it is
   * finished by the next `recover()`); a failure before it changed nothing.
   */
  async writeChunks(chunks: Array<[number, T[]]>, options: { onCommit?: () => void } = {}): Promise<void> {
    if (chunks.length === 0) return;
    // Else a later recover() would put the old tx's chunks over this write's.
    if (this.unfinished) await this.recover();
    if (chunks.length === 1) {
      await this.kv.putJson(this.key(chunks[0]![0]), chunks[0]![1]);
      options.onCommit?.();
      return;
    }
    await this.kv.putJson(this.txKey, { chunks } satisfies TxRecord<T>);
    options.onCommit?.();
    try {
      await Promise.all(chunks.map(([k, records]) => this.kv.putJson(this.key(k), records)));
      await this.kv.delete(this.txKey);
    } catch (error) {
      this.unfinished = true;
      throw error;
    }
  }

  /** Finish a write of several chunks a crash interrupted; returns the number of chunks it wrote again. */
  async recover(): Promise<number> {
    const tx = await this.kv.getJson<TxRecord<T>>(this.txKey);
    if (!tx) {
      this.unfinished = false;
      return 0;
    }
    await Promise.all(tx.chunks.map(([k, records]) => this.kv.putJson(this.key(k), records)));
    await this.kv.delete(this.txKey);
    this.unfinished = false;
    this.cache.tail = null;
    return tx.chunks.length;
  }

  /**
   * Put `record` at `position` (the list's end) in the tail chunk in memory, loading that chunk
   * unless it is a new one, and dropping anything stored past `position` (left by a write the
   * owner's count never acknowledged). Returns whether the chunk is now full. Nothing is written.
   */
  async stage(position: number, record: T): Promise<boolean> {
    const k = this.chunkOf(position);
    const offset = position - k * this.chunkSize;
    let tail = this.cache.tail;
    if (!tail || tail.index !== k) {
      tail = { index: k, records: offset === 0 ? [] : await this.readChunk(k) };
      this.cache.tail = tail;
    }
    tail.records.length = Math.min(tail.records.length, offset);
    if (tail.records.length < offset) throw new RangeError(`chunked list gap: writing at ${position} but chunk ${k} holds ${tail.records.length} records`);
    tail.records.push(record);
    return tail.records.length === this.chunkSize;
  }

  /** Write the tail chunk as it is in memory. */
  async writeTail(): Promise<void> {
    const tail = this.cache.tail;
    if (tail) await this.kv.putJson(this.key(tail.index), tail.records);
  }

  /** Forget the tail (after a failed write, so the next one reads the chunk again). */
  dropTail(): void {
    this.cache.tail = null;
  }

  /** Delete chunks `[from, to)`. */
  async deleteChunks(from: number, to: number): Promise<void> {
    for (let k = from; k < to; k++) await this.kv.delete(this.key(k));
    if (this.cache.tail && this.cache.tail.index >= from && this.cache.tail.index < to) this.cache.tail = null;
  }

  /** Whether chunk `k` exists. */
  async has(k: number): Promise<boolean> {
    return (await this.kv.getJson(this.key(k))) !== null;
  }
}

export interface ChunkedListOptions extends ChunkedKvOptions {
  /** Where the list keeps its first position once records were dropped; default `<prefix>head`. */
  headKey?: string;
}

interface HeadRecord {
  start: number;
}

/**
 * A list over `ChunkedKv` that finds its own bounds: positions `[start, end)`, where `start`
 * moves up as the oldest records are dropped (kept in the head record) and `end` is found at
 * open from the chunks (a binary search over chunk keys: a few reads, whatever the length).
 * Calls are serialized, so an append and an update never interleave. Changes of several chunks
 * (an append across a chunk boundary, `updateMany`) are transactional.
 */
export class ChunkedList<T> {
  readonly chunks: ChunkedKv<T>;
  private readonly headKey: string;
  private startPos = 0;
  private endPos = 0;
  private opened = false;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly kv: ChunkKv,
    options: ChunkedListOptions,
  ) {
    this.chunks = new ChunkedKv<T>(kv, options);
    this.headKey = options.headKey ?? `${options.prefix}head`;
  }

  /** Finish an interrupted write and find the bounds. */
  open(): Promise<this> {
    return this.serialize(async () => {
      await this.openOnce();
      return this;
    });
  }

  /** The first position kept. */
  get start(): number {
    return this.startPos;
  }

  /** One past the last position. */
  get end(): number {
    return this.endPos;
  }

  /** Records kept. */
  get length(): number {
    return this.endPos - this.startPos;
  }

  /** Records `[from, to)` of the kept ones (absolute positions; default all). */
  read(from?: number, to?: number): Promise<T[]> {
    return this.serialize(async () => {
      await this.openOnce();
      return this.chunks.read(Math.max(from ?? this.startPos, this.startPos), Math.min(to ?? this.endPos, this.endPos));
    });
  }

  /** Every record kept, in order. */
  readAll(): Promise<T[]> {
    return this.read();
  }

  /** Append at the end; resolves with the new end once durable. */
  append(records: T[]): Promise<number> {
    return this.serialize(async () => {
      await this.openOnce();
      if (records.length === 0) return this.endPos;
      const touched = new Map<number, T[]>();
      let n = this.endPos;
      try {
        for (const r of records) {
          await this.chunks.stage(n++, r);
          const tail = this.chunks.tail!;
          touched.set(tail.index, tail.records.slice());
        }
        await this.chunks.writeChunks([...touched]);
      } catch (error) {
        this.failed();
        throw error;
      }
      this.endPos = n;
      return n;
    });
  }

  /** Replace the record at `position` (rewrites its chunk only). */
  update(position: number, record: T): Promise<void> {
    return this.updateMany([[position, record]]);
  }

  /** Replace several records at once: all land or none (one put per chunk, through the tx record when there are several). */
  updateMany(changes: Array<[number, T]>): Promise<void> {
    return this.serialize(async () => {
      await this.openOnce();
      const byChunk = new Map<number, Array<[number, T]>>();
      for (const [p, r] of changes) {
        if (!Number.isInteger(p) || p < this.startPos || p >= this.endPos)
          throw new RangeError(`no record at ${p} (the list holds [${this.startPos}, ${this.endPos}))`);
        const k = this.chunks.chunkOf(p);
        let list = byChunk.get(k);
        if (!list) byChunk.set(k, (list = []));
        list.push([p, r]);
      }
      const out: Array<[number, T[]]> = [];
      for (const [k, list] of byChunk) {
        const tail = this.chunks.tail;
        const records = (tail && tail.index === k ? tail.records : await this.chunks.readChunk(k)).slice();
        for (const [p, r] of list) records[p - k * this.chunks.chunkSize] = r;
        out.push([k, records]);
      }
      try {
        await this.chunks.writeChunks(out);
      } catch (error) {
        this.failed();
        throw error;
      }
      const tail = this.chunks.tail;
      if (tail) for (const [k, records] of out) if (k === tail.index) tail.records = records.slice();
    });
  }

  /**
   * Drop the records before `position` (the oldest); returns them. The head record is the
   * commit point; chunks wholly before it are deleted after (one a crash leaves is never read,
   * and goes with `remove`).
   */
  dropBefore(position: number): Promise<T[]> {
    return this.serialize(async () => {
      await this.openOnce();
      const to = Math.min(position, this.endPos);
      if (to <= this.startPos) return [];
      const dropped = await this.chunks.read(this.startPos, to);
      const firstChunk = this.chunks.chunkOf(this.startPos);
      await this.kv.putJson(this.headKey, { start: to } satisfies HeadRecord);
      this.startPos = to;
      await this.chunks.deleteChunks(firstChunk, this.chunks.chunkOf(to));
      return dropped;
    });
  }

  /** Delete the whole list (chunks, head and any tx record). */
  remove(): Promise<void> {
    return this.serialize(async () => {
      for (const [k] of await this.chunks.readChunks()) await this.kv.delete(this.chunks.key(k));
      await this.kv.delete(this.headKey);
      await this.kv.delete(this.chunks.txKey);
      this.chunks.dropTail();
      this.startPos = this.endPos = 0;
      this.opened = true;
    });
  }

  private async openOnce(): Promise<void> {
    if (this.opened) return;
    await this.chunks.recover();
    const head = await this.kv.getJson<HeadRecord>(this.headKey);
    this.startPos = head?.start ?? 0;
    this.endPos = await this.findEnd(this.chunks.chunkOf(this.startPos));
    this.opened = true;
  }

  /** The end, from the chunks: they are dense from the first kept one, so the last is found by doubling, then halving. */
  private async findEnd(first: number): Promise<number> {
    if (!(await this.chunks.has(first))) return this.startPos;
    let lo = first; // exists
    let step = 1;
    while (await this.chunks.has(lo + step)) {
      lo += step;
      step *= 2;
    }
    let hi = lo + step; // does not exist
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (await this.chunks.has(mid)) lo = mid;
      else hi = mid;
    }
    return lo * this.chunks.chunkSize + (await this.chunks.readChunk(lo)).length;
  }

  /**
   * After a failed write: read the bounds again at the next call, once `recover()` has finished
   * a write that failed after its commit (its records are the list's, not to be written over).
   */
  private failed(): void {
    this.chunks.dropTail();
    this.opened = false;
  }

  private serialize<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

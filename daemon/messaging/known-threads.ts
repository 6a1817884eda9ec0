import { readTextOrNull, writeFileAtomic } from "../store/atomic-file.js";

const MAX_THREADS = 5000;

/**
 * The threads an adapter has answered in (Discord, Matrix): a later message there needs no
 * mention. Kept in the adapter's data directory by the daemon's atomic write, so it holds across
 * restarts; the oldest go first past 5,000.
 */
export class KnownThreads {
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string,
    private readonly ids: Set<string>,
  ) {}

  static async open(file: string): Promise<KnownThreads> {
    let ids: string[] = [];
    try {
      const parsed = JSON.parse((await readTextOrNull(file)) ?? "[]") as unknown;
      if (Array.isArray(parsed)) ids = parsed.filter((x): x is string => typeof x === "string");
    } catch {}
    return new KnownThreads(file, new Set(ids));
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Remember `id` (durably, before resolving). */
  async add(id: string): Promise<void> {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    if (this.ids.size > MAX_THREADS) this.ids.delete(this.ids.values().next().value as string);
    const text = JSON.stringify([...this.ids]);
    // One writer at a time (the atomic write's fixed temp name): the writes queue up.
    const write = this.writing.then(() => writeFileAtomic(this.file, text, { mode: 0o600 }));
    this.writing = write.catch(() => undefined);
    await write;
  }
}

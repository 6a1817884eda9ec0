import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { AgentError } from "../../shared/errors.js";
import { keepBackup, writeFileAtomic } from "./atomic-file.js";
import { toStorageError } from "./storage-error.js";

/**
 * One JSON document on disk: one file per aggregate, written only by the daemon.
 *
 * Writes go through the daemon's one atomic write (atomic-file.ts: temp file + rename), one at a
 * time per file; writes asked for while one is on its way share the next one, which serializes
 * the data as it is then. So a `write()` that resolved is on disk with the data as it was at the
 * call (or newer), and a `kill -9` never leaves a half-written file. Every file is an envelope
 * `{kind, schemaVersion, data}`: older versions are migrated forward on open, newer ones refused.
 *
 * With `rollBack`, a failed write changes nothing: the data goes back to what is on disk (the
 * last write that succeeded, or what was read), and a write that shared data with the failed one
 * fails too, so a change that was reported as failed is never written later by another write.
 * Every failed write is a `storage.*` error naming the file (storage-error.ts).
 */
export interface DocOptions<T> {
  file: string;
  /** What the file holds, checked on open so a file is never read as another kind. */
  kind: string;
  /** The schema version this code writes. */
  version: number;
  /** `migrations[v]` turns data of version v into version v + 1. */
  migrations?: Record<number, (data: any) => any>;
  /** The data of a file that does not exist yet. Not written until the first write. */
  initial: () => T;
  /** Keep the previous version as `<file>.bak` on every write (boards, sessions, config). */
  backup?: boolean;
  /** Refuse to replace non-empty data with data this predicate calls empty. */
  isEmpty?: (data: T) => boolean;
  /**
   * On a failed write, put the data back to what is on disk (see above). Only for stores whose
   * users read `data` afresh each time (KV buckets, the session index), not for one whose users
   * keep its records and change them in place (the actor index).
   */
  rollBack?: boolean;
}

interface Envelope<T> {
  kind: string;
  schemaVersion: number;
  data: T;
}

export class DocStore<T> {
  private envelope: Envelope<T>;
  /** The write on its way to disk, and the one that will follow it (later calls share it). */
  private writing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private lastWasEmpty = true;
  private existed = false;
  /** The file's directory is known to exist (it held the file, or a write made it): mkdir once. */
  private dirReady = false;
  /** The envelope as last read or written (JSON), what a failed write goes back to; null: none yet. */
  private durable: string | null = null;
  /** Counts failed writes; a write that began before one and ends after it did not persist its change. */
  private failures = 0;
  private lastFailure: unknown = null;

  private constructor(private readonly options: DocOptions<T>) {
    this.envelope = { kind: options.kind, schemaVersion: options.version, data: options.initial() };
  }

  static async open<T>(options: DocOptions<T>): Promise<DocStore<T>> {
    const doc = new DocStore(options);
    await doc.load();
    return doc;
  }

  /**
   * A store whose contents the caller already knows (a file that does not exist yet, or whose
   * newest contents live elsewhere): no read, which saves a failed open per new actor.
   */
  static withoutRead<T>(options: DocOptions<T>): DocStore<T> {
    return new DocStore(options);
  }

  get file(): string {
    return this.options.file;
  }

  /** Whether the file was on disk when opened. */
  get existedOnOpen(): boolean {
    return this.existed;
  }

  get data(): T {
    return this.envelope.data;
  }

  set data(value: T) {
    this.envelope = { kind: this.options.kind, schemaVersion: this.options.version, data: value };
  }

  /** Persist the current data; resolves once it is on disk. A failure rolls the data back to the disk's. */
  async write(): Promise<void> {
    const { isEmpty, backup, file } = this.options;
    const empty = isEmpty ? isEmpty(this.data) : false;
    if (empty && !this.lastWasEmpty) {
      throw new AgentError("store.refused_empty_write", `refusing to replace the non-empty ${this.options.kind} in ${file} with empty data`);
    }
    const failures = this.failures;
    try {
      if (!this.dirReady) {
        await mkdir(dirname(file), { recursive: true });
        this.dirReady = true;
      }
      if (backup && this.existed) await keepBackup(file);
      await this.flush();
    } catch (error) {
      const mapped = toStorageError(error, file);
      if (this.options.rollBack && this.failures === failures) this.rollBack(mapped);
      throw mapped;
    }
    // A write that failed meanwhile took this change back before this write serialized the data.
    if (this.failures !== failures) throw this.lastFailure;
    this.existed = true;
    this.lastWasEmpty = empty;
  }

  private rollBack(error: unknown): void {
    this.failures++;
    this.lastFailure = error;
    const { kind, version } = this.options;
    this.envelope = this.durable === null ? { kind, schemaVersion: version, data: this.options.initial() } : (JSON.parse(this.durable) as Envelope<T>);
    this.lastWasEmpty = this.durable === null || (this.options.isEmpty ? this.options.isEmpty(this.data) : false);
  }

  private flush(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.writing) return this.startWrite();
    const next = this.writing
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.startWrite();
      });
    this.queued = next;
    return next;
  }

  private startWrite(): Promise<void> {
    const text = JSON.stringify(this.envelope);
    const p: Promise<void> = writeFileAtomic(this.options.file, text)
      .then(() => {
        if (this.options.rollBack) this.durable = text;
      })
      .finally(() => {
        if (this.writing === p) this.writing = null;
      });
    this.writing = p;
    return p;
  }

  /** Change the data and persist it; resolves once it is on disk. */
  async update(change: (data: T) => void): Promise<void> {
    change(this.data);
    await this.write();
  }

  /** Replace an intentionally emptied document (the empty-data guard does not apply). */
  async writeAllowingEmpty(): Promise<void> {
    this.lastWasEmpty = true;
    await this.write();
  }

  private async load(): Promise<void> {
    const { file, kind, version } = this.options;
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    this.existed = true;
    this.dirReady = true;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new AgentError("store.corrupt", `${file} is not valid JSON (${(error as Error).message}); ${corruptAdvice(file)}`, { file });
    }
    const env = parsed as Partial<Envelope<T>>;
    if (!env || typeof env !== "object" || typeof env.schemaVersion !== "number" || !("data" in env)) {
      throw new AgentError("store.corrupt", `${file} is not a ${kind} file of this application`, { file });
    }
    if (env.kind !== kind) {
      throw new AgentError("store.wrong_kind", `${file} holds a ${String(env.kind)}, expected a ${kind}`, { file });
    }
    if (env.schemaVersion > version) {
      throw new AgentError(
        "store.version_too_new",
        `${file} was written by a newer version of agent (schema ${env.schemaVersion}, this one knows ${version}); upgrade agent to open it`,
        { file, fileVersion: env.schemaVersion, knownVersion: version },
      );
    }
    let data = env.data as unknown;
    let at = env.schemaVersion;
    const migrated = at < version;
    while (at < version) {
      const step = this.options.migrations?.[at];
      if (!step) throw new AgentError("store.no_migration", `no migration for ${kind} schema ${at} -> ${at + 1}`, { file });
      data = step(data);
      at += 1;
    }
    this.envelope = { kind, schemaVersion: version, data: data as T };
    if (this.options.rollBack) this.durable = migrated ? JSON.stringify(this.envelope) : text;
    this.lastWasEmpty = this.options.isEmpty ? this.options.isEmpty(this.data) : false;
    if (migrated) {
      // Keep the pre-migration file: a migration is the riskiest write there is.
      await keepBackup(file);
      await this.flush();
    }
  }
}

/** What to do about a corrupt file: restore the backup where one exists (only stores with `backup` keep one). */
function corruptAdvice(file: string): string {
  const bak = `${file}.bak`;
  return existsSync(bak)
    ? `restore it from ${bak} (the version before the last write) or move it away`
    : `there is no backup of it; move it away (its data is lost) or repair the JSON by hand`;
}

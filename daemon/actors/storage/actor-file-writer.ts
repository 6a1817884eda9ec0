/**
 * Coalesced, atomic writes of one actor file. A write requested now is done in a setImmediate
 * after the current I/O phase, so every action that finished in this event-loop turn shares
 * one write, and each caller's promise resolves only after the rename put its change on disk.
 * Small files (the usual case) are written synchronously (the sync form of the daemon's one
 * atomic write, store/atomic-file.ts: no thread-pool round trips, which under load cost more
 * than the write itself); files above SYNC_WRITE_MAX go through the async form. The file stays a DocStore envelope, so it is
 * opened (and migrated) by DocStore. Each write folds the step journal in.
 */
import { writeFileAtomic, writeFileAtomicSync } from "../../store/atomic-file.js";
import type { DocStore } from "../../store/doc-store.js";
import { ACTOR_FILE_KIND, ACTOR_FILE_VERSION, type ActorFile } from "./actor-file.js";
import type { StepJournal } from "./step-journal.js";

/** Actor files up to this size (chars of JSON) are written synchronously. */
const SYNC_WRITE_MAX = 256 * 1024;

export class ActorFileWriter {
  /** The write waiting for its setImmediate (later requests join it). */
  private next: Promise<void> | null = null;
  /** The write on its way to disk. */
  private current: Promise<void> | null = null;

  constructor(
    private readonly doc: DocStore<ActorFile>,
    private readonly journal: StepJournal,
    /** Called when a write failed (before its callers hear of it). */
    private readonly onFailed: () => void,
  ) {}

  /** Write the actor file as it is then; resolves once it is on disk. */
  write(): Promise<void> {
    if (this.next) return this.next;
    const p = new Promise<void>((resolve, reject) => {
      const run = () => {
        if (this.next === p) this.next = null;
        const f = this.flushNow();
        this.current = f;
        f.then(resolve, (error) => {
          this.onFailed();
          reject(error);
        }).finally(() => {
          if (this.current === f) this.current = null;
        });
      };
      if (this.current) this.current.then(() => setImmediate(run), () => setImmediate(run));
      else setImmediate(run);
    });
    this.next = p;
    return p;
  }

  /** The write queued or on its way, if any (resolves when the latest change is on disk). */
  pending(): Promise<void> | null {
    return this.next ?? this.current;
  }

  private flushNow(): Promise<void> {
    if (this.journal.closed) return Promise.resolve();
    const file = this.doc.file;
    try {
      const seq = this.journal.seq;
      if (seq > 0) this.doc.data.walSeq = seq;
      const names = this.doc.data.workflow?.nameRegistry.length ?? 0;
      const text = JSON.stringify({ kind: ACTOR_FILE_KIND, schemaVersion: ACTOR_FILE_VERSION, data: this.doc.data });
      if (text.length <= SYNC_WRITE_MAX) {
        writeFileAtomicSync(file, text);
        this.journal.folded(seq, names);
        return Promise.resolve();
      }
      return writeFileAtomic(file, text).then(() => this.journal.folded(seq, names));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

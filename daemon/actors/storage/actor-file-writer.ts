/**
 * Coalesced, durable writes of one actor file. A write requested now is made with every other
 * durable write of this event-loop turn, across actors: one line each in the journal of small
 * files (file-journal.ts), appended together, so every action that finished in this turn shares
 * one write, and each caller's promise resolves only once its change is on disk. The file is
 * serialized when the batch is written, not when asked for. It stays a DocStore envelope, so it
 * is opened (and migrated) by DocStore. Each write folds the step journal in.
 */
import type { DocStore } from "../../store/doc-store.js";
import { ACTOR_FILE_KIND, ACTOR_FILE_VERSION, type ActorFile } from "./actor-file.js";
import type { FileJournal } from "./file-journal.js";
import { basename } from "node:path";
import type { StepJournal } from "./step-journal.js";

export class ActorFileWriter {
  /** The write waiting for its batch (later requests join it). */
  private next: Promise<void> | null = null;
  /** The write on its way to disk. */
  private current: Promise<void> | null = null;

  constructor(
    private readonly doc: DocStore<ActorFile>,
    private readonly files: FileJournal,
    private readonly journal: StepJournal,
    /** Called when a write failed (before its callers hear of it). */
    private readonly onFailed: () => void,
  ) {}

  /** Write the actor file as it is then; resolves once it is on disk. */
  write(): Promise<void> {
    if (this.next) return this.next;
    const p: Promise<void> = new Promise<void>((resolve, reject) => {
      const run = () => {
        let folded: { seq: number; names: number } | null = null;
        const f = this.files
          .write(basename(this.doc.file), () => {
            if (this.next === p) this.next = null;
            if (this.journal.closed) return null;
            const seq = this.journal.seq;
            if (seq > 0) this.doc.data.walSeq = seq;
            folded = { seq, names: this.doc.data.workflow?.nameRegistry.length ?? 0 };
            return JSON.stringify({ kind: ACTOR_FILE_KIND, schemaVersion: ACTOR_FILE_VERSION, data: this.doc.data });
          })
          .then(() => {
            if (folded) this.journal.folded(folded.seq, folded.names);
          });
        this.current = f;
        f.then(resolve, (error) => {
          if (this.next === p) this.next = null;
          this.onFailed();
          reject(error);
        }).finally(() => {
          if (this.current === f) this.current = null;
        });
      };
      if (this.current) this.current.then(run, run);
      else run();
    });
    this.next = p;
    return p;
  }

  /** The write queued or on its way, if any (resolves when the latest change is on disk). */
  pending(): Promise<void> | null {
    return this.next ?? this.current;
  }
}

/**
 * The Matrix client's sync state on disk: the SDK's in-memory store, plus its SyncAccumulator
 * (what its IndexedDB store keeps in a browser) written with the daemon's atomic write after
 * each sync. The accumulated state carries the `next_batch` token, so after a restart (a kill -9
 * included) the SDK loads the rooms it knew and syncs on from that token. A crash between a sync
 * and its save replays at most that sync, whose events the channel layer drops as seen.
 */
import type { ISyncResponse } from "matrix-js-sdk";
import type { Logger } from "../../log/logger.js";
import { readTextOrNull, writeFileAtomic } from "../../store/atomic-file.js";

type Sdk = typeof import("matrix-js-sdk");

export type MatrixSyncStore = InstanceType<Sdk["MemoryStore"]> & {
  /** True when the state (and its token) came from disk. */
  readonly resumed: boolean;
  /** Write what is not written yet (at stop). */
  flush(): Promise<void>;
};

interface SavedFile {
  version: 1;
  nextBatch: string;
  roomsData: unknown;
  accountData: unknown[];
}

export async function openSyncStore(sdk: Sdk, file: string, log: Logger): Promise<MatrixSyncStore> {
  let saved: SavedFile | null = null;
  const raw = await readTextOrNull(file);
  if (raw) {
    try {
      const parsed = JSON.parse(raw) as SavedFile;
      if (parsed.version === 1 && typeof parsed.nextBatch === "string") saved = parsed;
    } catch (error) {
      log.warn("matrix: the stored sync state is unreadable; starting with a fresh sync", { file, error: (error as Error).message });
    }
  }

  class PersistedStore extends sdk.MemoryStore {
    private readonly acc = new sdk.SyncAccumulator();
    private dirty = false;
    private writing: Promise<void> = Promise.resolve();
    readonly resumed = saved !== null;

    constructor() {
      super();
      if (saved)
        this.acc.accumulate(
          { next_batch: saved.nextBatch, rooms: saved.roomsData, account_data: { events: saved.accountData } } as unknown as ISyncResponse,
          true,
        );
    }

    override async getSavedSync() {
      if (!this.acc.getNextBatchToken()) return null;
      const data = this.acc.getJSON();
      return { nextBatch: data.nextBatch, roomsData: data.roomsData, accountData: data.accountData };
    }

    override async getSavedSyncToken() {
      return this.acc.getNextBatchToken() || null;
    }

    override async setSyncData(syncData: ISyncResponse): Promise<void> {
      this.acc.accumulate(syncData);
      this.dirty = true;
    }

    override wantsSave(): boolean {
      return this.dirty;
    }

    override async save(): Promise<void> {
      if (!this.dirty) return;
      this.dirty = false;
      const data = this.acc.getJSON(true);
      const text = JSON.stringify({ version: 1, nextBatch: data.nextBatch, roomsData: data.roomsData, accountData: data.accountData } satisfies SavedFile);
      // One writer at a time: a save waits for the one before it.
      const write = this.writing.then(() => writeFileAtomic(file, text, { mode: 0o600 }));
      this.writing = write.catch((error: unknown) => {
        this.dirty = true;
        log.warn("matrix: saving the sync state failed", { file, error: (error as Error).message });
      });
      await this.writing;
    }

    async flush(): Promise<void> {
      await this.save();
    }

    override async deleteAllData(): Promise<void> {
      await super.deleteAllData();
    }
  }
  return new PersistedStore() as MatrixSyncStore;
}

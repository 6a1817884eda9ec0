import type { Task } from "../../../shared/protocol/kanban.js";
import type { ActorKv } from "../../actors/api.js";
import { ChunkedKv } from "../../store/chunked-kv.js";

/**
 * A board's tasks in the daemon's chunked KV (store/chunked-kv.ts), in records of the board
 * actor: tasks in creation order, `[k*32, (k+1)*32)` under `chunk/<k, 8 digits>` (each task
 * with its comments, events and runs). A change rewrites only the chunks of the tasks it
 * touches, so it costs the same on a board of 10 tasks and of 10,000; creations append to the
 * last chunk, so a burst of them shares one write (the board commits the changes queued while
 * a write is on its way together).
 *
 * A write that touches one chunk is one put, atomic by itself. One that touches several (a
 * decomposition, a completion that wakes dependents in older chunks, a link, a batch that
 * crosses a chunk boundary) is committed through the `tx` record (the chunked KV's
 * transactional write), and a start that finds `tx` (a crash between the commit and the chunks)
 * writes its chunks again, so the change lands whole or not at all. Writes are serialized by the
 * board, so at most one `tx` exists.
 */
export const CHUNK_TASKS = 32;

export class BoardStore {
  /** Task ids per chunk, in creation order. */
  private readonly chunks: string[][] = [];
  private readonly chunkOf = new Map<string, number>();
  private readonly kv: ChunkedKv<Task>;

  constructor(kv: ActorKv) {
    this.kv = new ChunkedKv<Task>(kv, { prefix: "chunk/", chunkSize: CHUNK_TASKS, txKey: "tx" });
  }

  /** Every task, after finishing a write a crash interrupted. */
  async load(): Promise<Task[]> {
    await this.kv.recover();
    const out: Task[] = [];
    for (const [k, tasks] of await this.kv.readChunks()) {
      this.chunks[k] = tasks.map((t) => t.id);
      for (const t of tasks) this.chunkOf.set(t.id, k);
      out.push(...tasks);
    }
    return out;
  }

  /**
   * Persist the tasks of one commit (new ones get the next places); `lookup` gives the current
   * record of every task of a chunk being rewritten. Resolves once it is durable.
   */
  async write(changed: Task[], lookup: (id: string) => Task | undefined): Promise<void> {
    if (changed.length === 0) return;
    const added: string[] = [];
    const touched = new Set<number>();
    for (const t of changed) {
      let k = this.chunkOf.get(t.id);
      if (k === undefined) {
        k = this.chunks.length === 0 || this.chunks[this.chunks.length - 1]!.length >= CHUNK_TASKS ? this.chunks.length : this.chunks.length - 1;
        (this.chunks[k] ??= []).push(t.id);
        this.chunkOf.set(t.id, k);
        added.push(t.id);
      }
      touched.add(k);
    }
    const records: Array<[number, Task[]]> = [...touched].map((k) => [k, this.chunks[k]!.map(lookup).filter((t): t is Task => t !== undefined)]);
    let committed = false;
    try {
      await this.kv.writeChunks(records, { onCommit: () => (committed = true) });
    } catch (error) {
      if (!committed) {
        // Not committed: the new tasks give their places back.
        for (const id of added.reverse()) {
          const k = this.chunkOf.get(id)!;
          this.chunks[k]!.pop();
          if (this.chunks[k]!.length === 0) this.chunks.length = k;
          this.chunkOf.delete(id);
        }
      }
      throw error;
    }
  }
}

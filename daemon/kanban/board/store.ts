import type { Task } from "../../../shared/protocol/kanban.js";
import type { ActorKv } from "../../actors/types.js";

/**
 * A board's tasks in the board actor's KV: one record per task under `task/<id>` (the task with
 * its comments, events and runs). The KV hashes keys into 256 bucket files, so a change rewrites
 * the records of one bucket: about n/256 tasks, which stays small (40 at 10,000 tasks) and does
 * not depend on the board's other buckets.
 *
 * A change that touches one task is one put, atomic by itself. A change that touches several
 * (a decomposition, a completion that wakes dependents, a link) first writes all of them as one
 * record under `tx` (one atomic put: the commit point), then the task records, then removes `tx`.
 * A start that finds `tx` (a crash between the two) writes its records again, so the change
 * lands whole or not at all. Changes are serialized by the board, so at most one `tx` exists.
 */
const TASK_PREFIX = "task/";
const TX_KEY = "tx";

const taskKey = (id: string) => `${TASK_PREFIX}${id}`;

export class BoardStore {
  constructor(private readonly kv: ActorKv) {}

  /** Every task, after finishing a change a crash interrupted. */
  async load(): Promise<Task[]> {
    const tx = await this.kv.getJson<{ tasks: Task[] }>(TX_KEY);
    if (tx) {
      await Promise.all(tx.tasks.map((t) => this.kv.putJson(taskKey(t.id), t)));
      await this.kv.delete(TX_KEY);
    }
    const entries = await this.kv.list(TASK_PREFIX);
    return entries.map((e) => JSON.parse(Buffer.from(e.value).toString("utf8")) as Task);
  }

  /** Persist the new records of one change; resolves once it is durable. */
  async write(tasks: Task[]): Promise<void> {
    if (tasks.length === 0) return;
    if (tasks.length === 1) {
      await this.kv.putJson(taskKey(tasks[0]!.id), tasks[0]);
      return;
    }
    await this.kv.putJson(TX_KEY, { tasks });
    await Promise.all(tasks.map((t) => this.kv.putJson(taskKey(t.id), t)));
    await this.kv.delete(TX_KEY);
  }
}

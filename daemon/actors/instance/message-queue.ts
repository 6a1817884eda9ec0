/**
 * An actor's durable queue: messages live in the actor file (`queue` of actor-file.ts) until a
 * consumer completes them; `next` hands each message to one waiting consumer at a time.
 */
import { AgentError } from "../../../shared/errors.js";
import { decodeValue, encodeValue } from "../codec.js";
import type { StoredMessage } from "../storage/actor-file.js";
import type { QueueMessage } from "../types.js";
import { ACTOR_LIMITS } from "./limits.js";

/** RivetKit 2.2.1's ActorAborted. */
export function actorAborted(): AgentError {
  return new AgentError("actor.aborted", "Actor aborted.");
}

type QueueData = { nextId: number; messages: StoredMessage[] };
/**
 * `completable`: as RivetKit's, a message received to be completed stays deliverable until it
 * is: a later `next()` (another call's; the same call's throws `queue.previous_message_not_completed`)
 * gets it again. Any other message is handed out once per run (and again after a restart).
 */
export type NextOptions = { name?: string | string[]; names?: readonly string[]; signal?: AbortSignal; timeout?: number; completable?: boolean };

/** What the queue needs from its actor. */
export interface QueueOwner {
  readonly id: string;
  /** The queue's data in the actor file. */
  readonly data: QueueData;
  /** Stops every wait (the actor stops). */
  readonly signal: AbortSignal;
  isAwake(): boolean;
  /** Write the actor file; resolves once on disk. */
  write(): Promise<void>;
  /** A message was completed: answer its sender. */
  completed(messageId: number, reply: unknown): void;
}

interface Waiter {
  names: Set<string> | null;
  completable: boolean;
  resolve: (m: QueueMessage | undefined) => void;
}

export class MessageQueue {
  /** Handed to a consumer, not completed yet (not handed out again in this run). */
  private readonly delivered = new Set<number>();
  private waiters: Waiter[] = [];

  constructor(private readonly owner: QueueOwner) {}

  get size(): number {
    return this.owner.data.messages.length;
  }

  /** The id the next enqueued message gets. */
  get nextId(): number {
    return this.owner.data.nextId;
  }

  get messages(): readonly StoredMessage[] {
    return this.owner.data.messages;
  }

  /** Add a message; resolves with its id once it is on disk. */
  enqueue(name: string, body: unknown): Promise<number> {
    const q = this.owner.data;
    if (q.messages.length >= ACTOR_LIMITS.queueMaxSize) {
      throw new AgentError("queue.full", `the queue of actor ${this.owner.id} is full (${ACTOR_LIMITS.queueMaxSize} messages)`, {
        maxSize: ACTOR_LIMITS.queueMaxSize,
      });
    }
    const text = encodeValue(body);
    if (Buffer.byteLength(text) > ACTOR_LIMITS.queueMaxMessageBytes) {
      throw new AgentError("queue.message_too_large", `a queue message may hold at most ${ACTOR_LIMITS.queueMaxMessageBytes} bytes`, {
        maxBytes: ACTOR_LIMITS.queueMaxMessageBytes,
      });
    }
    const msg: StoredMessage = { id: q.nextId++, name, body: text, createdAtMs: Date.now() };
    q.messages.push(msg);
    return this.owner.write().then(
      () => {
        this.deliver();
        return msg.id;
      },
      (error) => {
        // Not on disk, so not enqueued: no later write may carry it.
        const messages = this.owner.data.messages;
        const i = messages.indexOf(msg);
        if (i >= 0) messages.splice(i, 1);
        throw error;
      },
    );
  }

  private matches(m: StoredMessage, names: Set<string> | null): boolean {
    return !this.delivered.has(m.id) && (names === null || names.has(m.name));
  }

  private deliver(): void {
    if (!this.waiters.length) return;
    for (const m of this.owner.data.messages) {
      if (this.delivered.has(m.id)) continue;
      const i = this.waiters.findIndex((w) => w.names === null || w.names.has(m.name));
      if (i < 0) continue;
      const [w] = this.waiters.splice(i, 1);
      if (!w!.completable) this.delivered.add(m.id);
      w!.resolve(this.toMessage(m));
      if (!this.waiters.length) return;
    }
  }

  private toMessage(m: StoredMessage): QueueMessage {
    let done = false;
    return {
      id: m.id,
      name: m.name,
      body: decodeValue(m.body),
      createdAtMs: m.createdAtMs,
      complete: async (reply?: unknown) => {
        if (done) return;
        done = true;
        await this.remove(m.id);
        this.owner.completed(m.id, reply);
      },
    };
  }

  /** Remove a message (completed); resolves once on disk, or at once with `write` false (the caller writes). */
  remove(id: number, write = true): Promise<void> {
    const q = this.owner.data;
    const i = q.messages.findIndex((m) => m.id === id);
    this.delivered.delete(id);
    if (i < 0) return Promise.resolve();
    q.messages.splice(i, 1);
    return write ? this.owner.write() : Promise.resolve();
  }

  next(options?: NextOptions): Promise<QueueMessage | undefined> {
    const filter = options?.name ?? options?.names;
    const names = filter === undefined ? null : new Set<string>(typeof filter === "string" ? [filter] : filter);
    for (const m of this.owner.data.messages) {
      if (this.matches(m, names)) {
        if (!options?.completable) this.delivered.add(m.id);
        return Promise.resolve(this.toMessage(m));
      }
    }
    const signals = [this.owner.signal, options?.signal].filter(Boolean) as AbortSignal[];
    if (signals.some((s) => s.aborted) || !this.owner.isAwake()) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        for (const s of signals) s.removeEventListener("abort", onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
      };
      const waiter: Waiter = {
        names,
        completable: options?.completable === true,
        resolve: (m) => {
          cleanup();
          resolve(m);
        },
      };
      const onAbort = () => waiter.resolve(undefined);
      for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
      if (options?.timeout !== undefined) timer = setTimeout(() => waiter.resolve(undefined), options.timeout);
      this.waiters.push(waiter);
    });
  }

  /**
   * `c.queue.next` as the actor's code sees it (RivetKit's): a wait ended by the actor stopping
   * (sleep or destroy) or by the caller's signal rejects with `actor.aborted`; a timeout still
   * resolves undefined. (The workflow engine uses `next`, which resolves undefined on both.)
   */
  async nextForActor(options?: NextOptions): Promise<QueueMessage | undefined> {
    const m = await this.next(options);
    if (m === undefined && (this.owner.signal.aborted || !this.owner.isAwake() || options?.signal?.aborted)) throw actorAborted();
    return m;
  }

  /** `c.queue.iter`: ends when the actor stops or the signal aborts, as RivetKit's does. */
  async *iter(options?: Omit<NextOptions, "timeout">): AsyncIterable<QueueMessage> {
    for (;;) {
      const m = await this.next(options);
      if (!m) return;
      yield m;
    }
  }

  /** The actor stops: every waiting consumer gets undefined. */
  stop(): void {
    for (const w of this.waiters) w.resolve(undefined);
    this.waiters = [];
  }
}

/**
 * Senders waiting for the reply to a queue message they sent (`enqueue` with `wait`), until the
 * consumer completes the message or their time runs out.
 */
export type QueueReply = { status: "completed" | "timedOut"; response?: unknown };

export class QueueReplies {
  private readonly senders = new Map<string, (reply: unknown) => void>();

  /** Wait for the reply to message `messageId` (register before the message can be completed). */
  wait(actorId: string, messageId: number, timeoutMs: number): Promise<QueueReply> {
    const key = `${actorId}:${messageId}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.senders.delete(key);
        resolve({ status: "timedOut" });
      }, timeoutMs);
      this.senders.set(key, (reply) => {
        clearTimeout(timer);
        this.senders.delete(key);
        resolve({ status: "completed", ...(reply !== undefined ? { response: reply } : {}) });
      });
    });
  }

  /** The message was completed with `reply`: answer its sender, if one waits. */
  complete(actorId: string, messageId: number, reply: unknown): void {
    this.senders.get(`${actorId}:${messageId}`)?.(reply);
  }

  /** The message was never queued: stop waiting for it. */
  abandon(actorId: string, messageId: number): void {
    const key = `${actorId}:${messageId}`;
    this.senders.get(key)?.(undefined);
    this.senders.delete(key);
  }
}

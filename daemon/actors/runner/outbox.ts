/**
 * Messages to the other side of a runner boundary, posted in batches: everything sent in one
 * turn of the event loop crosses as one array (one clone, one message event on the other side)
 * at the end of the turn (setImmediate), in the order it was sent. A batch that cannot be cloned
 * is posted message by message, so only the message that cannot cross fails (`failed`).
 */
export interface PostTarget {
  postMessage(value: unknown, transfer?: readonly ArrayBuffer[]): void;
}

export class Outbox<M> {
  private msgs: M[] = [];
  /** Each message's transfer list (null: none), by index in `msgs`. */
  private transfers: (ArrayBuffer[] | null)[] = [];
  private anyTransfer = false;
  private scheduled = false;

  constructor(
    private readonly target: PostTarget,
    private readonly failed: (m: M, error: unknown) => void,
  ) {}

  send(m: M, transfer?: ArrayBuffer[]): void {
    this.msgs.push(m);
    if (transfer !== undefined && transfer.length > 0) {
      this.transfers.push(transfer);
      this.anyTransfer = true;
    } else this.transfers.push(null);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Post what is waiting now (also before the thread ends). */
  readonly flush = (): void => {
    this.scheduled = false;
    const msgs = this.msgs;
    if (msgs.length === 0) return;
    const transfers = this.transfers;
    const anyTransfer = this.anyTransfer;
    this.msgs = [];
    this.transfers = [];
    this.anyTransfer = false;
    try {
      if (msgs.length === 1) this.target.postMessage(msgs[0], transfers[0] ?? []);
      else this.target.postMessage(msgs, anyTransfer ? transfers.flatMap((t) => t ?? []) : []);
      return;
    } catch {}
    for (let i = 0; i < msgs.length; i++) {
      try {
        this.target.postMessage(msgs[i], transfers[i] ?? []);
      } catch (error) {
        this.failed(msgs[i], error);
      }
    }
  };
}

/**
 * Backpressure for the gateway's WebSockets (README "Connections"). The `ws` library buffers
 * whatever `send` is given for as long as the client does not read it, and reads whatever the
 * client sends as fast as it comes; both are bounded here:
 *
 * - outbound: a send that would take the socket's `bufferedAmount` over `maxBufferedBytes` is
 *   not buffered; the socket is closed with 1013 (try again later) and later sends are dropped.
 *   The actor's side hears the close at once (its sends stop there), and the socket is cut
 *   after `closeGraceMs` if the client does not read the close frame either, so the buffer is
 *   freed in bounded time.
 * - inbound: whoever hands messages on (the runner, whose worker may be busy) counts them with
 *   `hold`/`release`; over `maxHeldMessages` or `maxHeldBytes` the socket stops reading
 *   (`ws.pause()`), so TCP pushes back on the client until the actor has caught up.
 */
import { EventEmitter } from "node:events";
import type { WebSocket } from "ws";

export const SOCKET_LIMITS = {
  /** Bytes a socket may hold for a client that does not read. */
  maxBufferedBytes: 8 * 1024 * 1024,
  /** Messages (and bytes) handed on but not yet taken before reading pauses. */
  maxHeldMessages: 256,
  maxHeldBytes: 4 * 1024 * 1024,
  closeGraceMs: 5_000,
};

/** The close code for a client that does not read what it is sent. */
export const CLOSE_BACKPRESSURE = 1013;

export class BoundedSocket extends EventEmitter {
  private heldMessages = 0;
  private heldBytes = 0;
  private paused = false;
  private overflowed = false;
  private closedEmitted = false;

  constructor(
    readonly ws: WebSocket,
    private readonly limits = SOCKET_LIMITS,
  ) {
    super();
    ws.on("message", (data: Buffer, isBinary: boolean) => this.emit("message", data, isBinary));
    ws.on("close", (code: number, reason: Buffer) => this.closed(code, reason));
  }

  get readyState(): number {
    return this.overflowed && this.ws.readyState === this.ws.OPEN ? this.ws.CLOSING : this.ws.readyState;
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** Sends, or closes the socket when the client has fallen `maxBufferedBytes` behind. Returns whether it was sent. */
  send(data: string | Uint8Array): boolean {
    if (this.overflowed || this.ws.readyState !== this.ws.OPEN) return false;
    const size = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
    if (this.ws.bufferedAmount + size > this.limits.maxBufferedBytes) {
      this.overflow();
      return false;
    }
    this.ws.send(data);
    return true;
  }

  close(code?: number, reason?: string): void {
    if (this.ws.readyState === this.ws.CLOSED || this.ws.readyState === this.ws.CLOSING) return;
    this.ws.close(code, reason);
  }

  private overflow(): void {
    this.overflowed = true;
    const reason = "backpressure: the client does not read";
    this.ws.close(CLOSE_BACKPRESSURE, reason);
    // The actor stops sending now, not when (or if) the client answers the close frame.
    this.closed(CLOSE_BACKPRESSURE, Buffer.from(reason));
    setTimeout(() => {
      if (this.ws.readyState !== this.ws.CLOSED) this.ws.terminate();
    }, this.limits.closeGraceMs).unref();
  }

  private closed(code: number, reason: Buffer): void {
    if (this.closedEmitted) return;
    this.closedEmitted = true;
    this.emit("close", code, reason);
  }

  /** A message was handed on and is not yet taken: reading pauses over the limits. */
  hold(bytes: number): void {
    this.heldMessages++;
    this.heldBytes += bytes;
    if (!this.paused && (this.heldMessages > this.limits.maxHeldMessages || this.heldBytes > this.limits.maxHeldBytes)) {
      this.paused = true;
      this.ws.pause();
    }
  }

  /** A held message was taken: reading resumes once half the limits are free again. */
  release(bytes: number): void {
    this.heldMessages--;
    this.heldBytes -= bytes;
    if (this.paused && this.heldMessages <= this.limits.maxHeldMessages / 2 && this.heldBytes <= this.limits.maxHeldBytes / 2) {
      this.paused = false;
      this.ws.resume();
    }
  }
}

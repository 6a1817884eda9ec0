import { EventEmitter } from "node:events";
import type { Socket } from "node:net";

/** The largest message the daemon reads (a transcript append with images stays well below). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** The header block of one message (`Content-Length: N\r\n\r\n` and friends). */
export const MAX_HEADER_BYTES = 8 * 1024;

export interface FramingViolation {
  code: "rpc.message_too_large" | "rpc.bad_framing";
  message: string;
}

/**
 * Sits between the socket and vscode-jsonrpc's reader, which buffers whatever a header
 * announces (and rescans an unterminated header block on every chunk). This follows the
 * Content-Length framing as bytes arrive and passes them on unchanged; a header block over
 * MAX_HEADER_BYTES, a missing or malformed Content-Length, or a length over the limit stops the
 * stream before the reader buffers anything of it: `violation` fires once and nothing more is
 * passed on. The reader then never holds more than one message within the limit.
 *
 * Emits what vscode-jsonrpc's stream wrapper listens to: data, close, error, end.
 */
export class FramedInput extends EventEmitter {
  /** Body bytes still to come of the current message; -1 while reading a header block. */
  private remaining = -1;
  private header = "";
  private stopped = false;

  constructor(
    socket: Socket,
    private readonly onViolation: (violation: FramingViolation) => void,
    private readonly maxMessageBytes = MAX_MESSAGE_BYTES,
  ) {
    super();
    this.on("error", () => undefined); // the socket's own listener reports it
    socket.on("data", (chunk: Buffer) => this.push(chunk));
    for (const event of ["close", "error", "end"]) socket.on(event, (arg?: unknown) => this.emit(event, arg));
  }

  private push(chunk: Buffer): void {
    if (this.stopped) return;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining >= 0) {
        const n = Math.min(this.remaining, chunk.length - offset);
        offset += n;
        this.remaining -= n;
        if (this.remaining === 0) this.remaining = -1;
        continue;
      }
      const before = this.header.length;
      // latin1 keeps one character per byte, so offsets stay byte offsets.
      this.header += chunk.toString("latin1", offset, Math.min(chunk.length, offset + MAX_HEADER_BYTES + 4));
      const end = this.header.indexOf("\r\n\r\n", Math.max(0, before - 3));
      if (end < 0) {
        if (this.header.length > MAX_HEADER_BYTES) {
          this.stop({ code: "rpc.bad_framing", message: `a message header block is longer than ${MAX_HEADER_BYTES} bytes` });
          return;
        }
        offset = chunk.length;
        continue;
      }
      const length = this.contentLength(this.header.slice(0, end));
      if (typeof length !== "number") {
        this.stop(length);
        return;
      }
      offset += end + 4 - before;
      this.header = "";
      this.remaining = length === 0 ? -1 : length;
    }
    this.emit("data", chunk);
  }

  private contentLength(block: string): number | FramingViolation {
    let length: number | undefined;
    for (const line of block.split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon < 0) return { code: "rpc.bad_framing", message: "a message header must be `Name: value`" };
      if (line.slice(0, colon).trim().toLowerCase() !== "content-length") continue;
      const value = line.slice(colon + 1).trim();
      if (!/^\d{1,16}$/.test(value)) return { code: "rpc.bad_framing", message: "Content-Length must be a number of bytes" };
      length = Number(value);
    }
    if (length === undefined) return { code: "rpc.bad_framing", message: "a message must start with a Content-Length header" };
    if (length > this.maxMessageBytes) {
      return { code: "rpc.message_too_large", message: `a message of ${length} bytes is over the daemon's limit of ${this.maxMessageBytes} bytes` };
    }
    return length;
  }

  private stop(violation: FramingViolation): void {
    this.stopped = true;
    this.header = "";
    this.onViolation(violation);
  }
}

import { EventEmitter } from "node:events";

/** A header block (`Content-Length: N\r\n\r\n` and friends) that has no business being larger. */
export const MAX_HEADER_BYTES = 8 * 1024;
/** The largest message body read by default, on the daemon socket and from a language server. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface FramingLimits {
  maxHeaderBytes: number;
  maxMessageBytes: number;
}

/** What stopped the stream (`message` is a noun phrase); the caller maps `kind` to its own error code. */
export type FramingViolation = { kind: "bad_framing"; message: string } | { kind: "too_large"; message: string; length: number; limit: number };

/**
 * Sits between a byte source (a socket, a child's stdout: anything emitting data, close, error,
 * end) and vscode-jsonrpc's StreamMessageReader, which buffers whatever a header announces (and
 * rescans an unterminated header block on every chunk). This follows the Content-Length framing
 * as bytes arrive and passes them on unchanged; a header block over `maxHeaderBytes`, a missing
 * or malformed Content-Length, or a length over `maxMessageBytes` stops the stream before the
 * reader buffers anything of it: `onViolation` fires once and nothing more is passed on. The
 * reader then never holds more than one message within the limit; it still does the parsing.
 *
 * Emits what vscode-jsonrpc's stream wrapper listens to: data, close, error, end.
 */
export class FramedInput extends EventEmitter {
  /** Body bytes still to come of the current message; -1 while reading a header block. */
  private remaining = -1;
  private header = "";
  private stopped = false;
  private readonly limits: FramingLimits;

  constructor(
    source: EventEmitter,
    private readonly onViolation: (violation: FramingViolation) => void,
    limits: Partial<FramingLimits> = {},
  ) {
    super();
    this.limits = { maxHeaderBytes: MAX_HEADER_BYTES, maxMessageBytes: MAX_MESSAGE_BYTES, ...limits };
    this.on("error", () => undefined); // the source's own listener reports it
    source.on("data", (chunk: Buffer) => this.push(chunk));
    for (const event of ["close", "error", "end"]) source.on(event, (arg?: unknown) => this.emit(event, arg));
  }

  private push(chunk: Buffer): void {
    if (this.stopped) return;
    const { maxHeaderBytes } = this.limits;
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
      this.header += chunk.toString("latin1", offset, Math.min(chunk.length, offset + maxHeaderBytes + 4));
      const end = this.header.indexOf("\r\n\r\n", Math.max(0, before - 3));
      if (end < 0 ? this.header.length > maxHeaderBytes : end > maxHeaderBytes) {
        this.stop({ kind: "bad_framing", message: `a message header block over ${maxHeaderBytes} bytes` });
        return;
      }
      if (end < 0) {
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
      if (colon < 0) return { kind: "bad_framing", message: "a header line that is not `Name: value`" };
      if (line.slice(0, colon).trim().toLowerCase() !== "content-length") continue;
      const value = line.slice(colon + 1).trim();
      if (!/^\d{1,16}$/.test(value)) return { kind: "bad_framing", message: "a Content-Length that is not a number of bytes" };
      length = Number(value);
    }
    if (length === undefined) return { kind: "bad_framing", message: "a message without a Content-Length header" };
    const limit = this.limits.maxMessageBytes;
    if (length > limit) return { kind: "too_large", message: `a message of ${length} bytes, over the limit of ${limit} bytes`, length, limit };
    return length;
  }

  private stop(violation: FramingViolation): void {
    this.stopped = true;
    this.header = "";
    this.onViolation(violation);
  }
}

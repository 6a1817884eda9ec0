import type { Readable } from "node:stream";
import { AbstractMessageReader, type DataCallback, type Disposable, type Message } from "vscode-jsonrpc";
import { AgentError } from "../../shared/errors.js";

/** A language server's header block (up to the blank line) may not exceed this. */
export const MAX_HEADER_BYTES = 8 * 1024;
/** Nor one message body: a server that claims more is broken, not busy. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

const CRLFCRLF = Buffer.from("\r\n\r\n");

/**
 * Reads `Content-Length` framed JSON-RPC messages from a language server's stdout. The stock
 * reader buffers a header block without bound; this one treats a block over 8 KiB (or a
 * missing or absurd Content-Length) as a protocol error: it stops reading and fires `onError`
 * with an `lsp.protocol_error`, so the manager can mark the server broken.
 */
export class LspMessageReader extends AbstractMessageReader {
  private buffer: Buffer = Buffer.alloc(0);
  private bodyLength = -1;
  private failed = false;
  private callback: DataCallback | null = null;

  constructor(private readonly readable: Readable) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer) => this.onData(chunk);
    const onEnd = () => this.fireClose();
    const onError = (error: Error) => this.fireError(error);
    this.readable.on("data", onData);
    this.readable.on("end", onEnd);
    this.readable.on("error", onError);
    return {
      dispose: () => {
        this.readable.off("data", onData);
        this.readable.off("end", onEnd);
        this.readable.off("error", onError);
      },
    };
  }

  private fail(message: string): void {
    this.failed = true;
    this.buffer = Buffer.alloc(0);
    this.fireError(new AgentError("lsp.protocol_error", message));
  }

  private onData(chunk: Buffer): void {
    if (this.failed) return;
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      if (this.bodyLength < 0) {
        const end = this.buffer.indexOf(CRLFCRLF);
        if (end < 0) {
          if (this.buffer.length > MAX_HEADER_BYTES) {
            this.fail(`language server sent a header block over ${MAX_HEADER_BYTES} bytes`);
            return;
          }
          return;
        }
        if (end > MAX_HEADER_BYTES) {
          this.fail(`language server sent a header block over ${MAX_HEADER_BYTES} bytes`);
          return;
        }
        const length = contentLength(this.buffer.subarray(0, end).toString("ascii"));
        if (length === null || length > MAX_BODY_BYTES) {
          this.fail(`language server sent a message without a valid Content-Length`);
          return;
        }
        this.bodyLength = length;
        this.buffer = this.buffer.subarray(end + 4);
      }
      if (this.buffer.length < this.bodyLength) return;
      const body = this.buffer.subarray(0, this.bodyLength).toString("utf8");
      this.buffer = this.buffer.subarray(this.bodyLength);
      this.bodyLength = -1;
      let message: Message;
      try {
        message = JSON.parse(body) as Message;
      } catch {
        this.fail("language server sent a message that is not JSON");
        return;
      }
      this.callback?.(message);
    }
  }
}

function contentLength(headers: string): number | null {
  for (const line of headers.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    if (line.slice(0, colon).trim().toLowerCase() !== "content-length") continue;
    const value = line.slice(colon + 1).trim();
    return /^\d+$/.test(value) ? Number(value) : null;
  }
  return null;
}

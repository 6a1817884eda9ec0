/** Writing a whole response: raw bytes, or a value in the request's encoding, plus CORS headers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { encodeGenericBody, type Encoding } from "./encoding.js";

export type HeaderMap = Record<string, string | number | string[]>;

type MarkedRequest = IncomingMessage & { gatewayClose?: boolean };

/** How long a refused body may keep arriving after the answer before the connection is cut. */
const LINGER_MS = 10_000;

/**
 * The connection is closed after this request's response (its body was refused mid-stream).
 * Closing at once would reset a client that is still sending the refused body: it would see
 * EPIPE or ECONNRESET instead of reading the answer. So the close lingers: our side ends after
 * the answer, what the client still sends is read and dropped until it ends its side (or
 * LINGER_MS passes), then the socket is closed.
 */
export function closeAfterResponse(req: IncomingMessage): void {
  (req as MarkedRequest).gatewayClose = true;
  const socket = req.socket as Socket & { gatewayLinger?: boolean };
  if (socket.gatewayLinger) return;
  socket.gatewayLinger = true;
  // node:http calls destroySoon once the response of a `connection: close` request is written.
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.writable) this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once("end", () => this.destroy());
    this.once("close", () => clearTimeout(timer));
    this.resume();
  };
}

export function writeRaw(res: ServerResponse, status: number, body: Uint8Array | string, contentType: string, cors: HeaderMap | null): void {
  const headers: HeaderMap = { "content-type": contentType, "content-length": typeof body === "string" ? Buffer.byteLength(body) : body.byteLength };
  if (cors) Object.assign(headers, cors);
  if ((res.req as MarkedRequest).gatewayClose) headers.connection = "close";
  res.writeHead(status, headers);
  res.end(res.req.method === "HEAD" ? undefined : body);
}

export function sendValue(res: ServerResponse, status: number, value: unknown, encoding: Encoding, cors: HeaderMap | null): void {
  const { body, contentType } = encodeGenericBody(value, encoding);
  writeRaw(res, status, body, contentType, cors);
}

/** Writing a whole response: raw bytes, or a value in the request's encoding, plus CORS headers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { encodeGenericBody, type Encoding } from "./encoding.js";

export type HeaderMap = Record<string, string | number | string[]>;

type MarkedRequest = IncomingMessage & { gatewayClose?: boolean };

/** The connection is closed after this request's response (its body was refused mid-stream). */
export function closeAfterResponse(req: IncomingMessage): void {
  (req as MarkedRequest).gatewayClose = true;
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

/**
 * CORS: the headers added to every answer to a request with an `Origin`, and the answer to a
 * preflight `OPTIONS`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HeaderMap } from "./response.js";

const CORS_ALLOW_HEADERS = [
  "Content-Type",
  "User-Agent",
  "Authorization",
  "x-rivet-query",
  "x-rivet-encoding",
  "x-rivet-conn-params",
  "x-rivet-actor",
  "x-rivet-target",
  "x-rivet-namespace",
  "x-rivet-token",
].join(", ");
const CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS";

/** The CORS headers for a response, or null when the request has no `Origin`. */
export function corsHeadersFor(origin: string | undefined): HeaderMap | null {
  return origin
    ? { "access-control-allow-origin": origin, "access-control-allow-credentials": "true", "access-control-expose-headers": "*", vary: "Origin" }
    : null;
}

export function isPreflight(req: IncomingMessage, method: string, origin: string | undefined): boolean {
  return method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined && Boolean(origin || req.headers["access-control-request-headers"]);
}

export function answerPreflight(req: IncomingMessage, res: ServerResponse, cors: HeaderMap | null): void {
  const requested = req.headers["access-control-request-headers"];
  res.writeHead(204, {
    ...(cors ?? { "access-control-allow-origin": "*" }),
    "access-control-allow-methods": CORS_METHODS,
    "access-control-allow-headers": typeof requested === "string" && requested.length < 4096 ? requested : CORS_ALLOW_HEADERS,
    "access-control-max-age": "86400",
    "content-length": "0",
  });
  res.end();
}

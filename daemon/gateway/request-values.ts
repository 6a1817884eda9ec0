/** Small readers and checks of request values shared by the route modules. */
import type { IncomingMessage } from "node:http";
import { jsonParse } from "../http/encoding.js";
import { badRequest, invalidRequest } from "../http/request-errors.js";

const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

export function strictBase64Decode(text: string, what: string): Buffer {
  if (!BASE64_PATTERN.test(text)) throw badRequest(`${what} is not valid base64`);
  return Buffer.from(text, "base64");
}

export function parseIntegerParam(params: URLSearchParams, name: string, fallback: number): number {
  const raw = params.get(name);
  if (raw === null || raw === "") return fallback;
  if (!/^\d{1,16}$/.test(raw)) throw badRequest(`query parameter ${name} must be a non-negative integer`);
  return Number(raw);
}

/** The `x-rivet-conn-params` header (one JSON value), or undefined without it. */
export function readConnParams(req: IncomingMessage): unknown {
  const raw = req.headers["x-rivet-conn-params"];
  if (raw === undefined) return undefined;
  if (typeof raw !== "string") throw invalidRequest("x-rivet-conn-params must be one JSON header");
  return jsonParse(raw, "request.invalid", false, "the x-rivet-conn-params header");
}

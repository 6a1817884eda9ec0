/**
 * The three wire encodings chosen by `x-rivet-encoding`: `json` (with RivetKit's JSON-compat
 * tags), `cbor` and `bare`. Absent header = JSON.
 */
import { createRequire } from "node:module";
import type { ErrorCode } from "../../shared/error-codes.js";
import { AgentError } from "../../shared/errors.js";

export type Encoding = "json" | "cbor" | "bare";

type CborX = typeof import("cbor-x");
let cborX: CborX | undefined;
/**
 * cbor-x, loaded on the first CBOR body rather than at daemon start (six modules, ~20 ms of a
 * start's CPU; most daemons never see one). Synchronously, through `require` (its CommonJS build,
 * the same encoder), as the callers are.
 */
const cbor = (): CborX => (cborX ??= createRequire(import.meta.url)("cbor-x") as CborX);
const cborDecode = (bytes: Uint8Array): unknown => cbor().decode(bytes);
const cborEncode = (value: unknown): Uint8Array => cbor().encode(value);

export function parseEncoding(header: string | string[] | undefined): Encoding {
  if (header === undefined || header === "" || header === "json") return "json";
  if (header === "cbor" || header === "bare") return header;
  const shown = String(header).slice(0, 40);
  throw new AgentError("encoding.invalid", `unknown encoding "${shown}"; use json, cbor or bare`);
}

export const CONTENT_TYPE: Record<Encoding, string> = {
  json: "application/json",
  cbor: "application/octet-stream",
  bare: "application/octet-stream",
};

// ---------- JSON with RivetKit's compat tags ----------
// BigInt → ["$BigInt", "123"], Uint8Array → ["$Uint8Array", base64], ArrayBuffer →
// ["$ArrayBuffer", base64]; a user's 2-element array whose first element is a string starting
// with "$" is escaped by prefixing another "$".

function compatReplacer(this: any, key: string, value: unknown): unknown {
  // `this[key]` is the value before toJSON (a Buffer would otherwise arrive as {type,data}).
  const raw = this[key];
  if (typeof raw === "bigint") return ["$BigInt", raw.toString()];
  if (raw instanceof Uint8Array) return ["$Uint8Array", Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("base64")];
  if (raw instanceof ArrayBuffer) return ["$ArrayBuffer", Buffer.from(raw).toString("base64")];
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && value[0].startsWith("$")) {
    return ["$" + value[0], value[1]];
  }
  return value;
}

export function jsonStringifyCompat(value: unknown): string {
  // Fast path for plain primitives (the common action output).
  switch (typeof value) {
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "undefined":
      return "null";
  }
  if (value === null) return "null";
  return JSON.stringify(value, compatReplacer) ?? "null";
}

function strictBase64(text: unknown): Buffer {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new AgentError("request.invalid", "invalid base64 in a JSON-compat tag");
  }
  return Buffer.from(text, "base64");
}

function compatReviver(_key: string, value: unknown): unknown {
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && value[0].startsWith("$")) {
    const tag = value[0];
    if (tag === "$BigInt") {
      if (typeof value[1] !== "string" || !/^-?\d+$/.test(value[1])) throw new AgentError("request.invalid", "invalid $BigInt value");
      return BigInt(value[1]);
    }
    if (tag === "$Uint8Array") return new Uint8Array(strictBase64(value[1]));
    if (tag === "$ArrayBuffer") {
      const b = strictBase64(value[1]);
      return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    }
    if (tag.startsWith("$$")) return [tag.slice(1), value[1]];
    throw new AgentError("request.invalid", `unknown JSON encoding type ${tag.slice(0, 40)}`);
  }
  return value;
}

/** Parses JSON (optionally with compat tags); a syntax error is `code`, naming `what` was parsed. */
export function jsonParse(text: string, code: ErrorCode = "request.invalid", compat = true, what = "body"): unknown {
  try {
    return compat && text.includes('"$') ? JSON.parse(text, compatReviver) : JSON.parse(text);
  } catch (error) {
    if (error instanceof AgentError) throw error;
    throw new AgentError(code, `${what} is not valid JSON: ${(error as Error).message}`);
  }
}

export function cborDecodeStrict(bytes: Uint8Array, code: ErrorCode = "request.invalid"): unknown {
  if (bytes.length === 0) throw new AgentError(code, "empty CBOR body");
  try {
    return cborDecode(bytes);
  } catch (error) {
    throw new AgentError(code, `body is not valid CBOR: ${(error as Error).message}`);
  }
}

export function cborEncodeValue(value: unknown): Uint8Array {
  return cborEncode(value);
}

/** Decodes a generic (management / inspector) body: CBOR when asked for, otherwise JSON. */
export function decodeGenericBody(body: Buffer, encoding: Encoding, code: ErrorCode = "api.bad_request"): unknown {
  if (encoding === "cbor") return cborDecodeStrict(body, code);
  return jsonParse(body.toString("utf8"), code, false);
}

/** Encodes a generic response: CBOR when asked for, otherwise plain JSON. */
export function encodeGenericBody(value: unknown, encoding: Encoding): { body: Uint8Array | string; contentType: string } {
  if (encoding === "cbor") return { body: cborEncode(value), contentType: CONTENT_TYPE.cbor };
  return { body: jsonStringifyCompat(value), contentType: CONTENT_TYPE.json };
}

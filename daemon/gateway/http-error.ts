/**
 * The one place an error becomes an HTTP response body: `{group, code, message, metadata?}`
 * in the request's encoding. The status is the code's, from the registry in
 * `shared/error-codes.ts` (400 unless listed otherwise); an unexpected error or an `internal`
 * code is a 500 with a generic message (the detail goes to the daemon log only).
 */
import { AgentError, publicUserError, userErrorStatus } from "../../shared/errors.js";
import { errorCodeInfo } from "../../shared/error-codes.js";
import { encodeResponseError } from "./bare.js";
import { CONTENT_TYPE, cborEncodeValue, jsonStringifyCompat, type Encoding } from "../http/encoding.js";

export interface HttpErrorBody {
  status: number;
  group: string;
  code: string;
  message: string;
  metadata?: unknown;
  /** True when the error was unexpected (log it with its detail). */
  internal: boolean;
}

const GENERIC_MESSAGE = "An internal error occurred. The details are in the daemon log.";

/** Classifies anything thrown by a handler or by the runtime. */
export function classifyError(thrown: unknown): HttpErrorBody {
  // A user error thrown by actor code without importing anything: `public: true`.
  const error = thrown instanceof AgentError ? thrown : publicUserError(thrown);
  const status = error ? (userErrorStatus(error) ?? errorCodeInfo(error.code).http) : 500;
  // A 5xx hides its detail, except a storage error: what the disk refused is the caller's answer.
  if (!error?.expected || (status >= 500 && error.group !== "storage")) {
    return { status: 500, group: "internal", code: "error", message: GENERIC_MESSAGE, internal: true };
  }
  const at = error.code.indexOf(".");
  const group = at < 0 ? "user" : error.code.slice(0, at);
  const code = at < 0 ? error.code : error.code.slice(at + 1);
  return { status, group, code, message: error.message, metadata: error.metadata, internal: false };
}

export function encodeErrorBody(err: HttpErrorBody, encoding: Encoding): { body: Uint8Array | string; contentType: string } {
  const hasMeta = err.metadata !== undefined && err.metadata !== null;
  if (encoding === "bare") {
    let meta: Uint8Array | null = null;
    if (hasMeta) {
      try {
        meta = cborEncodeValue(err.metadata);
      } catch {
        meta = null;
      }
    }
    return { body: encodeResponseError(err.group, err.code, err.message, meta), contentType: CONTENT_TYPE.bare };
  }
  const obj: Record<string, unknown> = { group: err.group, code: err.code, message: err.message };
  if (hasMeta) obj.metadata = err.metadata;
  if (encoding === "cbor") {
    try {
      return { body: cborEncodeValue(obj), contentType: CONTENT_TYPE.cbor };
    } catch {
      delete obj.metadata;
      return { body: cborEncodeValue(obj), contentType: CONTENT_TYPE.cbor };
    }
  }
  try {
    return { body: jsonStringifyCompat(obj), contentType: CONTENT_TYPE.json };
  } catch {
    delete obj.metadata;
    return { body: JSON.stringify(obj), contentType: CONTENT_TYPE.json };
  }
}

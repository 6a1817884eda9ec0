/**
 * The one place an error becomes an HTTP response body: `{group, code, message, metadata?}`
 * in the request's encoding. Status per DECISIONS.md A: 400 for user / validation errors,
 * 404 `route.not_found`, 401 `auth.unauthorized`, 403 `auth.forbidden_origin` /
 * `auth.forbidden_host`, 413 body too large, 500 `internal.error`
 * with a generic message (the detail goes to the daemon log only).
 */
import { AgentError } from "../../shared/errors.js";
import { encodeResponseError } from "./bare.js";
import { CONTENT_TYPE, cborEncodeValue, jsonStringifyCompat, type Encoding } from "./encoding.js";

export interface HttpErrorBody {
  status: number;
  group: string;
  code: string;
  message: string;
  metadata?: unknown;
  /** True when the error was unexpected (log it with its detail). */
  internal: boolean;
}

const STATUS_BY_CODE: Record<string, number> = {
  "route.not_found": 404,
  "auth.unauthorized": 401,
  "auth.forbidden_origin": 403,
  "auth.forbidden_host": 403,
  "request.body_too_large": 413,
  "handler.request_not_defined": 404,
};

const GENERIC_MESSAGE = "An internal error occurred. The details are in the daemon log.";

/** Classifies anything thrown by a handler or by the runtime. */
export function classifyError(error: unknown): HttpErrorBody {
  if (error instanceof AgentError) {
    if (!error.expected || error.group === "internal") {
      return { status: 500, group: "internal", code: "error", message: GENERIC_MESSAGE, internal: true };
    }
    const at = error.code.indexOf(".");
    const group = at < 0 ? "user" : error.code.slice(0, at);
    const code = at < 0 ? error.code : error.code.slice(at + 1);
    return { status: STATUS_BY_CODE[error.code] ?? 400, group, code, message: error.message, metadata: error.metadata, internal: false };
  }
  // A user error thrown by actor code without importing anything: `public: true`.
  if (error && typeof error === "object" && (error as { public?: unknown }).public === true) {
    const e = error as { message?: unknown; code?: unknown; metadata?: unknown };
    return {
      status: 400,
      group: "user",
      code: typeof e.code === "string" && e.code ? e.code : "user_error",
      message: typeof e.message === "string" ? e.message : "user error",
      metadata: e.metadata,
      internal: false,
    };
  }
  return { status: 500, group: "internal", code: "error", message: GENERIC_MESSAGE, internal: true };
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

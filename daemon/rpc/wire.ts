import type { ContentTypeEncoder, Message } from "vscode-jsonrpc";
import { RpcErrorCodes, type SerializedError } from "../../shared/errors.js";

/** Longest text an error reply repeats from its input (a key, a method name, a path). */
export const MAX_ECHO_CHARS = 512;
const MAX_MESSAGE_CHARS = 2048;
const MAX_ID_CHARS = 256;

/** `s` cut to `max` characters, saying how much was left out. */
export function truncate(s: string, max = MAX_ECHO_CHARS): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more characters)`;
}

/** A copy of `value` whose strings, arrays and nesting are cut down: error metadata echoes input. */
export function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return truncate(value);
  if (value === null || typeof value !== "object") return typeof value === "bigint" ? String(value) : value;
  if (depth >= 6) return "…";
  if (Array.isArray(value)) {
    const items = value.slice(0, 50).map((v) => bounded(v, depth + 1));
    return value.length > 50 ? [...items, `… (${value.length - 50} more)`] : items;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const [k, v] of Object.entries(value)) {
    if (n++ === 50) {
      out["…"] = "more keys left out";
      break;
    }
    out[truncate(k, 128)] = bounded(v, depth + 1);
  }
  return out;
}

/** An error's wire form with its message and metadata bounded. */
export function boundedError(e: SerializedError): SerializedError {
  return { code: e.code, message: truncate(e.message, MAX_MESSAGE_CHARS), ...(e.metadata ? { metadata: bounded(e.metadata) as Record<string, unknown> } : {}) };
}

/** A JSON-RPC error response; `data` carries the stable `group.code`. */
export function errorResponse(id: string | number | null, rpcCode: number, error: SerializedError): Message {
  const e = boundedError(error);
  return { jsonrpc: "2.0", id, error: { code: rpcCode, message: e.message, data: e } } as Message;
}

/**
 * Why a decoded message is not one the daemon can serve, or null when it is. vscode-jsonrpc
 * drops such messages silently; JSON-RPC wants an Invalid Request answer.
 */
export function invalidMessage(msg: unknown): { id: string | number | null; message: string } | null {
  if (Array.isArray(msg)) return { id: null, message: "batch requests are not supported: send one request per message" };
  if (msg === null || typeof msg !== "object") return { id: null, message: "a message must be a JSON-RPC request object" };
  const m = msg as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
  // Every answer repeats the id, so a long one is refused rather than echoed.
  if (typeof m.id === "string" && m.id.length > MAX_ID_CHARS) return { id: null, message: `a request id must be at most ${MAX_ID_CHARS} characters` };
  const id = typeof m.id === "string" || typeof m.id === "number" ? m.id : null;
  if (typeof m.method === "string") {
    return m.id === undefined || id !== null ? null : { id: null, message: "a request id must be a string or a number" };
  }
  // A response to a request of ours: the library ignores strays.
  if ("result" in m || "error" in m) return null;
  return { id, message: "a request needs a method name" };
}

/**
 * JSON for the writer. A result JSON cannot hold (a BigInt, a cycle) becomes an error response
 * with a stable code instead of a serializer message, and the call still gets its answer.
 */
export function jsonEncoder(onUnserializable: (msg: Message, error: unknown) => void): ContentTypeEncoder {
  return {
    name: "application/json",
    encode: async (msg: Message, options: { charset: BufferEncoding }) => {
      try {
        return Buffer.from(JSON.stringify(msg), options.charset);
      } catch (error) {
        onUnserializable(msg, error);
        const id = (msg as { id?: unknown }).id;
        if (typeof id !== "string" && typeof id !== "number") throw error; // a notification: dropped
        const message = "the call's result cannot be sent as JSON (it holds a BigInt, a cycle or the like); details in the daemon log";
        return Buffer.from(JSON.stringify(errorResponse(id, RpcErrorCodes.InternalError, { code: "rpc.unserializable_result", message })), options.charset);
      }
    },
  };
}

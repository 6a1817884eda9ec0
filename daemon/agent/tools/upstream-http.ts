/**
 * HTTP to the vendors behind the network tools (video_generate, x_search): JSON calls whose
 * failures name the vendor's status and message, a 429 failing at once (no retry loop: the
 * vendor said how long to wait, and the model can tell the user), and downloads streamed to disk.
 */
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ToolFailure } from "../../../shared/errors.js";

/** The vendor's own words from an error body: `{error: {message}}`, `{error: "..."}`, `{detail}`, `{message}` or the text. */
export function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, any>;
    const m = body?.error?.message ?? body?.error ?? body?.detail ?? body?.message;
    if (typeof m === "string" && m) return m;
    if (m !== undefined) return JSON.stringify(m);
  } catch {}
  return text.trim().slice(0, 500) || "(no message)";
}

/** A ToolFailure for an upstream answer that is not a success. */
export function upstreamFailure(what: string, status: number, text: string): ToolFailure {
  const message = upstreamMessage(text);
  if (status === 429) return new ToolFailure("rate_limited", `${what}: rate limited (429): ${message}`);
  return new ToolFailure("upstream_error", `${what}: HTTP ${status}: ${message}`);
}

export interface JsonCall {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  signal: AbortSignal;
  /** What the failure says the call was ("the video queue"). */
  what: string;
}

/** One JSON request; throws a ToolFailure for a failed answer, an unreachable vendor or an aborted call. */
export async function jsonCall<T = any>(url: string, call: JsonCall): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: call.method ?? (call.body === undefined ? "GET" : "POST"),
      headers: { accept: "application/json", ...(call.body === undefined ? {} : { "content-type": "application/json" }), ...call.headers },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: call.signal,
    });
  } catch (error) {
    if (call.signal.aborted) throw call.signal.reason ?? error;
    throw new ToolFailure(
      "upstream_unreachable",
      `${call.what}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`,
    );
  }
  const text = await res.text();
  if (!res.ok) throw upstreamFailure(call.what, res.status, text);
  try {
    return (text ? JSON.parse(text) : {}) as T;
  } catch {
    throw new ToolFailure("upstream_error", `${call.what}: the answer is not JSON: ${text.slice(0, 200)}`);
  }
}

/** Stream `url` into `path` (through a temporary name, so a cut download leaves nothing); returns the size. */
export async function download(url: string, path: string, signal: AbortSignal, what: string, maxBytes = Number.POSITIVE_INFINITY): Promise<number> {
  const res = await fetch(url, { signal }).catch((error) => {
    if (signal.aborted) throw signal.reason ?? error;
    throw new ToolFailure("upstream_unreachable", `${what}: ${(error as Error).message}`);
  });
  if (!res.ok || !res.body) throw upstreamFailure(what, res.status, await res.text().catch(() => ""));
  const tooLarge = () => new ToolFailure("upstream_error", `${what}: larger than ${maxBytes} bytes; not saved`);
  if (Number(res.headers.get("content-length") ?? 0) > maxBytes) {
    await res.body.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const part = `${path}.part`;
  let size = 0;
  const body = Readable.fromWeb(res.body as never);
  // A body past the limit (a runaway or hostile backend) ends the download before the disk fills.
  body.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) body.destroy(tooLarge());
  });
  try {
    await pipeline(body, createWriteStream(part, { mode: 0o644 }), { signal });
    await rename(part, path);
  } catch (error) {
    await rm(part, { force: true });
    throw error;
  }
  return size;
}

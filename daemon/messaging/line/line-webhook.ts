/**
 * The LINE webhook receiver and the routes under `/line/`:
 *
 *   POST /line/webhook                  inbound events (signed by LINE)
 *   GET  /line/media/<token>/<filename> media the agent sends (line-media.ts)
 *
 * The signature is the webhook's authentication: `x-line-signature` must be the base64
 * HMAC-SHA256 of the raw body under the channel secret, checked in constant time by the SDK's
 * own `validateSignature`. A missing signature is answered 401 before the body is read; a bad
 * one 401 before the body is parsed or anything else runs. Bodies are limited to 1 MiB (413).
 * The answer (200) is given only after every event of the body was handed on and stored.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { validateSignature } from "@line/bot-sdk";
import { AgentError } from "../../../shared/errors.js";
import { readBody } from "../../http/request-body.js";
import { MEDIA_PREFIX, type LineMedia } from "./line-media.js";

export const WEBHOOK_PATH = "/line/webhook";
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** The part of a LINE webhook event the adapter reads. */
export interface LineWebhookEvent {
  type: string;
  webhookEventId?: string;
  timestamp?: number;
  replyToken?: string;
  mode?: string;
  source?: { type: "user" | "group" | "room"; userId?: string; groupId?: string; roomId?: string };
  message?: { id: string; type: string; text?: string };
  postback?: { data: string };
  deliveryContext?: { isRedelivery?: boolean };
}

export interface LineRoutesOptions {
  channelSecret: string;
  media: LineMedia;
  /** Handles the events of one verified body; the 200 is sent when it resolves. */
  onEvents(events: LineWebhookEvent[]): Promise<void>;
  /** A refused request, for the log (never the body or the signature). */
  onRefused?(reason: string, status: number): void;
}

function answer(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...extra });
  res.end(text);
}

/** The handler for every path under `/line/` (own listener or mounted open on the gateway). */
export function lineRoutes(options: LineRoutesOptions): (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void> {
  return async (req, res, path) => {
    if (path.startsWith(MEDIA_PREFIX)) return options.media.serve(req, res, path);
    if (path !== WEBHOOK_PATH) return answer(res, 404, { error: { code: "route.not_found", message: "not found" } });
    if (req.method !== "POST") return answer(res, 405, { error: { code: "request.invalid", message: "POST only" } }, { allow: "POST" });
    const signature = req.headers["x-line-signature"];
    if (typeof signature !== "string" || signature.length === 0) {
      options.onRefused?.("missing signature", 401);
      req.resume();
      return answer(res, 401, { error: { code: "line.bad_signature", message: "missing x-line-signature" } });
    }
    let body: Buffer;
    try {
      body = await readBody(req, MAX_WEBHOOK_BODY_BYTES);
    } catch (error) {
      const code = error instanceof AgentError ? error.code : "request.aborted";
      const status = code === "request.body_too_large" ? 413 : 400;
      options.onRefused?.(code, status);
      return answer(res, status, { error: { code, message: status === 413 ? `body over ${MAX_WEBHOOK_BODY_BYTES} bytes` : "body could not be read" } });
    }
    if (!validateSignature(body, options.channelSecret, signature)) {
      options.onRefused?.("bad signature", 401);
      return answer(res, 401, { error: { code: "line.bad_signature", message: "signature does not match the body" } });
    }
    let events: LineWebhookEvent[];
    try {
      const parsed = JSON.parse(body.toString("utf8")) as { events?: unknown };
      events = Array.isArray(parsed?.events) ? (parsed.events as LineWebhookEvent[]) : [];
    } catch {
      return answer(res, 400, { error: { code: "request.invalid", message: "the body is not JSON" } });
    }
    await options.onEvents(events.filter((e) => e && typeof e === "object" && typeof e.type === "string"));
    answer(res, 200, {});
  };
}

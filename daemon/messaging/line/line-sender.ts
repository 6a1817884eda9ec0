/**
 * Sending to LINE through the official SDK's MessagingApiClient: at most 5 messages per reply or
 * push call and at most 4,500 characters per text bubble (LINE's own limit is 5,000; the margin
 * keeps a bubble readable and under the limit after any conversion). A reply token is used once,
 * for the first call; a reply token that expired (LINE answers 400 "Invalid reply token", or it
 * is older than LINE keeps them) falls back to a push to the same chat.
 */
import { randomUUID } from "node:crypto";
import type { messagingApi } from "@line/bot-sdk";
import type { Clock } from "../../../shared/clock.js";
import { AgentError } from "../../../shared/errors.js";
import { splitText } from "../split.js";

export const MAX_MESSAGES_PER_CALL = 5;
export const MAX_TEXT_CHARS = 4500;
/** LINE documents reply tokens as short-lived (about a minute); older ones are not tried. */
export const REPLY_TOKEN_TTL_MS = 50_000;

export type LineMessage = messagingApi.Message;

/** Where a reply goes: the chat (user, group or room id) and, when fresh, the inbound event's reply token. */
export interface LineTarget {
  to: string;
  replyToken?: string;
  /** When the reply token was received (clock ms). */
  replyTokenAt?: number;
}

export interface SendReport {
  calls: Array<{ kind: "reply" | "push"; count: number }>;
  /** The reply token had expired (or the reply failed) and the messages went by push instead. */
  fellBack: boolean;
  /** Why the reply failed, when it was not an expired token. */
  replyError?: string;
}

/** Text bubbles for `text`, each within the limit. */
export function textMessages(text: string): LineMessage[] {
  return splitText(text, MAX_TEXT_CHARS).map((t) => ({ type: "text", text: t }) as LineMessage);
}

function isExpiredReplyToken(error: unknown): boolean {
  const e = error as { status?: number; body?: string } | null;
  return e?.status === 400 && typeof e.body === "string" && /reply token/i.test(e.body);
}

/** Runs one API call, retrying transient failures (the layer's `ctx.retry`); default: once. */
export type CallWrapper = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

export class LineSender {
  constructor(
    private readonly client: messagingApi.MessagingApiClient,
    private readonly clock: Clock,
    private readonly call: CallWrapper = (_what, fn) => fn(),
  ) {}

  /** Sends every message, in order, in calls of at most 5. */
  async send(target: LineTarget, messages: LineMessage[]): Promise<SendReport> {
    const report: SendReport = { calls: [], fellBack: false };
    let replyToken = target.replyToken;
    if (replyToken && target.replyTokenAt !== undefined && this.clock.now() - target.replyTokenAt > REPLY_TOKEN_TTL_MS) {
      replyToken = undefined;
      report.fellBack = true;
    }
    for (let i = 0; i < messages.length; i += MAX_MESSAGES_PER_CALL) {
      const batch = messages.slice(i, i + MAX_MESSAGES_PER_CALL);
      if (replyToken) {
        const token = replyToken;
        replyToken = undefined; // a reply token answers one call
        try {
          // Not retried: a reply token answers one call, a second try would be refused.
          await this.client.replyMessage({ replyToken: token, messages: batch });
          report.calls.push({ kind: "reply", count: batch.length });
          continue;
        } catch (error) {
          // Expired (the usual case), or any other failure of the reply: the answer is not lost,
          // it goes by push (which carries a retry key, so LINE never sends it twice).
          report.fellBack = true;
          if (!isExpiredReplyToken(error)) report.replyError = apiError("reply", error).message;
        }
      }
      try {
        // One retry key for every attempt of this push: LINE sends it once even if a retry follows a lost answer.
        const retryKey = randomUUID();
        await this.call("push", async () => {
          try {
            return await this.client.pushMessage({ to: target.to, messages: batch }, retryKey);
          } catch (error) {
            // A 4xx other than 429 will not change on a retry: the layer's retry gives up at once.
            const status = (error as { status?: number }).status;
            if (typeof status === "number" && status >= 400 && status < 500 && status !== 429) Object.assign(error as object, { permanent: true });
            throw error;
          }
        });
      } catch (error) {
        throw apiError("push", error);
      }
      report.calls.push({ kind: "push", count: batch.length });
    }
    return report;
  }
}

function apiError(call: string, error: unknown): AgentError {
  const e = error as { status?: number; body?: string; message?: string };
  const detail = typeof e?.body === "string" ? e.body.slice(0, 300) : (e?.message ?? String(error));
  return new AgentError("line.api_error", `LINE ${call} failed${e?.status ? ` (HTTP ${e.status})` : ""}: ${detail}`, {
    call,
    ...(e?.status ? { status: e.status } : {}),
  });
}

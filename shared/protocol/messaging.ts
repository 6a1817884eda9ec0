import { z } from "zod";
import { rpc } from "./define.js";

/** One messaging adapter (a platform for a profile) as `agent channels status` shows it. */
export interface ChannelInfo {
  platform: string;
  profile: string;
  state: "starting" | "running" | "retrying" | "stopped" | "error" | "refused";
  detail: string | null;
  lastError: string | null;
  lastErrorAt: number | null;
  counts: { inbound: number; outbound: number; refused: number; errors: number };
  /** Chats with a session, and messages waiting for a turn. */
  chats: number;
  queued: number;
  allowAll: boolean;
  limits: { maxTextChars: number; maxMessagesPerCall?: number };
}

const platform = z.string().regex(/^[a-z][a-z0-9_]{0,31}$/);
const chat = z.string().min(1).max(200);

/** The messaging channel layer (docs/messaging.md). */
export const messagingMethods = {
  /** Every adapter of the daemon (all profiles). */
  "channels.list": rpc<{ channels: ChannelInfo[] }>()(() => z.object({}).strict()),
  "channels.status": rpc<{ channels: ChannelInfo[]; pendingInbound: number }>()(() => z.object({}).strict()),
  /** Send a test message to a chat through the connection's profile's adapter (or the first). */
  "channels.test": rpc<{ status: "delivered" | "failed" | "not_deliverable"; detail: string }>()(() =>
    z.object({ platform, chat, text: z.string().max(4000).optional() }).strict(),
  ),
  /** Add (allow) or remove (deny) a user or group id in the connection's profile's allowlist. */
  "channels.allow": rpc<{ platform: string; list: string; ids: string[]; file: string }>()(() =>
    z.object({ platform, id: chat, group: z.boolean().optional() }).strict(),
  ),
  "channels.deny": rpc<{ platform: string; list: string; ids: string[]; file: string }>()(() =>
    z.object({ platform, id: chat, group: z.boolean().optional() }).strict(),
  ),
  /** Move a session to a chat: the next message there continues it (`/handoff <platform> [chat]`). */
  "channels.handoff": rpc<{ platform: string; profile: string; chatId: string }>()(() =>
    z.object({ sessionId: z.string().min(1).max(128), platform, chat: chat.optional() }).strict(),
  ),
};

import type { ChannelInfo } from "../../shared/protocol/messaging.js";

/** Where a delivery went (cron records it on the run). */
export interface DeliveryOutcome {
  status: "delivered" | "failed" | "not_deliverable";
  detail: string;
}

/**
 * What the messaging feature offers other features through the service registry
 * (`services.get("messaging")`): cron delivers a run's output to a chat, the CLI and TUI hand
 * a session to a chat. MessagingService (daemon/messaging/messaging-service.ts) implements it.
 */
export interface MessagingApi {
  /**
   * Send `text` (Markdown) to `<platform>:<chat>` through the adapter of `profile` on that
   * platform (or, when that profile has none, the first one configured). Never throws.
   */
  deliver(target: string, text: string, opts?: { profile?: string; images?: string[] }): Promise<DeliveryOutcome>;
  /** Move a session to a chat: the next message there continues it. `chat` defaults to the platform's last active chat. */
  handoff(sessionId: string, platform: string, chat?: string): Promise<{ platform: string; profile: string; chatId: string }>;
  /** Every adapter with its state. */
  channels(): ChannelInfo[];
}

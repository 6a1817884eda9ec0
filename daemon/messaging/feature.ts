import { AgentError } from "../../shared/errors.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { MessagingService } from "./messaging-service.js";

/**
 * Messaging (docs/messaging.md): the channel layer and its platform adapters, one per
 * configured platform and profile. Starts last: its turns go through the chat service, its
 * deliveries come from cron and kanban.
 */
export function messagingFeature(): Feature {
  let service: MessagingService | null = null;
  return {
    name: "messaging",
    provides: ["messaging"],
    needs: { start: ["chat", "profiles"], serve: ["kanban", "httpPlugins"] },
    async start(ctx: DaemonContext) {
      const m = new MessagingService(ctx);
      await m.start();
      service = m;
      ctx.services.provide("messaging", m);
      ctx.rpc.register(handlers(m));
      ctx.components.set("messaging", { status: "ok", detail: "adapters start once the daemon is ready (agent channels status)" });
    },
    ready() {
      service?.ready();
    },
    async stop() {
      await service?.stop();
    },
  };
}

function handlers(m: MessagingService): Partial<Handlers> {
  return {
    "channels.list": () => ({ channels: m.channels() }),
    "channels.status": () => ({ channels: m.channels(), pendingInbound: m.pendingInbound }),
    "channels.test": async ({ platform, chat, text }, call) => {
      const r = await m.deliver(`${platform}:${chat}`, text ?? "Test message from agent: this chat is reachable.", { profile: call.profile });
      if (r.status !== "delivered")
        throw new AgentError(r.status === "not_deliverable" ? "messaging.no_adapter" : "messaging.platform_error", r.detail, { platform });
      return r;
    },
    "channels.allow": ({ platform, id, group }, call) => m.editAccess(call.profile, platform, id, group === true, true),
    "channels.deny": ({ platform, id, group }, call) => m.editAccess(call.profile, platform, id, group === true, false),
    "channels.handoff": ({ sessionId, platform, chat }) => m.handoff(sessionId, platform, chat),
  };
}

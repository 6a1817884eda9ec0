import { AgentError } from "../../shared/errors.js";
import { chatTopic } from "../../shared/protocol/chat.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { ApprovalService } from "./approval-service.js";

/** The approval service (docs/approvals.md): provided as `approvals`, answered over the `approvals.*` RPC group. */
export function approvalsFeature(): Feature {
  let service: ApprovalService | null = null;
  return {
    name: "approvals",
    provides: ["approvals"],
    needs: { serve: ["profiles", "chat"] },
    async start(ctx: DaemonContext) {
      const approvals = new ApprovalService({
        home: ctx.home,
        configFor: async (profile) => (profile === "default" ? ctx.config : ctx.services.get("profiles").config(profile)),
        log: ctx.log,
      });
      service = approvals;
      ctx.services.provide("approvals", approvals);
      ctx.rpc.register(handlers(ctx, approvals));
    },
    async stop() {
      service?.stop();
    },
  };
}

function handlers(ctx: DaemonContext, approvals: ApprovalService): Partial<Handlers> {
  const session = (sessionId: string) => {
    const s = ctx.services.get("chat").find(sessionId);
    if (!s) throw new AgentError("chat.session_not_found", `no session ${sessionId}`, { sessionId });
    return s;
  };
  return {
    "approvals.answer": async ({ id, choice, reason }) => ({ ok: true, id, ...(await approvals.answer(id, choice, reason)) }),
    "approvals.pending": ({ sessionId }) => ({ approvals: approvals.pending(sessionId) }),
    "approvals.request": ({ sessionId, workspace, ...ask }, call) => {
      session(sessionId);
      // A worker's turn has no client to ask: the non-interactive rules apply.
      return approvals.decide(ask, {
        sessionId,
        turnId: null,
        profile: call.profile,
        workspace,
        interactive: () => false,
        emit: (event) => ctx.rpc.broadcast(chatTopic(sessionId), event),
        signal: call.signal,
      });
    },
    "approvals.list": async (_p, call) => ({ profile: call.profile, approvals: await approvals.remembered(call.profile) }),
    "approvals.revoke": async (p, call) => ({ profile: call.profile, removed: await approvals.revoke(call.profile, p) }),
    "approvals.elicitation.answer": ({ id, action, content }) => {
      approvals.answerElicitation(id, action, content);
      return { ok: true, id, action };
    },
    "approvals.elicitation.pending": ({ sessionId }) => ({ elicitations: approvals.pendingElicitations(sessionId) }),
    "approvals.yolo": ({ sessionId, on }) => {
      session(sessionId);
      approvals.setYolo(sessionId, on);
      return { ok: true, sessionId, yolo: on };
    },
  };
}

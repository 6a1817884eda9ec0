import type { StoredMessage } from "../../shared/protocol/chat.js";
import type { DaemonClient } from "../../shared/client/index.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";

/**
 * Kanban workers (`AGENT_KANBAN_TASK` set) run the loop in their own process; the transcript
 * still goes through the daemon. This is the one place the CLI loads daemon code, on purpose:
 * the loop must run here, not in the daemon.
 */
export async function runInProcess(
  client: DaemonClient,
  p: { prompt: string; images: string[]; sessionId?: string; maxTurns?: number; provider?: string; profile?: string; json: boolean; home: string },
): Promise<number> {
  const { runTurnInProcess } = await import("../../daemon/agent/in-process.js");
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on("SIGINT", onSigint);
  try {
    const result = await runTurnInProcess(
      { home: p.home, prompt: p.prompt, images: p.images, sessionId: p.sessionId, maxTurns: p.maxTurns, provider: p.provider, profile: p.profile, cwd: process.cwd(), signal: controller.signal },
      {
        create: async (input) => (await client.call("chat.sessions.create", input)).session.id,
        read: async (sessionId) => (await client.call("chat.sessions.get", { sessionId })).messages,
        append: async (sessionId, messages: StoredMessage[], usage) => {
          await client.call("chat.sessions.append", { sessionId, messages: messages as never, ...(usage ? { usage } : {}) });
        },
      },
    );
    printResult(result, p.json, (r) => r.answer);
    return result.stopReason === "done" ? EXIT.ok : result.stopReason === "interrupted" ? EXIT.interrupted : EXIT.failure;
  } finally {
    process.off("SIGINT", onSigint);
  }
}

import type { ApprovalAsk, ApprovalDecision } from "../../shared/protocol/approvals.js";
import type { ChatEvent, StoredMessage, TokenUsage } from "../../shared/protocol/chat.js";
import type { Clock, ClockTimer } from "../../shared/clock.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { terminalText } from "../../shared/terminal-text.js";
import type { TurnOutcome } from "../agent/api.js";
import { type AppServerClient, UnknownServerRequest } from "./app-server-client.js";
import { projectItem } from "./projection.js";
import type { ThreadItem } from "./protocol/v2/ThreadItem.js";

/** What a turn needs of the session's app-server (coder-service.ts keeps one per session). */
export interface CoderServerHandle {
  /** The running server and its thread (started, initialized and thread/start-ed on first use; replaced when dead). */
  ready(): Promise<{ client: AppServerClient; threadId: string }>;
  /** Kill it: the next turn starts a fresh one (a hang, a crash). */
  discard(why: string): Promise<void>;
}

export interface CoderTurnDeps {
  server: CoderServerHandle;
  clock: Clock;
  /** Whole-turn limit (coder_runtime.turn_timeout). */
  turnTimeoutMs: number;
  /** No line from the server for this long, with no question waiting on a person: it hangs. */
  silenceMs: number;
  append(messages: StoredMessage[]): Promise<void>;
  emit(event: ChatEvent): void;
  /** The one approval service, with the session's ask context (the interactive callback). */
  approve(ask: ApprovalAsk, signal: AbortSignal): Promise<ApprovalDecision>;
  /** True when a person can answer; false in `chat -q`, cron and kanban workers. */
  interactive(): boolean;
  /** coder_runtime.auto_approve: non-interactive contexts accept instead of deny. */
  autoApprove: boolean;
  /** True when the daemon is shutting down: a turn cut by it is left to be run again, not reported as failed. */
  stopping?: () => boolean;
}

export interface CoderTurnInput {
  sessionId: string;
  turnId: string;
  prompt: string;
  /** Images attached to the prompt (paths), sent as localImage inputs. */
  images?: string[];
  cwd: string;
  signal: AbortSignal;
}

/** The name our own tool server (`agent mcp serve`) is registered under in the managed block; its elicitations are accepted. */
export const OWN_SERVER_NAME = "agent";

/** Said with every failure: how to go back to the default runtime. */
export const SWITCH_BACK_HINT = "switch back to the default runtime with /coder-runtime auto";

/** once → accept; session/always → acceptForSession; deny or anything else → decline. */
export function mapDecision(decision: ApprovalDecision): "accept" | "acceptForSession" | "decline" {
  if (!decision.allowed) return "decline";
  if (decision.choice === "session" || decision.choice === "always") return "acceptForSession";
  if (decision.choice === "once" || decision.choice === null) return "accept";
  return "decline";
}

/**
 * One turn handed to the session's app-server: `turn/start`, then its notifications until
 * `turn/completed`. Completed items become session messages as they complete; deltas are
 * emitted for the screen only. Approvals go to the approval service; an interrupt sends
 * `turn/interrupt`. A timeout, a hang (silence), a crash or a protocol error ends the turn with
 * what it produced so far and the hint to switch back; a hung or dead server is replaced next turn.
 */
export async function runCoderTurn(input: CoderTurnInput, deps: CoderTurnDeps): Promise<TurnOutcome> {
  const { sessionId, turnId } = input;
  const usage: TokenUsage = { prompt: 0, completion: 0, total: 0 };
  let answer = "";
  let toolCalls = 0;
  let modelCalls = 0;
  let asking = 0;
  let appendChain: Promise<void> = Promise.resolve();
  const emitNotice = (message: string) => deps.emit({ type: "notice", sessionId, turnId, message });

  let client: AppServerClient;
  let threadId: string;
  try {
    ({ client, threadId } = await deps.server.ready());
  } catch (error) {
    throw new AgentError("coder.unavailable", `the coder runtime could not start: ${toAgentError(error).message}; ${SWITCH_BACK_HINT}`);
  }

  let serverTurnId: string | null = null;
  let finish!: (how: { kind: "completed"; status: string; error: string | null } | { kind: "failed"; error: AgentError; discard: boolean }) => void;
  const finished = new Promise<Parameters<typeof finish>[0]>((resolve) => {
    finish = resolve;
  });

  const onItem = (item: ThreadItem) => {
    const p = projectItem(item, input.prompt);
    if (p.text !== null) answer = p.text;
    if (p.tool) {
      toolCalls += 1;
      deps.emit({ type: "tool_call", sessionId, turnId, id: p.tool.id, name: p.tool.name, args: p.tool.args });
      deps.emit({
        type: "tool_result",
        sessionId,
        turnId,
        id: p.tool.id,
        name: p.tool.name,
        ok: p.tool.ok,
        durationMs: 0,
        preview: terminalText(p.tool.preview),
      });
    }
    if (p.messages.length) {
      const at = deps.clock.now();
      for (const m of p.messages) {
        m.at = at;
        m.turnId = turnId;
      }
      appendChain = appendChain.then(() => deps.append(p.messages));
    }
  };

  const ours = (params: any) => params && (params.threadId === undefined || params.threadId === threadId);
  client.onNotification = (method, params) => {
    if (!ours(params)) return;
    switch (method) {
      case "item/agentMessage/delta":
        if (typeof params.delta === "string") deps.emit({ type: "text", sessionId, turnId, delta: terminalText(params.delta) });
        break;
      case "item/completed":
        if (params.item) onItem(params.item as ThreadItem);
        break;
      case "thread/tokenUsage/updated": {
        const last = params.tokenUsage?.last;
        if (last) {
          modelCalls += 1;
          usage.prompt += last.inputTokens ?? 0;
          usage.completion += last.outputTokens ?? 0;
          usage.total += last.totalTokens ?? 0;
        }
        break;
      }
      case "turn/completed": {
        const turn = params.turn ?? {};
        if (serverTurnId === null || turn.id === serverTurnId)
          finish({ kind: "completed", status: String(turn.status ?? "completed"), error: turn.error?.message ?? null });
        break;
      }
      case "error":
        if (params.willRetry === false && params.error?.message) emitNotice(`coder runtime: ${terminalText(String(params.error.message))}`);
        break;
    }
  };
  const askSignal = new AbortController();
  client.onRequest = async (method, params) => {
    const ask = async (what: ApprovalAsk) => {
      if (!deps.interactive() && deps.autoApprove) return "accept" as const;
      asking += 1;
      try {
        return mapDecision(await deps.approve(what, AbortSignal.any([askSignal.signal, input.signal])));
      } catch {
        return "decline" as const; // interrupted or failed: never run unasked
      } finally {
        asking -= 1;
      }
    };
    switch (method) {
      case "item/commandExecution/requestApproval": {
        const command = String(params.command ?? "");
        const decision = await ask({ kind: "command", tool: "terminal", summary: command, details: { command, cwd: String(params.cwd ?? input.cwd) } });
        return { decision };
      }
      case "item/fileChange/requestApproval": {
        const changes = pendingChanges.get(String(params.itemId)) ?? [];
        const path = changes.map((c) => c.path).join(", ") || String(params.grantRoot ?? input.cwd);
        const diff = changes.map((c) => `--- ${c.path}\n${c.diff}`).join("\n");
        const decision = await ask({ kind: "file_write", tool: "patch", summary: `edit ${path}`, details: { path: changes[0]?.path ?? path, diff } });
        return { decision };
      }
      case "item/permissions/requestApproval":
        // Escalation is never granted from here.
        return { permissions: {}, scope: "turn" };
      case "mcpServer/elicitation/request":
        if (params.serverName === OWN_SERVER_NAME) return { action: "accept", content: {}, _meta: null };
        return { action: "decline", content: null, _meta: null };
      default:
        throw new UnknownServerRequest(method);
    }
  };
  // The diff of a file change is on its item (item/started), not on the approval request.
  const pendingChanges = new Map<string, Array<{ path: string; diff: string }>>();
  const baseNotification = client.onNotification;
  client.onNotification = (method, params) => {
    if (method === "item/started" && params?.item?.type === "fileChange") pendingChanges.set(String(params.item.id), params.item.changes ?? []);
    baseNotification(method, params);
  };
  client.onExit = () =>
    finish({
      kind: "failed",
      error: new AgentError(
        "coder.server_died",
        `the coder app-server exited mid-turn: ${client.stderrTail.trim().split("\n").slice(-2).join(" | ") || "no message"}`,
      ),
      discard: true,
    });

  // Time: a whole-turn limit, and a watchdog on silence (not while a person is being asked).
  const started = deps.clock.now();
  let timer: ClockTimer | null = null;
  const watch = () => {
    const now = deps.clock.now();
    if (now - started >= deps.turnTimeoutMs) {
      finish({
        kind: "failed",
        error: new AgentError("coder.turn_timeout", `the coder turn took longer than ${Math.round(deps.turnTimeoutMs / 1000)} s (coder_runtime.turn_timeout)`),
        discard: false,
      });
      return;
    }
    if (asking === 0 && now - Math.max(client.lastHeard, started) >= deps.silenceMs) {
      finish({
        kind: "failed",
        error: new AgentError("coder.server_hung", `the coder app-server said nothing for ${Math.round(deps.silenceMs / 1000)} s`),
        discard: true,
      });
      return;
    }
    if (asking > 0) client.lastHeard = now; // waiting on a person is not silence
    timer = deps.clock.setTimeout(watch, Math.max(50, Math.min(1000, deps.silenceMs / 4)));
    timer.unref();
  };
  watch();
  // Ctrl-C or /stop: turn/interrupt, then the server's own turn/completed (briefly awaited) ends it.
  let interruptTimer: ClockTimer | null = null;
  const onAbort = () => {
    interruptTimer = deps.clock.setTimeout(() => finish({ kind: "completed", status: "interrupted", error: null }), 3000);
    if (serverTurnId && client.alive) client.request("turn/interrupt", { threadId, turnId: serverTurnId }).catch(() => undefined);
    else finish({ kind: "completed", status: "interrupted", error: null });
  };
  input.signal.addEventListener("abort", onAbort, { once: true });

  let outcome: Parameters<typeof finish>[0];
  try {
    const started = client
      .request("turn/start", {
        threadId,
        input: [{ type: "text", text: input.prompt, text_elements: [] }, ...(input.images ?? []).map((path) => ({ type: "localImage", path }))],
        cwd: input.cwd,
      })
      .then((r: any) => {
        serverTurnId = r?.turn?.id ?? null;
        if (input.signal.aborted && serverTurnId) client.request("turn/interrupt", { threadId, turnId: serverTurnId }).catch(() => undefined);
      })
      .catch((error) => finish({ kind: "failed", error: toAgentError(error), discard: !client.alive }));
    outcome = await finished;
    await started;
  } finally {
    deps.clock.clearTimeout(timer);
    deps.clock.clearTimeout(interruptTimer);
    input.signal.removeEventListener("abort", onAbort);
    askSignal.abort();
    // Nothing from this turn is taken after its end; a later request is declined.
    client.onNotification = () => undefined;
    client.onRequest = async (method) => {
      throw new UnknownServerRequest(method);
    };
    client.onExit = null;
  }
  let stopReason: TurnOutcome["stopReason"] = "done";
  if ((outcome.kind === "completed" && outcome.status === "interrupted") || input.signal.aborted) stopReason = "interrupted";
  if (deps.stopping?.()) throw new AgentError("daemon.stopping", "the daemon is stopping; the turn runs again when it starts");
  if (outcome.kind === "failed") {
    if (serverTurnId && client.alive && outcome.error.code === "coder.turn_timeout")
      await client.request("turn/interrupt", { threadId, turnId: serverTurnId }).catch(() => undefined);
    if (outcome.discard) await deps.server.discard(outcome.error.message).catch(() => undefined);
  }
  await appendChain;
  if (outcome.kind === "failed" || (outcome.kind === "completed" && outcome.status === "failed")) {
    const why = outcome.kind === "failed" ? outcome.error.message : (outcome.error ?? "the turn failed");
    const note = `[coder runtime failed: ${why}. The partial result is above; ${SWITCH_BACK_HINT}.]`;
    emitNotice(note);
    const partial = answer ? `${answer}\n\n${note}` : note;
    const message: StoredMessage = { role: "assistant", content: note, at: deps.clock.now(), turnId };
    await deps.append([message]);
    answer = partial;
  }
  return { answer, footer: null, stopReason, modelCalls, toolCalls, usage, contextTokens: 0 };
}

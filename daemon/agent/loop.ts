import { AgentError, toAgentError } from "../../shared/errors.js";
import type { ChatEvent, StopReason, StoredMessage, TokenUsage } from "../../shared/protocol/chat.js";
import { cutOffResult, danglingToolCalls, estimateTokens, toWireMessages } from "./model-context.js";
import type { ApprovalAsk, ApprovalDecision } from "../../shared/protocol/approvals.js";
import type { ChatModel, ModelReply, WireTool } from "../models/openai-chat.js";
import type { ContentPart, MultimodalResult, ToolContext, ToolRegistry, ToolResult } from "../tools/types.js";

/**
 * One turn of the agent: model → tool calls → model … until a reply without tool calls,
 * `maxTurns` model calls, or an interrupt. Pure orchestration: where the transcript goes
 * (`append`), how steps are recorded (`step`: a workflow step in the daemon, a plain call in
 * a kanban worker) and where events go (`emit`) are the caller's.
 */
export interface TurnDeps {
  model: ChatModel;
  tools: ToolRegistry | null;
  toolContext: Omit<ToolContext, "signal">;
  /** Records `fn` as a named step (workflow step + span); must return fn's result. */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Persist messages at the end of the transcript. `replayable`: the messages are rebuilt from
   * a recorded step's result when a turn is replayed, so the host may write them lazily.
   */
  append(messages: StoredMessage[], options?: { replayable?: boolean }): Promise<void>;
  emit(event: ChatEvent): void;
  /** Builds the failed-edit footer from the turn's mutations (null: none). */
  footer(mutations: Array<{ path: string; ok: boolean }>): string | null;
  system: string | null;
  /** True when the host is shutting down (not an interrupt): leave the transcript for a replay. */
  stopping?: () => boolean;
  /**
   * Asks the approval service (daemon/approvals/) about a risky call; the call runs only when
   * it is allowed. Absent: no approvals (a host with no tools that need them).
   */
  approve?: (ask: ApprovalAsk, signal: AbortSignal) => Promise<ApprovalDecision>;
}

export interface TurnInput {
  sessionId: string;
  turnId: string;
  /** The transcript so far, ending with this turn's user message (turn-setup.ts builds it). */
  history: StoredMessage[];
  maxTurns: number;
  signal: AbortSignal;
}

export interface TurnOutcome {
  answer: string;
  footer: string | null;
  stopReason: StopReason;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  /** Estimated size of the context sent last. */
  contextTokens: number;
}

const PREVIEW_CHARS = 400;

export async function runTurn(input: TurnInput, deps: TurnDeps): Promise<TurnOutcome> {
  const { sessionId, turnId, signal } = input;
  const history = [...input.history];
  const usage: TokenUsage = { prompt: 0, completion: 0, total: 0 };
  const mutations: Array<{ path: string; ok: boolean }> = [];
  let modelCalls = 0;
  let toolCalls = 0;
  let contextTokens = 0;
  let answer = "";
  const write = async (replayable: boolean, messages: StoredMessage[]) => {
    for (const m of messages) {
      m.at ??= Date.now();
      m.turnId = turnId;
    }
    history.push(...messages);
    await deps.append(messages, replayable ? { replayable } : undefined);
  };
  const push = (...messages: StoredMessage[]) => write(false, messages);
  /** A message made from a step's recorded result. */
  const pushRecorded = (message: StoredMessage) => write(true, [message]);

  const specs = deps.tools?.specs({ ...deps.toolContext, signal }) ?? [];
  const wireTools: WireTool[] = specs.map((s) => ({ type: "function", function: { name: s.name, description: s.description, parameters: s.parameters } }));
  let stopReason: StopReason = "done";

  try {
    for (;;) {
      if (signal.aborted) throw interrupted();
      if (modelCalls >= input.maxTurns) {
        stopReason = "max_turns";
        break;
      }
      modelCalls++;
      const messages = toWireMessages(deps.system, history, { supportsImages: deps.model.provider.supportsImages });
      contextTokens = estimateTokens(messages);
      let partial = "";
      let reply: ModelReply;
      try {
        reply = await deps.step(`model#${modelCalls}`, () =>
          deps.model.complete({
            messages,
            tools: wireTools,
            signal,
            onText: (delta) => {
              partial += delta;
              deps.emit({ type: "text", sessionId, turnId, delta });
            },
            onRetry: (r) => {
              partial = "";
              deps.emit({ type: "retry", sessionId, turnId, ...r });
            },
          }),
        );
      } catch (error) {
        // Keep what the user already saw of an interrupted answer.
        if (signal.aborted && partial && !deps.stopping?.()) await push({ role: "assistant", content: partial, synthetic: true });
        throw error;
      }
      const u = reply.usage ?? { prompt: contextTokens, completion: Math.ceil(reply.content.length / 4), total: 0, estimated: true };
      usage.prompt += u.prompt;
      usage.completion += u.completion;
      usage.total += u.total || u.prompt + u.completion;
      if (u.estimated) usage.estimated = true;

      const assistant: StoredMessage = { role: "assistant", content: reply.content || null };
      if (reply.toolCalls.length) {
        assistant.tool_calls = reply.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
      }
      await pushRecorded(assistant);
      if (!reply.toolCalls.length) {
        answer = reply.content;
        break;
      }

      for (let i = 0; i < reply.toolCalls.length; ) {
        const call = reply.toolCalls[i]!;
        if (signal.aborted && !deps.stopping?.()) {
          // Close every call of this batch that did not run, so the transcript stays valid.
          await push(...reply.toolCalls.slice(i).map((c) => cutOffResult(c.id, c.name, "interrupted by the user before this tool ran")));
          throw interrupted();
        }
        // Consecutive calls to one server that takes calls in parallel run together; every
        // other call runs alone, in call order.
        const key = deps.tools?.parallelKey?.(call.name) ?? null;
        let end = i + 1;
        while (key !== null && end < reply.toolCalls.length && deps.tools?.parallelKey?.(reply.toolCalls[end]!.name) === key) end++;
        const group = reply.toolCalls
          .slice(i, end)
          .map((c, n) => ({ call: c, index: i + n, args: parseArgs(c.arguments), run: null as Promise<ToolResult> | null, denied: null as ToolResult | null }));
        const ctx = { ...deps.toolContext, signal };
        // Each call reports its own progress lines, under its id.
        const withProgress = (id: string, name: string): ToolContext => ({
          ...ctx,
          progress: (text: string) => deps.emit({ type: "tool_progress", sessionId, turnId, id, name, text }),
        });
        for (const g of group) {
          toolCalls++;
          deps.emit({ type: "tool_call", sessionId, turnId, id: g.call.id, name: g.call.name, args: g.args.ok ? g.args.value : g.call.arguments });
          // The approval is its own recorded step: a replayed turn keeps the answer, and a question
          // cut off by a restart is asked again (never granted by the restart).
          const ask = deps.approve && g.args.ok && deps.tools ? await deps.tools.approvalFor(g.call.name, g.args.value, ctx) : null;
          const decision = ask ? await deps.step(`approval#${modelCalls}.${g.index + 1}:${g.call.name}`, () => deps.approve!(ask, signal)) : null;
          if (decision && !decision.allowed) g.denied = deniedResult(decision, ask!);
        }
        // A group's calls start together when the first of them that was not recorded runs (so a
        // replay never runs again a call whose result is recorded).
        const startFrom = (n: number) => {
          for (const g of group.slice(n)) if (!g.denied && !g.run) g.run = runTool(deps.tools, g.call.name, g.args, withProgress(g.call.id, g.call.name));
        };
        for (let n = 0; n < group.length; n++) {
          const g = group[n]!;
          const result =
            g.denied ??
            (await deps.step(`tool#${modelCalls}.${g.index + 1}:${g.call.name}`, () => {
              if (group.length === 1) return runTool(deps.tools, g.call.name, g.args, withProgress(g.call.id, g.call.name));
              startFrom(n);
              return g.run!;
            }));
          if (result.mutation) mutations.push(result.mutation);
          deps.emit({
            type: "tool_result",
            sessionId,
            turnId,
            id: g.call.id,
            name: g.call.name,
            ok: result.ok,
            durationMs: result.durationMs,
            preview: preview(result.output),
          });
          await pushRecorded(toolMessage(g.call.id, g.call.name, result));
        }
        i = end;
      }
    }
  } catch (error) {
    if (!signal.aborted || deps.stopping?.()) throw error;
    stopReason = "interrupted";
    // A tool that was running when the interrupt came has no result yet: close it.
    for (const d of danglingToolCalls(history)) {
      const calls = history[d.index]!.tool_calls!;
      await push(
        ...d.ids.map((id) => cutOffResult(id, calls.find((c) => c.id === id)?.function.name ?? "tool", "interrupted by the user while this tool ran")),
      );
    }
  }

  const footer = deps.footer(mutations);
  if (stopReason === "max_turns") {
    const note = `(stopped: reached the limit of ${input.maxTurns} model call${input.maxTurns === 1 ? "" : "s"} for one turn; raise it with --max-turns)`;
    answer = answer ? `${answer}\n\n${note}` : note;
  } else if (stopReason === "interrupted") {
    answer = answer || "(interrupted)";
  }
  return { answer: footer ? `${answer.trimEnd()}\n\n${footer}` : answer, footer, stopReason, modelCalls, toolCalls, usage, contextTokens };
}

/** What the model reads for a call that was not approved: the reason, and that nothing ran. */
function deniedResult(d: ApprovalDecision, ask: ApprovalAsk): ToolResult {
  const output: Record<string, unknown> = { error: d.message, denied: true, not_run: true };
  if (d.reason) output.reason = d.reason;
  const result: ToolResult = { ok: false, output, durationMs: 0 };
  // A denied write is an edit that did not happen: the failed-edit footer names it.
  if (ask.kind === "file_write" && ask.details.path) result.mutation = { path: ask.details.path, ok: false };
  return result;
}

function interrupted(): AgentError {
  return new AgentError("chat.interrupted", "the turn was interrupted");
}

type ParsedArgs = { ok: true; value: unknown } | { ok: false; error: string };

function parseArgs(raw: string): ParsedArgs {
  if (!raw.trim()) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch (error) {
    return { ok: false, error: `the tool arguments are not valid JSON (${(error as Error).message}); send a JSON object` };
  }
}

/** Tools may fail: every failure becomes a result the model reads, never a thrown turn. */
async function runTool(tools: ToolRegistry | null, name: string, args: ParsedArgs, ctx: ToolContext): Promise<ToolResult> {
  const t0 = performance.now();
  if (!args.ok) return { ok: false, output: { error: args.error }, durationMs: 0 };
  if (!tools?.has(name)) return { ok: false, output: { error: `unknown tool "${name}"; use one of the tools offered` }, durationMs: 0 };
  try {
    return await tools.execute(name, args.value, ctx);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    return { ok: false, output: { error: toAgentError(error).message }, durationMs: performance.now() - t0 };
  }
}

function isMultimodal(v: unknown): v is MultimodalResult {
  return Boolean(v && typeof v === "object" && (v as MultimodalResult)._multimodal === true && Array.isArray((v as MultimodalResult).content));
}

function toolMessage(id: string, name: string, result: ToolResult): StoredMessage {
  if (isMultimodal(result.output)) {
    const content = result.output.content as ContentPart[] as unknown as Array<Record<string, unknown>>;
    return { role: "tool", tool_call_id: id, name, content: result.output.text_summary, multimodal: { content, text_summary: result.output.text_summary } };
  }
  const out = result.output;
  return { role: "tool", tool_call_id: id, name, content: typeof out === "string" ? out : JSON.stringify(out ?? null) };
}

function preview(output: unknown): string {
  const text = isMultimodal(output) ? output.text_summary : typeof output === "string" ? output : JSON.stringify(output);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

import { AgentError, toAgentError } from "../../shared/errors.js";
import type { ChatEvent, ChatSendResult } from "../../shared/protocol/chat.js";
import type { WorkflowContext } from "../actors/api.js";
import { dropSpilledPrompt, readSpilledPrompt } from "./long-prompt.js";
import { runTurn, type TurnOutcome } from "./loop.js";
import { systemClock } from "../../shared/clock.js";
import type { AgentConfig } from "../../shared/config/defaults.js";
import { runCoderTurn } from "../coder/coder-turn.js";
import { type CoderService, coderSettings, configSelectsCoder } from "../coder/coder-service.js";
import type { ConfigView, ModelResolver } from "../models/models.js";
import type { SessionIndex } from "./session-index.js";
import type { SkillsService } from "./skills/skills-service.js";
import { addUsage, type SessionState, type SessionVars, type TurnRequest, type SessionTurn } from "./session-actor.js";
import { failedEditsFooter } from "./tools/failed-edits.js";
import type { ToolRegistry, ToolResult } from "../tools/types.js";
import type { Transcript } from "./transcript.js";
import type { TurnTracker } from "./turn-tracker.js";
import type { ApprovalsApi } from "../approvals/api.js";
import type { Elicit, McpApi } from "../mcp/api.js";
import { TurnToolRegistry } from "../tools/turn-tools.js";
import { systemPrompt, titleFrom, userMessage, withSections } from "./turn-setup.js";

/** A step's outcome as recorded: expected failures are values, so they never crash the workflow. */
type StepOutcome<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string } };

export interface SessionTurnDeps {
  config: ConfigView;
  /** The model resolution of a profile (its config over the home's). */
  modelsFor(profile: string): Promise<ModelResolver>;
  /** The profile's SOUL.md, or null. */
  soulFor(profile: string): Promise<string | null>;
  tools: ToolRegistry | null;
  turns: TurnTracker;
  index: SessionIndex;
  /** The listing and the search index follow the session at the end of a turn (default: the listing only). */
  indexed?: (state: SessionState, transcript: Transcript) => Promise<void>;
  /** Skills and memory of the session's profile (system prompt sections, tools). */
  skills?: SkillsService | null;
  /** The approval service (the registry's `approvals`): every risky tool call is asked about. */
  approvals: () => ApprovalsApi;
  /** The MCP feature (the registry's `mcp`): the profile's MCP tools. */
  mcp: () => McpApi;
  /** Where prompts too long for the queue wait (long-prompt.ts). */
  promptDir?: string;
  /** The coder runtime (daemon/coder/): turns handed to a codex app-server when selected. */
  coder?: CoderService | null;
  /** The profile's effective config (default: `config`). */
  configFor?: (profile: string) => Promise<AgentConfig>;
}

/** Whether this turn goes to the coder runtime: the turn's `runtime` (from `/coder-runtime`), else config. */
function coderSelected(req: TurnRequest, config: AgentConfig): boolean {
  if (req.runtime === "coder_app_server") return true;
  if (req.runtime === "default") return false;
  return configSelectsCoder(config);
}

/** The session workflow's turn: the user message, each model call and each tool call are recorded steps. */
export function sessionTurn(deps: SessionTurnDeps): SessionTurn {
  return (w, transcript, req) => runSessionTurn(deps, w, transcript, req);
}

async function runSessionTurn(
  deps: SessionTurnDeps,
  w: WorkflowContext<SessionState, SessionVars>,
  transcript: Transcript,
  req: TurnRequest,
): Promise<unknown> {
  const { turns } = deps;
  const sessionId = w.state.id;
  // After a daemon restart nobody waits for a resumed turn, but it can still be interrupted.
  const turn = turns.get(req.turnId) ?? turns.track(sessionId, req.turnId);
  const signal = AbortSignal.any([turn.controller.signal, w.abortSignal]);
  const stopping = () => w.abortSignal.aborted;
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    // At most once for tools (README "Durability"): a tool step that was started and never
    // recorded was cut off by a restart; it is reported as interrupted, never run again.
    const started = name.startsWith("tool#") ? `tool-run/${req.turnId}/${name}` : null;
    const out = await w.step<StepOutcome<T>>(name, async () => {
      if (started !== null) {
        if ((await w.kv.get(started)) !== null) return { ok: true, value: interruptedByRestart() as T };
        await w.kv.put(started, "1");
      }
      try {
        return { ok: true, value: await fn() };
      } catch (error) {
        if (stopping()) throw error; // the actor is stopping: leave the step to be re-run
        const e = toAgentError(error);
        return { ok: false, error: { code: e.code, message: e.message } };
      }
    });
    if (started !== null) await w.kv.delete(started).catch(() => undefined);
    if (!out.ok) throw AgentError.received(out.error.code, out.error.message);
    return out.value;
  };
  try {
    const cwd = req.cwd ?? w.state.cwd;
    // Each session runs as its profile: that profile's model config and persona.
    const profile = w.state.profile || "default";
    const models = await deps.modelsFor(profile);
    const soul = await deps.soulFor(profile);
    const begin = await step("begin", async () => {
      const provider = models.provider({ provider: req.provider, fast: req.fast, model: req.model });
      const base = transcript.length;
      const prompt = req.promptSpilled && deps.promptDir ? await readSpilledPrompt(deps.promptDir, req.turnId) : req.prompt;
      await transcript.appendAt(base, [await userMessage(req.turnId, prompt, req.images)]);
      return { base, provider: provider.name, title: titleFrom(prompt), prompt: req.promptSpilled ? prompt : undefined };
    });
    // The user message is recorded (the step replays from the journal): a spilled prompt's file is done with.
    if (req.promptSpilled && deps.promptDir) await dropSpilledPrompt(deps.promptDir, req.turnId).catch(() => undefined);
    const model = models.model({ provider: req.provider, fast: req.fast, model: req.model });
    // Recorded, so a replayed turn sends the very system prompt it sent before.
    const sections = deps.skills ? await step("context", () => deps.skills!.systemSections(w.kv, w.state.profile)) : [];
    turns.emit(turn, { type: "turn_start", sessionId, turnId: req.turnId, model: model.provider.model, provider: model.provider.name });
    // Who a risky call or a server's question is asked of: the session's person, when one is attached.
    const askContext = (askSignal: AbortSignal) => ({
      sessionId,
      turnId: req.turnId,
      profile,
      workspace: cwd,
      // Read when asked: a person who attached since the turn began can answer.
      interactive: () => turn.interactive > 0,
      emit: (event: ChatEvent) => turns.emit(turn, event),
      signal: askSignal,
    });
    // The turn runs on one of two runtimes: the agent loop (below), or the coder app-server.
    const profileConfig = deps.configFor ? await deps.configFor(profile) : deps.config.current();
    if (deps.coder && coderSelected(req, profileConfig)) {
      const config = profileConfig;
      const settings = coderSettings(config);
      const provider = models.provider({ provider: req.provider, fast: req.fast, model: req.model });
      let position = begin.base + 1;
      const outcome = await step("coder", () =>
        runCoderTurn(
          { sessionId, turnId: req.turnId, prompt: req.prompt || begin.prompt || "", images: req.images, cwd, signal },
          {
            server: deps.coder!.handle(sessionId, { profile, config, env: models.env(), provider, cwd, history: () => transcript.read(0, begin.base) }),
            clock: systemClock,
            turnTimeoutMs: settings.turnTimeoutS * 1000,
            silenceMs: settings.silenceS * 1000,
            append: async (messages) => {
              await transcript.appendAt(position, messages);
              position += messages.length;
            },
            emit: (event) => turns.emit(turn, event),
            approve: (ask, askSignal) => deps.approvals().decide(ask, { ...askContext(askSignal), yolo: req.yolo === true }),
            interactive: () => turn.interactive > 0,
            autoApprove: settings.autoApprove,
            stopping,
          },
        ),
      );
      return await finishTurn(outcome);
    }
    // The profile's MCP tools: its servers start at the first turn that needs them (daemon/mcp/).
    let tools = deps.tools;
    {
      const mcp = deps.mcp();
      const taken = tools?.specs({ cwd, sessionId, env: models.env(), profile: w.state.profile }).map((s) => s.name) ?? [];
      // A server's elicitation during a call is asked of the session's person (declined when nobody can answer).
      const elicit: Elicit = (request, askSignal) => deps.approvals().elicit(request, askContext(askSignal));
      const got = await mcp
        .turnTools(profile, taken, elicit)
        .catch((error) => ({ tools: [], notices: [`MCP tools are unavailable: ${toAgentError(error).message}`] }));
      for (const message of got.notices) turns.emit(turn, { type: "notice", sessionId, turnId: req.turnId, message });
      if (got.tools.length) tools = new TurnToolRegistry(tools, got.tools);
    }
    const history = await transcript.read(0, begin.base + 1);
    let position = begin.base + 1;
    const outcome = await runTurn(
      { sessionId, turnId: req.turnId, history, maxTurns: req.maxTurns, signal },
      {
        model,
        tools,
        toolContext: { cwd, sessionId, env: models.env(), profile: w.state.profile },
        step,
        // Messages rebuilt from recorded steps on a replay are written lazily (with the next
        // chunk write or at the end of the turn): the step journal already holds them.
        append: async (messages, o) => {
          await transcript.appendAt(position, messages, { defer: o?.replayable === true });
          position += messages.length;
        },
        emit: (event) => turns.emit(turn, event),
        approve: (ask, askSignal) => {
          // Never "allowed" by default: a missing approvals service is an error (services.get).
          return deps.approvals().decide(ask, { ...askContext(askSignal), yolo: req.yolo === true });
        },
        footer: (mutations) => failedEditsFooter(mutations, { config: deps.config.current(), env: process.env }),
        system: withSections(systemPrompt(cwd, { soul }), sections),
        stopping,
      },
    );
    return await finishTurn(outcome);
    async function finishTurn(outcome: TurnOutcome): Promise<unknown> {
      await transcript.flush();
      w.state.usage = addUsage(w.state.usage, outcome.usage);
      w.state.turns += 1;
      w.state.model = model.provider.model;
      w.state.provider = model.provider.name;
      if (!w.state.title) w.state.title = begin.title ?? titleFrom(req.prompt);
      w.state.updatedAt = Date.now();
      await w.saveState({ immediate: true });
      await (deps.indexed ? deps.indexed(w.state, transcript) : deps.index.sync(w.state));
      const result: ChatSendResult = {
        sessionId,
        turnId: req.turnId,
        answer: outcome.answer,
        footer: outcome.footer,
        stopReason: outcome.stopReason,
        modelCalls: outcome.modelCalls,
        toolCalls: outcome.toolCalls,
        usage: { turn: outcome.usage, session: w.state.usage },
        model: model.provider.model,
        provider: model.provider.name,
      };
      turns.emit(turn, { type: "usage", sessionId, turnId: req.turnId, turn: outcome.usage, session: w.state.usage, contextTokens: outcome.contextTokens });
      turns.emit(turn, { type: "turn_end", sessionId, turnId: req.turnId, stopReason: outcome.stopReason });
      turn.resolve(result);
      return { stopReason: outcome.stopReason, modelCalls: outcome.modelCalls };
    }
  } catch (error) {
    if (stopping()) throw error;
    const e = toAgentError(error);
    await transcript.flush().catch(() => undefined); // a replay writes them again if this failed
    await (deps.indexed ? deps.indexed(w.state, transcript) : deps.index.sync(w.state)).catch(() => undefined);
    turns.emit(turn, { type: "turn_end", sessionId, turnId: req.turnId, stopReason: "done", error: { code: e.code, message: e.message } });
    turn.reject(e.code === "internal.error" ? new AgentError("chat.turn_failed", `the turn failed: ${e.message}`) : e);
    return { error: { code: e.code, message: e.message } };
  } finally {
    turns.untrack(turn);
  }
}

/** The result a tool call gets when a daemon restart cut it off (its step was started, never recorded). */
function interruptedByRestart(): ToolResult {
  return {
    ok: false,
    output: {
      error: "interrupted by a daemon restart while it ran: it may have partly run (check its effects before running it again); it was not run again",
      interrupted_by_restart: true,
    },
    durationMs: 0,
  };
}

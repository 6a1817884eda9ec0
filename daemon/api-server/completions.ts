/**
 * `POST /v1/chat/completions` as a turn of a profile (docs/api-server.md): the request's
 * messages become the session's history (or `X-Session-Id` continues a stored session), its
 * last user message is the prompt, the turn runs through ChatApi with the profile's tools,
 * skills and memory, and the answer goes back in OpenAI's format: one JSON body, or SSE chunks
 * where tool activity is progress text and the final answer follows as content.
 *
 * The turn has no interactive caller: a risky tool call is decided by the approval service's
 * non-interactive rule (`approvals.non_interactive`, deny by default). A client that goes away
 * interrupts the turn.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { errorCodeInfo } from "../../shared/error-codes.js";
import type { ChatEvent, ChatSendResult, StoredMessage, TokenUsage } from "../../shared/protocol/chat.js";
import type { CallContext } from "../../shared/protocol/index.js";
import { type Clock, type ClockTimer, systemClock } from "../../shared/clock.js";
import { terminalText } from "../../shared/terminal-text.js";
import type { ChatApi } from "../agent/api.js";
import type { HeaderMap } from "../http/access.js";

export interface CompletionRequest {
  model: string | undefined;
  /** Everything before the last message, as the session's history. */
  history: StoredMessage[];
  /** The last message's text: the turn's prompt. */
  prompt: string;
  stream: boolean;
  includeUsage: boolean;
}

function invalid(message: string): AgentError {
  return new AgentError("api_server.invalid_request", message);
}

/** The text of a message's content: a string, or the text parts of an array (images are refused). */
function textOf(content: unknown, where: string): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(`${where}.content must be a string or an array of content parts`);
  const parts: string[] = [];
  for (const [i, part] of content.entries()) {
    const p = part as { type?: unknown; text?: unknown };
    if (p?.type === "text" && typeof p.text === "string") parts.push(p.text);
    else throw invalid(`${where}.content[${i}] is a ${String(p?.type).slice(0, 40)} part; the API server takes text parts only`);
  }
  return parts.join("\n");
}

/** The request body, checked: a clear 400 for anything it cannot run. Unknown fields (temperature, tools, ...) are ignored. */
export function parseCompletionRequest(body: Buffer): CompletionRequest {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString("utf8"));
  } catch {
    throw invalid("the request body is not JSON");
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalid("the request body must be a JSON object");
  const r = raw as Record<string, unknown>;
  if (r.model !== undefined && typeof r.model !== "string") throw invalid("model must be a string");
  if (!Array.isArray(r.messages) || r.messages.length === 0) throw invalid("messages must be a non-empty array");
  const messages: StoredMessage[] = [];
  for (const [i, m] of (r.messages as unknown[]).entries()) {
    const msg = m as { role?: unknown; content?: unknown };
    const where = `messages[${i}]`;
    if (!msg || typeof msg !== "object") throw invalid(`${where} must be an object`);
    switch (msg.role) {
      case "system":
      case "developer":
        messages.push({ role: "system", content: textOf(msg.content, where) });
        break;
      case "user":
        messages.push({ role: "user", content: textOf(msg.content, where) });
        break;
      case "assistant": {
        // The client's own tool calls and their results are not this agent's: only the text is kept.
        const text = textOf(msg.content, where);
        if (text) messages.push({ role: "assistant", content: text });
        break;
      }
      case "tool":
      case "function":
        break;
      default:
        throw invalid(`${where}.role must be system, developer, user, assistant or tool`);
    }
  }
  const last = messages.pop();
  if (last?.role !== "user" || !String(last.content).trim()) throw invalid("the last message must be a user message with text: it is the prompt of the turn");
  const options = r.stream_options as { include_usage?: unknown } | undefined;
  return {
    model: (r.model as string | undefined) || undefined,
    history: messages,
    prompt: last.content as string,
    stream: r.stream === true,
    includeUsage: options?.include_usage === true,
  };
}

/** OpenAI's error body: `{error: {message, type, param, code}}`. */
export function openAiError(error: unknown): { status: number; body: { error: { message: string; type: string; param: null; code: string } } } {
  const e = toAgentError(error);
  const status = e.code === "chat.busy" ? 409 : errorCodeInfo(e.code).http;
  const type =
    status === 401
      ? "authentication_error"
      : status === 403
        ? "permission_error"
        : status === 404
          ? "not_found_error"
          : status >= 500
            ? "server_error"
            : "invalid_request_error";
  return { status, body: { error: { message: e.message, type, param: null, code: e.code } } };
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: HeaderMap = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function openAiUsage(u: TokenUsage) {
  return { prompt_tokens: u.prompt, completion_tokens: u.completion, total_tokens: u.total };
}

function finishReason(result: ChatSendResult): "stop" | "length" {
  return result.stopReason === "max_turns" ? "length" : "stop";
}

/** One line of untrusted text (a model's tool arguments, a tool's output), escapes stripped, cut to `max`. */
function line(value: unknown, max = 200): string {
  const text = terminalText(typeof value === "string" ? value : (JSON.stringify(value) ?? ""))
    .replace(/\s+/g, " ")
    .trim();
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The progress text a turn's event shows in a stream, or null (text deltas and bookkeeping events). */
export function progressText(event: ChatEvent): string | null {
  switch (event.type) {
    case "tool_call":
      return `> tool ${line(event.name, 80)}: ${line(event.args)}`;
    case "tool_result":
      return event.ok
        ? `> ${line(event.name, 80)} done (${Math.round(event.durationMs)} ms)`
        : `> ${line(event.name, 80)} failed (${Math.round(event.durationMs)} ms): ${line(event.preview)}`;
    case "approval_resolved":
      return event.allowed ? null : `> not allowed: ${line(event.message, 500)}`;
    case "notice":
      return `> note: ${line(event.message)}`;
    case "retry":
      return `> retrying the model call (${line(event.reason, 120)})`;
    default:
      return null;
  }
}

export interface CompletionDeps {
  chat: ChatApi;
  /** Where a new session's tools run: the profile's folder. */
  cwdFor(profile: string): string;
  /** Counts the turns running through the server. */
  active: { count: number };
  /** Times the keep-alive of a quiet stream (default: the system clock). */
  clock?: Clock;
  /** A stream silent this long gets an SSE comment, so proxies and clients do not time it out (default 15 s). */
  keepAliveMs?: number;
}

const KEEP_ALIVE_MS = 15_000;

/**
 * Runs the request's turn and writes the response. `profile` is the one the request's model
 * names (undefined: no model given, the session's own or the default).
 */
export async function runCompletion(
  deps: CompletionDeps,
  req: IncomingMessage,
  res: ServerResponse,
  request: CompletionRequest,
  profile: string | undefined,
  cors: HeaderMap | null,
): Promise<void> {
  const { chat } = deps;
  // The client going away (a closed connection before the answer) interrupts the turn: watched
  // from the start, so a client gone while the session is prepared starts no turn.
  let sessionId: string | undefined;
  const gone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) gone.abort();
  };
  res.once("close", onClose);
  if (req.socket.destroyed) gone.abort();
  gone.signal.addEventListener("abort", () => sessionId && chat.interrupt(sessionId), { once: true });
  try {
    await runTurn();
  } finally {
    res.off("close", onClose);
  }

  async function runTurn(): Promise<void> {
    const header = req.headers["x-session-id"];
    const wanted = typeof header === "string" && header.trim() ? header.trim() : undefined;
    const existing = wanted ? chat.find(wanted) : undefined;
    if (existing && profile !== undefined && (existing.profile || "default") !== profile)
      throw new AgentError(
        "api_server.session_profile",
        `session ${existing.id} runs as profile ${existing.profile || "default"}, not ${profile}: ask for that profile's model, or leave X-Session-Id out`,
        { sessionId: existing.id },
      );
    const runAs = existing ? existing.profile || "default" : (profile ?? "default");
    // No usable model: fail before a session is created.
    (await chat.modelsFor(runAs)).provider({});
    if (existing) sessionId = existing.id;
    else {
      const title = `api: ${request.prompt.trim().replace(/\s+/g, " ").slice(0, 80)}`;
      sessionId = (await chat.createSession({ id: wanted, profile: runAs, cwd: deps.cwdFor(runAs), title })).id;
      if (request.history.length) await chat.append(sessionId, request.history);
    }

    if (gone.signal.aborted) return;
    const turnSession: string = sessionId;
    const id = `chatcmpl-${randomUUID().replace(/-/g, "")}`;
    const created = Math.floor(Date.now() / 1000);
    const model = request.model ?? (runAs === "default" ? "agent" : runAs);
    const headers: HeaderMap = { ...(cors ?? {}), "x-session-id": turnSession };
    let started = false;
    let segment = "";
    let atLineStart = true;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    // A long tool call streams nothing: a comment line now and then keeps the connection alive.
    const clock = deps.clock ?? systemClock;
    let keepAlive: ClockTimer | null = null;
    const rearm = () => {
      clock.clearTimeout(keepAlive);
      keepAlive = clock.setTimeout(() => {
        if (gone.signal.aborted || res.writableEnded) return;
        res.write(": keep-alive\n\n");
        rearm();
      }, deps.keepAliveMs ?? KEEP_ALIVE_MS);
      keepAlive.unref();
    };
    const write = (value: unknown) => {
      if (gone.signal.aborted || res.writableEnded) return;
      res.write(`data: ${JSON.stringify(value)}\n\n`);
      rearm();
    };
    const content = (text: string) => {
      if (!text) return;
      write(chunk({ content: text }));
      atLineStart = text.endsWith("\n");
    };
    const startStream = () => {
      if (started) return;
      started = true;
      res.writeHead(200, { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no" });
      write(chunk({ role: "assistant", content: "" }));
    };

    const notify = (_topic: string, data: unknown) => {
      const event = data as ChatEvent;
      // The turn is tracked by now: an interrupt asked for before it was reaches it.
      if (gone.signal.aborted) {
        chat.interrupt(turnSession);
        return;
      }
      if (!request.stream) return;
      if (event.type === "turn_start") return startStream();
      if (event.type === "text") {
        startStream();
        segment += event.delta;
        content(event.delta);
        return;
      }
      const progress = progressText(event);
      if (progress === null) return;
      startStream();
      // Text streamed before a tool call or a retry is not the final answer.
      if (event.type === "tool_call" || event.type === "retry") segment = "";
      content(`${atLineStart ? "" : "\n\n"}${progress}\n\n`);
    };
    const call: CallContext = { connectionId: 0, profile: runAs, signal: gone.signal, notify };

    deps.active.count++;
    try {
      // Gone while the session was being prepared: no turn is started for nobody.
      if (gone.signal.aborted) return;
      const result = await chat.send({ sessionId: turnSession, prompt: request.prompt }, call);
      const usage = openAiUsage(result.usage.turn);
      if (!request.stream) {
        sendJson(
          res,
          200,
          {
            id,
            object: "chat.completion",
            created,
            model,
            choices: [{ index: 0, message: { role: "assistant", content: result.answer }, finish_reason: finishReason(result), logprobs: null }],
            usage,
          },
          headers,
        );
        return;
      }
      startStream();
      // The final answer as content: what was streamed of it, then the rest (a footer), or all of it when nothing was streamed.
      if (!segment) content(result.answer);
      else if (result.answer.startsWith(segment)) content(result.answer.slice(segment.length));
      write(chunk({}, finishReason(result)));
      if (request.includeUsage) write({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
      if (!res.writableEnded) res.end("data: [DONE]\n\n");
    } catch (error) {
      if (gone.signal.aborted) return;
      const { status, body } = openAiError(error);
      if (!started) sendJson(res, status, body, headers);
      else {
        write(body);
        if (!res.writableEnded) res.end("data: [DONE]\n\n");
      }
    } finally {
      clock.clearTimeout(keepAlive);
      deps.active.count--;
    }
  }
}

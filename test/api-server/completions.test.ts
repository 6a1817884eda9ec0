// completions.ts on its own: a real HTTP server on 127.0.0.1 whose handler runs a request
// through a stand-in ChatApi (the turn is a promise the test settles), with a manual clock for
// the keep-alive. The whole path against a real daemon is in api-server.test.ts.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ManualClock } from "../../shared/clock.js";
import type { ChatEvent, ChatSendResult } from "../../shared/protocol/chat.js";
import type { CallContext } from "../../shared/protocol/index.js";
import type { ChatApi } from "../../daemon/agent/api.js";
import { parseCompletionRequest, progressText, runCompletion } from "../../daemon/api-server/completions.js";
import { waitFor } from "../helpers/wait.js";

function fakeChat(modelsReady: Promise<void> = Promise.resolve()) {
  let settle!: (r: ChatSendResult) => void;
  let asked = false;
  let call!: CallContext;
  const interrupts: string[] = [];
  const sent: string[] = [];
  const chat = {
    find: () => undefined,
    modelsFor: async () => {
      asked = true;
      await modelsReady;
      return { provider: () => ({}) };
    },
    createSession: async () => ({ id: "s_api_1" }),
    append: async () => 0,
    send: (p: { prompt: string }, c: CallContext) => {
      sent.push(p.prompt);
      call = c;
      return new Promise<ChatSendResult>((resolve) => (settle = resolve));
    },
    interrupt: (id: string) => {
      interrupts.push(id);
      return true;
    },
  };
  const event = (e: Partial<ChatEvent> & { type: ChatEvent["type"] }) => call.notify("chat.session.s_api_1", { sessionId: "s_api_1", turnId: "t1", ...e });
  const finish = (answer: string) =>
    settle({
      sessionId: "s_api_1",
      turnId: "t1",
      answer,
      footer: null,
      stopReason: "done",
      modelCalls: 1,
      toolCalls: 0,
      usage: { turn: { prompt: 1, completion: 2, total: 3 }, session: { prompt: 1, completion: 2, total: 3 } },
      model: "m",
      provider: "p",
    });
  return { chat: chat as unknown as ChatApi, interrupts, sent, event, finish, started: () => call !== undefined, asked: () => asked };
}

async function serve(f: ReturnType<typeof fakeChat>, clock: ManualClock): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const parsed = parseCompletionRequest(Buffer.concat(chunks));
      void runCompletion({ chat: f.chat, cwdFor: () => "/tmp", active: { count: 0 }, clock, keepAliveMs: 1000 }, req, res, parsed, "default", null);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function post(port: number, body: unknown) {
  let text = "";
  let closed = false;
  const req = request({ host: "127.0.0.1", port, path: "/v1/chat/completions", method: "POST", headers: { "content-type": "application/json" } }, (res) => {
    res.on("data", (d: Buffer) => (text += d));
    res.on("end", () => (closed = true));
    res.on("error", () => (closed = true));
  });
  req.on("error", () => (closed = true));
  req.end(JSON.stringify(body));
  return { req, text: () => text, closed: () => closed };
}

test("a quiet stream gets keep-alive comments on the clock; the answer and [DONE] follow", async () => {
  const f = fakeChat();
  const clock = new ManualClock(0);
  const { server, port } = await serve(f, clock);
  try {
    const r = post(port, { model: "agent", stream: true, messages: [{ role: "user", content: "hi" }] });
    await waitFor("the turn to start", () => f.started());
    f.event({ type: "turn_start", model: "m", provider: "p" });
    await waitFor("the first chunk", () => r.text().includes('"role":"assistant"'));
    assert.not.match(r.text(), "keep-alive");
    clock.advance(1000);
    await waitFor("a keep-alive", () => r.text().includes(": keep-alive"));
    f.finish("the answer");
    await waitFor("the end", () => r.closed());
    assert.match(r.text(), /"content":"the answer"/);
    assert.ok(r.text().endsWith("data: [DONE]\n\n"), r.text());
  } finally {
    server.close();
  }
});

test("a client gone before the turn is tracked still interrupts it, at its first event", async () => {
  const f = fakeChat();
  const clock = new ManualClock(0);
  const { server, port } = await serve(f, clock);
  try {
    const r = post(port, { model: "agent", stream: true, messages: [{ role: "user", content: "hi" }] });
    await waitFor("the turn to be sent", () => f.started());
    r.req.destroy();
    await waitFor("the interrupt on close", () => f.interrupts.length === 1);
    // The interrupt may have come before the turn was tracked: its first event asks again.
    f.event({ type: "turn_start", model: "m", provider: "p" });
    assert.is(f.interrupts.length, 2);
    f.finish("late");
  } finally {
    server.close();
  }
});

test("a client gone while the session is prepared starts no turn", async () => {
  let ready!: () => void;
  const f = fakeChat(new Promise<void>((resolve) => (ready = resolve)));
  const { server, port } = await serve(f, new ManualClock(0));
  try {
    const r = post(port, { model: "agent", messages: [{ role: "user", content: "hi" }] });
    await waitFor("the request to reach the model check", () => f.asked());
    r.req.destroy();
    await waitFor("the server to see the client go", () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n === 0 ? 1 : 0))));
    ready();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(f.sent, [], "no turn was sent");
  } finally {
    server.close();
  }
});

test("the request's messages: developer is a system message, the client's tool messages are dropped, images refused", () => {
  const r = parseCompletionRequest(
    Buffer.from(
      JSON.stringify({
        messages: [
          { role: "developer", content: "rules" },
          { role: "user", content: [{ type: "text", text: "a" }] },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "c1", content: "out" },
          { role: "user", content: "now" },
        ],
      }),
    ),
  );
  assert.equal(
    r.history.map((m) => `${m.role}:${m.content}`),
    ["system:rules", "user:a"],
  );
  assert.is(r.prompt, "now");
  assert.is(r.model, undefined);
  assert.throws(
    () =>
      parseCompletionRequest(
        Buffer.from(JSON.stringify({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] }] })),
      ),
    /text parts only/,
  );
  assert.throws(() => parseCompletionRequest(Buffer.from("{")), /not JSON/);
});

test("progress text strips terminal escapes from the model's arguments and the tool's output", () => {
  const call = progressText({ type: "tool_call", sessionId: "s", turnId: "t", id: "1", name: "terminal", args: { command: "echo \u001b[31mred\u001b[0m" } });
  assert.ok(call && !call.includes("\u001b"), JSON.stringify(call));
  assert.match(call!, /^> tool terminal: /);
  const failed = progressText({
    type: "tool_result",
    sessionId: "s",
    turnId: "t",
    id: "1",
    name: "terminal",
    ok: false,
    durationMs: 5,
    preview: "bad\u001b]0;title\u0007",
  });
  assert.ok(failed && !failed.includes("\u001b") && !failed.includes("\u0007"), JSON.stringify(failed));
  assert.is(progressText({ type: "text", sessionId: "s", turnId: "t", delta: "x" }), null);
});

test.run();

// The OpenAI-compatible API server (docs/api-server.md), driven by the official `openai` client
// as a user's program would, against a real daemon on a temp home whose model is the fake
// model server. Everything listens on 127.0.0.1.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages, waitFor } from "../agent/helpers.js";

type Home = Awaited<ReturnType<typeof chatHome>>;

async function status(h: Home): Promise<{ running: boolean; url: string | null; models: Array<{ id: string; profile: string }>; active_requests: number }> {
  const r = await h.cli(["api-server", "status", "--json"]);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** The stored session, as `agent sessions list` shows it. */
async function session(h: Home, id: string): Promise<{ id: string; active: boolean; message_count: number } | undefined> {
  const r = await h.cli(["sessions", "list", "--json", "--all-profiles"]);
  assert.is(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout).sessions as Array<{ id: string; active: boolean; message_count: number }>).find((s) => s.id === id);
}

let a: Home;
let url: string;
let client: OpenAI;

test.before(async () => {
  // Started by the daemon from config; port 0 picks a free one, which status reports.
  a = await chatHome({}, "api_server:\n  enabled: true\n  port: 0\n");
  const created = await a.cli(["profile", "create", "writer"]);
  assert.is(created.code, 0, created.stderr);
  const s = await status(a);
  assert.ok(s.running, JSON.stringify(s));
  url = s.url!;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  client = new OpenAI({ baseURL: url, apiKey: "unused-without-a-key", maxRetries: 0 });
});

test.after(async () => {
  await a?.dispose();
});

test("each profile is a model: the default profile is `agent`, another one its name", async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.equal(ids, ["agent", "writer"]);
});

test("a plain turn: the request's messages are the history, the answer and usage come back, X-Session-Id names the session", async () => {
  a.fake.setScript([{ text: "the answer is 42", usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 } }]);
  const { data, response } = await client.chat.completions
    .create({
      model: "agent",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "remember the number 42" },
        { role: "assistant", content: "remembered" },
        { role: "user", content: "what is the number?" },
      ],
    })
    .withResponse();
  assert.is(data.object, "chat.completion");
  assert.is(data.choices[0]!.message.content, "the answer is 42");
  assert.is(data.choices[0]!.finish_reason, "stop");
  assert.equal(data.usage, { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 });
  const sent = a.fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
  const tail = sent.slice(-4).map((m) => `${m.role}:${m.content}`);
  assert.equal(tail, ["system:be brief", "user:remember the number 42", "assistant:remembered", "user:what is the number?"]);
  const id = response.headers.get("x-session-id");
  assert.ok(id, "the session id comes back");
  const stored = await session(a, id!);
  assert.is(stored?.message_count, 5, "history, prompt and answer are stored");
});

test("X-Session-Id continues a stored session: its history goes to the model, not the request's", async () => {
  a.fake.setScript([{ text: "first" }, { text: "second, still 7" }]);
  const first = await client.chat.completions.create({ model: "agent", messages: [{ role: "user", content: "the number is 7" }] }).withResponse();
  const id = first.response.headers.get("x-session-id")!;
  const second = await client.chat.completions
    .create({ model: "agent", messages: [{ role: "user", content: "which number?" }] }, { headers: { "X-Session-Id": id } })
    .withResponse();
  assert.is(second.response.headers.get("x-session-id"), id);
  assert.is(second.data.choices[0]!.message.content, "second, still 7");
  const sent = (a.fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>).map((m) => `${m.role}:${m.content}`);
  assert.equal(sent.slice(-3), ["user:the number is 7", "assistant:first", "user:which number?"]);
  // The session of another profile is refused for this model.
  try {
    await client.chat.completions.create({ model: "writer", messages: [{ role: "user", content: "x" }] }, { headers: { "X-Session-Id": id } });
    assert.unreachable("must be refused");
  } catch (error) {
    assert.instance(error, OpenAI.BadRequestError);
    assert.match(String((error as Error).message), /runs as profile default, not writer/);
  }
});

test("a streamed turn: chunks of content, a finish reason, then usage when asked for", async () => {
  a.fake.setScript([{ text: "streaming works fine", chunkChars: 4, usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }]);
  const stream = await client.chat.completions.create({
    model: "agent",
    messages: [{ role: "user", content: "stream please" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let finish: string | null = null;
  let usage: unknown = null;
  let contentChunks = 0;
  for await (const chunk of stream) {
    assert.is(chunk.object, "chat.completion.chunk");
    const c = chunk.choices[0];
    if (c?.delta.content) {
      text += c.delta.content;
      contentChunks++;
    }
    if (c?.finish_reason) finish = c.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.is(text, "streaming works fine");
  assert.ok(contentChunks >= 3, `streamed in pieces (${contentChunks})`);
  assert.is(finish, "stop");
  assert.equal(usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
});

test("a tool-using turn streams the tool's progress as text, then the final answer as content", async () => {
  const dir = mkdtempSync(join(tmpdir(), "apis-"));
  try {
    a.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command: "echo tool-ran > out.txt", cwd: dir } }] }, { text: "all done" }]);
    const stream = await client.chat.completions.create({ model: "agent", messages: [{ role: "user", content: "run it" }], stream: true });
    const pieces: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) pieces.push(chunk.choices[0].delta.content);
    const all = pieces.join("");
    const call = all.indexOf("> tool terminal:");
    const done = all.indexOf("> terminal done");
    const answer = all.indexOf("all done");
    assert.ok(call >= 0 && done > call && answer > done, `progress, then the answer:\n${all}`);
    assert.ok(all.endsWith("all done"), all);
    assert.ok(existsSync(join(dir, "out.txt")), "the tool ran");
    assert.match(toolMessages(a.fake, a.fake.requests.length - 1)[0]!.content, /"exit_code":0/);
    // Not streamed: the answer alone.
    a.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command: "true", cwd: dir } }] }, { text: "quiet answer" }]);
    const plain = await client.chat.completions.create({ model: "agent", messages: [{ role: "user", content: "again" }] });
    assert.is(plain.choices[0]!.message.content, "quiet answer");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a client that goes away interrupts the turn", async () => {
  a.fake.setScript([{ stall: true, text: "thinking..." }]);
  const abort = new AbortController();
  const { data: stream, response } = await client.chat.completions
    .create({ model: "agent", messages: [{ role: "user", content: "take your time" }], stream: true }, { signal: abort.signal })
    .withResponse();
  const id = response.headers.get("x-session-id")!;
  try {
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content?.includes("thinking")) abort.abort();
  } catch (error) {
    assert.match(String((error as Error).name), /Abort/);
  }
  assert.ok(abort.signal.aborted, "the first content arrived, then the client went away");
  await waitFor(
    () => `session ${id} to stop`,
    async () => (await session(a, id))?.active === false,
  );
  await waitFor("no request left in flight", async () => (await status(a)).active_requests === 0);
});

test("a cross-origin request is refused; an unknown model and path get OpenAI errors", async () => {
  const evil = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { origin: "http://evil.example", "content-type": "application/json" },
    body: JSON.stringify({ model: "agent", messages: [{ role: "user", content: "hi" }] }),
  });
  assert.is(evil.status, 403);
  assert.is(((await evil.json()) as { error: { code: string } }).error.code, "auth.forbidden_origin");
  const before = a.fake.requests.length;
  try {
    await client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "hi" }] });
    assert.unreachable("must be refused");
  } catch (error) {
    assert.instance(error, OpenAI.NotFoundError);
    assert.match(String((error as Error).message), /the models are agent, writer/);
  }
  assert.is(a.fake.requests.length, before, "nothing reached the model");
  const other = await fetch(`${url}/embeddings`, { method: "POST", body: "{}" });
  assert.is(other.status, 404);
  // A request it cannot run is a 400 naming why, before any session exists.
  const noPrompt = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "agent", messages: [{ role: "assistant", content: "hi" }] }),
  });
  assert.is(noPrompt.status, 400);
  assert.match(((await noPrompt.json()) as { error: { message: string } }).error.message, /last message must be a user message/);
  assert.is(a.fake.requests.length, before, "nothing reached the model");
});

test("a non-loopback bind without API_SERVER_KEY is refused, and the running server stays", async () => {
  const r = await a.cli(["api-server", "start", "--host", "0.0.0.0", "--port", "0"]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /API_SERVER_KEY/);
  const s = await status(a);
  assert.ok(s.running);
  assert.is(s.url, url);
});

test("agent api-server stop and start: stopped, it refuses connections; started again, it serves", async () => {
  const stopped = await a.cli(["api-server", "stop"]);
  assert.is(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stdout, /API server stopped/);
  assert.not.ok((await status(a)).running);
  try {
    await client.models.list();
    assert.unreachable("nothing listens");
  } catch (error) {
    assert.instance(error, OpenAI.APIConnectionError);
  }
  const started = await a.cli(["api-server", "start", "--port", "0"]);
  assert.is(started.code, 0, started.stderr);
  assert.match(started.stdout, /API server running at http:\/\/127\.0\.0\.1:\d+\/v1 \(started by cli/);
  const again = new OpenAI({ baseURL: (await status(a)).url!, apiKey: "x", maxRetries: 0 });
  const ids = [];
  for await (const m of again.models.list()) ids.push(m.id);
  assert.equal(ids, ["agent", "writer"]);
});

test("API_SERVER_MODEL_NAME renames the models; with API_SERVER_KEY a wrong key is refused, the right one served; risky tools are denied", async () => {
  const b = await chatHome({}, "approvals:\n  mode: smart\n");
  const dir = mkdtempSync(join(tmpdir(), "apis-"));
  try {
    // Both in the home's .env (where secrets live); the profile's own .env names that profile.
    writeFileSync(join(b.home, ".env"), "API_SERVER_MODEL_NAME=my-agent\nAPI_SERVER_KEY=the-right-key\n");
    assert.is((await b.cli(["profile", "create", "writer"])).code, 0);
    writeFileSync(join(b.home, "profiles", "writer", ".env"), "API_SERVER_MODEL_NAME=scribe\n");
    const started = await b.cli(["api-server", "start", "--port", "0", "--json"]);
    assert.is(started.code, 0, started.stderr);
    const s = JSON.parse(started.stdout) as { url: string; key_required: boolean };
    assert.ok(s.key_required);

    const wrong = new OpenAI({ baseURL: s.url, apiKey: "a-wrong-key", maxRetries: 0 });
    try {
      await wrong.models.list();
      assert.unreachable("must be refused");
    } catch (error) {
      assert.instance(error, OpenAI.AuthenticationError);
    }
    const before = b.fake.requests.length;
    try {
      await wrong.chat.completions.create({ model: "my-agent", messages: [{ role: "user", content: "hi" }] });
      assert.unreachable("must be refused");
    } catch (error) {
      assert.instance(error, OpenAI.AuthenticationError);
    }
    assert.is(b.fake.requests.length, before, "a refused call runs no turn");

    const right = new OpenAI({ baseURL: s.url, apiKey: "the-right-key", maxRetries: 0 });
    const ids = [];
    for await (const m of right.models.list()) ids.push(m.id);
    assert.equal(ids, ["my-agent", "scribe"]);

    // Nobody can answer an approval question here: the dangerous command is denied (approvals.non_interactive: deny).
    mkdirSync(join(dir, "build"));
    writeFileSync(join(dir, "build", "marker"), "keep me");
    b.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: dir } }] }, { text: "could not" }]);
    const stream = await right.chat.completions.create({ model: "scribe", messages: [{ role: "user", content: "clean up" }], stream: true });
    let all = "";
    for await (const chunk of stream) all += chunk.choices[0]?.delta.content ?? "";
    assert.ok(existsSync(join(dir, "build", "marker")), "the command did not run");
    assert.match(all, /not allowed: .*approvals\.non_interactive: deny/, all);
    assert.ok(all.endsWith("could not"), all);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await b.dispose();
  }
});

test.run();

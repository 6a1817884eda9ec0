import { apiKeyCredential } from "../../daemon/models/credentials.js";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ManualClock, systemClock, type Clock } from "../../shared/clock.js";
import { CONFIG_DEFAULTS, type AgentConfig } from "../../shared/config/defaults.js";
import type { ApprovalAsk, ApprovalDecision } from "../../shared/protocol/approvals.js";
import type { ChatEvent, StoredMessage } from "../../shared/protocol/chat.js";
import { CoderService } from "../../daemon/coder/coder-service.js";
import { mapDecision, runCoderTurn, SWITCH_BACK_HINT } from "../../daemon/coder/coder-turn.js";
import { toolCallId } from "../../daemon/coder/projection.js";
import type { ProviderConfig } from "../../daemon/models/resolve.js";
import { waitFor } from "../helpers/wait.js";

/**
 * Every rule of the coder runtime against a fake app-server (test/fixtures/fake-app-server.mjs,
 * a real child process speaking the line protocol): decisions, escalation, elicitation, -32601,
 * projection, one server per session, timeout, hang, crash, interrupt, partial results.
 */
const FIXTURE = fileURLToPath(new URL("../fixtures/fake-app-server.mjs", import.meta.url));
const home = mkdtempSync(join(tmpdir(), "coder-fake-"));
const serverLog = join(home, "server.log");
process.env.FAKE_APP_SERVER_LOG = serverLog;

function configWith(extra: Record<string, unknown> = {}): AgentConfig {
  const c = structuredClone(CONFIG_DEFAULTS) as any;
  c.model.api_mode = "responses";
  c.coder_runtime.command = FIXTURE;
  Object.assign(c.coder_runtime, extra);
  return c as AgentConfig;
}

const provider: ProviderConfig = {
  name: "fake",
  baseUrl: "http://127.0.0.1:9/v1",
  model: "m1",
  apiKey: "k",
  apiKeyEnv: null,
  supportsImages: false,
  loopback: true,
  readTimeoutMs: 1000,
  staleTimeoutMs: 1000,
  credentials: apiKeyCredential("k"),
  maxRetries: 0,
  retryBaseMs: 1,
};

const services: CoderService[] = [];
function service(clock: Clock = systemClock): CoderService {
  const s = new CoderService({ home, clock, mcpEntries: async () => ({}) });
  services.push(s);
  return s;
}

interface TurnOptions {
  decide?: (ask: ApprovalAsk) => ApprovalDecision;
  interactive?: boolean;
  autoApprove?: boolean;
  clock?: Clock;
  turnTimeoutMs?: number;
  silenceMs?: number;
  signal?: AbortSignal;
  svc?: CoderService;
  session?: string;
  history?: StoredMessage[];
}

const once: ApprovalDecision = { allowed: true, by: "user", choice: "once", message: "ok" };

async function turn(prompt: string, o: TurnOptions = {}) {
  const svc = o.svc ?? service(o.clock);
  const events: ChatEvent[] = [];
  const messages: StoredMessage[] = [];
  const asks: ApprovalAsk[] = [];
  const clock = o.clock ?? systemClock;
  const run = runCoderTurn(
    { sessionId: o.session ?? "s1", turnId: "t1", prompt, cwd: home, signal: o.signal ?? new AbortController().signal },
    {
      server: svc.handle(o.session ?? "s1", {
        profile: "default",
        config: configWith(),
        env: process.env,
        provider,
        cwd: home,
        ...(o.history ? { history: async () => o.history! } : {}),
      }),
      clock,
      turnTimeoutMs: o.turnTimeoutMs ?? 20_000,
      silenceMs: o.silenceMs ?? 20_000,
      append: async (m) => void messages.push(...m),
      emit: (e) => void events.push(e),
      approve: async (ask) => {
        asks.push(ask);
        return (o.decide ?? (() => once))(ask);
      },
      interactive: () => o.interactive ?? true,
      autoApprove: o.autoApprove ?? false,
    },
  );
  return { run, events, messages, asks, svc };
}

const answerOf = async (prompt: string, o: TurnOptions = {}) => (await (await turn(prompt, o)).run).answer;

test.after(async () => {
  await Promise.all(services.map((s) => s.stop()));
  rmSync(home, { recursive: true, force: true });
});

test("decision mapping: once → accept, session/always → acceptForSession, deny or anything else → decline", () => {
  assert.is(mapDecision({ allowed: true, by: "user", choice: "once", message: "" }), "accept");
  assert.is(mapDecision({ allowed: true, by: "user", choice: "session", message: "" }), "acceptForSession");
  assert.is(mapDecision({ allowed: true, by: "remembered", choice: "always", message: "" }), "acceptForSession");
  assert.is(mapDecision({ allowed: false, by: "user", choice: "deny", message: "" }), "decline");
  assert.is(mapDecision({ allowed: false, by: "timeout", choice: null, message: "" }), "decline");
  assert.is(mapDecision({ allowed: true, by: "user", choice: "sometimes" as never, message: "" }), "decline");
});

test("a text turn: deltas stream, only completed items become messages, the echo of the prompt is not doubled", async () => {
  const t = await turn("text please");
  const out = await t.run;
  assert.is(out.answer, "hello from the fake");
  assert.is(out.stopReason, "done");
  assert.equal(out.usage, { prompt: 7, completion: 3, total: 10 });
  const deltas = t.events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta);
  assert.is(deltas.join(""), "hello from the fake");
  assert.ok(deltas.length > 1, "streamed in pieces");
  assert.equal(
    t.messages.map((m) => [m.role, m.content]),
    [["assistant", "hello from the fake"]],
  );
  // No "jsonrpc" field is needed either way: the server saw our lines as plain JSON objects.
  const sent = readFileSync(serverLog, "utf8");
  assert.match(sent, /"method":"initialize"/);
  assert.match(sent, /"method":"initialized"/);
  assert.match(sent, /"method":"thread\/start"/);
});

test("command approvals go to the approval service; each decision maps", async () => {
  for (const [decision, expected] of [
    [once, "accept"],
    [{ allowed: true, by: "user", choice: "session", message: "" }, "acceptForSession"],
    [{ allowed: true, by: "user", choice: "always", message: "" }, "acceptForSession"],
    [{ allowed: false, by: "user", choice: "deny", message: "" }, "decline"],
  ] as Array<[ApprovalDecision, string]>) {
    const t = await turn("command run it", { decide: () => decision });
    const out = await t.run;
    assert.is(out.answer, `decision: ${expected}`);
    assert.is(t.asks.length, 1);
    assert.is(t.asks[0]!.kind, "command");
    assert.is(t.asks[0]!.details.command, "touch made-by-coder");
  }
});

test("file changes are asked with their diff", async () => {
  const t = await turn("filechange now");
  const out = await t.run;
  assert.is(out.answer, "decision: accept");
  assert.is(t.asks[0]!.kind, "file_write");
  assert.is(t.asks[0]!.details.path, "/w/a.txt");
  assert.match(t.asks[0]!.details.diff ?? "", /\+hello/);
});

test("no callback: denied; coder_runtime.auto_approve accepts where nobody can answer", async () => {
  const denied = await turn("command x", { interactive: false, decide: () => ({ allowed: false, by: "rule", choice: null, message: "no one" }) });
  assert.is((await denied.run).answer, "decision: decline");
  const auto = await turn("command x", { interactive: false, autoApprove: true });
  assert.is((await auto.run).answer, "decision: accept");
  assert.is(auto.asks.length, 0, "auto-approve does not ask");
});

test("permission escalation is always declined, whatever the approval service would say", async () => {
  const t = await turn("escalate please");
  const out = await t.run;
  assert.is(t.asks.length, 0);
  assert.match(out.answer, /permissions: \{"permissions":\{\},"scope":"turn"\}/);
});

test("elicitation: accepted for our own tool server, declined for any other", async () => {
  assert.is(await answerOf("elicit-own"), "elicitation: accept");
  assert.is(await answerOf("elicit-other"), "elicitation: decline");
});

test("an unknown server request gets -32601", async () => {
  assert.is(await answerOf("unknown request"), "error: -32601");
});

test("projection: every kind, deterministic tool call ids, sorted-key arguments, opaque notes, nothing for a started item", async () => {
  const t = await turn("items all");
  const out = await t.run;
  assert.is(out.answer, "all items");
  assert.is(out.toolCalls, 4);
  const m = t.messages;
  assert.equal(m[0], { role: "assistant", content: "(reasoning) thinking", at: m[0]!.at, turnId: "t1" });
  const calls = m.filter((x) => x.tool_calls).map((x) => x.tool_calls![0]!);
  assert.equal(
    calls.map((c) => c.function.name),
    ["terminal", "patch", "mcp_agent_session_search", "lookup"],
  );
  assert.is(calls[0]!.id, toolCallId("turn_1_c"), "the id is a function of the item id");
  assert.is(calls[2]!.function.arguments, '{"alpha":{"b":1,"y":2},"zeta":1}');
  assert.is(calls[3]!.function.arguments, '{"a":[2,1],"q":"x"}');
  for (const c of calls)
    assert.ok(
      m.some((x) => x.role === "tool" && x.tool_call_id === c.id),
      `a result for ${c.id}`,
    );
  assert.ok(
    m.some((x) => x.role === "assistant" && String(x.content).startsWith("(coder runtime plan item")),
    "an unmodelled kind is an opaque note",
  );
  assert.not.ok(JSON.stringify(m).includes("never"), "a started, never completed item is no message");
  // The same items project to the same ids in another session.
  const again = await turn("items all", { session: "s-other" });
  await again.run;
  assert.equal(
    again.messages.filter((x) => x.tool_calls).map((x) => x.tool_calls![0]!.id),
    calls.map((c) => c.id),
  );
});

test("a new thread for a session with a past gets what was said so far", async () => {
  const history: StoredMessage[] = [
    { role: "user", content: "what is the capital of Peru" },
    { role: "assistant", content: "Lima, said the earlier runtime" },
  ];
  await (await turn("text with history", { session: "with-past", history })).run;
  const start = readFileSync(serverLog, "utf8")
    .split("\n")
    .filter((l) => l.includes('"thread/start"'))
    .find((l) => l.includes("Lima"));
  assert.ok(start, "thread/start carries the earlier conversation");
  assert.match(start!, /user: what is the capital of Peru\\nassistant: Lima, said the earlier runtime/);
});

test("one app-server per session, reused across its turns", async () => {
  const svc = service();
  const first = await turn("text one", { svc, session: "reuse" });
  await first.run;
  const second = await turn("text two", { svc, session: "reuse" });
  await second.run;
  const pids = new Set(
    readFileSync(serverLog, "utf8")
      .split("\n")
      .filter((l) => l.includes('"text one"') || l.includes('"text two"'))
      .map((l) => l.split(" ")[0]),
  );
  assert.is(pids.size, 1, "both turns went to the same process");
});

test("turn timeout: the partial result comes back with the hint to switch back", async () => {
  const clock = new ManualClock(1_000_000);
  const t = await turn("slow work", { clock, turnTimeoutMs: 1000, silenceMs: 1e9 });
  await waitFor("the partial message", () => t.messages.length > 0);
  clock.advance(1000);
  const out = await t.run;
  assert.match(out.answer, /^partial\n\n\[coder runtime failed: the coder turn took longer than 1 s/);
  assert.ok(out.answer.includes(SWITCH_BACK_HINT));
  assert.ok(
    t.events.some((e) => e.type === "notice" && e.message.includes("/coder-runtime auto")),
    "said on screen",
  );
});

test("a hang (silence) ends the turn with the partial result; the next turn gets a fresh server", async () => {
  const clock = new ManualClock(2_000_000);
  const svc = service(clock);
  const t = await turn("hang now", { clock, svc, session: "hung", silenceMs: 1000, turnTimeoutMs: 1e9 });
  await waitFor("the partial message", () => t.messages.length > 0);
  const pidBefore = readFileSync(serverLog, "utf8")
    .split("\n")
    .find((l) => l.includes('"hang now"'))!
    .split(" ")[0];
  clock.advance(1000);
  const out = await t.run;
  assert.match(out.answer, /^partial\n\n\[coder runtime failed: the coder app-server said nothing for 1 s/);
  const next = await turn("text after", { clock, svc, session: "hung" });
  assert.is((await next.run).answer, "hello from the fake");
  const pidAfter = readFileSync(serverLog, "utf8")
    .split("\n")
    .find((l) => l.includes('"text after"'))!
    .split(" ")[0];
  assert.is.not(pidAfter, pidBefore, "replaced");
});

test("a crash mid-turn: partial result and the hint; the server is replaced", async () => {
  const svc = service();
  const t = await turn("crash soon", { svc, session: "crashy" });
  const out = await t.run;
  assert.match(out.answer, /^partial\n\n\[coder runtime failed: the coder app-server exited mid-turn/);
  assert.ok(out.answer.includes("/coder-runtime auto"));
  assert.is((await (await turn("text again", { svc, session: "crashy" })).run).answer, "hello from the fake");
});

test("interrupt sends turn/interrupt; the turn ends interrupted with what it had", async () => {
  const ac = new AbortController();
  const t = await turn("interrupt me", { signal: ac.signal });
  await waitFor("the first message", () => t.messages.length > 0);
  ac.abort();
  const out = await t.run;
  assert.is(out.stopReason, "interrupted");
  assert.is(out.answer, "working");
  assert.match(readFileSync(serverLog, "utf8"), /"method":"turn\/interrupt"/);
});

test("a binary older than 0.125 or missing is refused with the install hint", async () => {
  const svc = service();
  // Another path to the same script: the version cache is per path.
  const oldPath = join(home, "old-codex");
  symlinkSync(FIXTURE, oldPath);
  const old = configWith({ command: oldPath });
  process.env.FAKE_CODEX_VERSION = "0.120.0";
  try {
    const err = await svc.usableBinary(old, process.env).catch((e) => e);
    assert.match(String(err.message), /needs 0\.125\.0 or newer: install it with `agent coder-runtime install`/);
  } finally {
    delete process.env.FAKE_CODEX_VERSION;
  }
  const missing = configWith({ command: join(home, "no-such-codex") });
  const err2 = await svc.usableBinary(missing, process.env).catch((e) => e);
  assert.match(String(err2.message), /is not an executable file; install it with `agent coder-runtime install`/);
});

test.run();

// session_search (the tool, through real turns against the fake model), the sessions.* RPC
// behind `agent sessions`, and branches: one daemon on a temp home for the file.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon, type DaemonClient } from "../../shared/client/index.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import { chatHome } from "../agent/helpers.js";

let h: Awaited<ReturnType<typeof chatHome>>;
let client: DaemonClient;
/** The arguments the fake model puts in its next session_search call. */
let nextArgs: unknown = {};

test.before(async () => {
  h = await chatHome({
    // A user prompt gets a session_search call; the tool's result gets a short answer.
    respond: (req) => {
      const last = req.body.messages.at(-1);
      return last.role === "tool" ? { text: "done" } : { toolCalls: [{ name: "session_search", arguments: nextArgs }] };
    },
  });
  const started = await h.cli(["daemon", "start"]);
  assert.is(started.code, 0, started.stderr);
  client = await connectDaemon({ home: h.home });
});

test.after(async () => {
  client?.close();
  await h.dispose();
});

/** A session with these message texts (alternating user/assistant), through the daemon. */
async function session(title: string, texts: string[], extra: { kind?: "chat" | "cron" | "kanban"; profile?: string } = {}): Promise<string> {
  const { session } = await client.call("chat.sessions.create", { title, ...extra });
  const messages: StoredMessage[] = texts.map((content, i) => ({ role: i % 2 ? "assistant" : "user", content }));
  if (messages.length) await client.call("chat.sessions.append", { sessionId: session.id, messages: messages as never });
  return session.id;
}

/** Run a turn whose model calls session_search with `args`; the tool's output as the model got it. */
async function tool(args: unknown, resume?: string): Promise<any> {
  nextArgs = args;
  const before = h.fake.requests.length;
  const r = await h.chat(["-q", "look back", "--json", ...(resume ? ["--resume", resume] : [])]);
  assert.is(r.code, 0, r.stderr);
  const req = h.fake.requests.slice(before).find((x) => x.body.messages.at(-1).role === "tool")!;
  const out = JSON.parse(req.body.messages.at(-1).content);
  return Object.assign(out, { sessionId: JSON.parse(r.stdout).session_id as string });
}

const texts = (n: number, word: (i: number) => string) => Array.from({ length: n }, (_, i) => `message ${i} ${word(i)}`);

test("discovery on a session shorter than the window returns it whole, with its first and last three messages as bookends", async () => {
  const id = await session("short", ["how do I rotate zanzibar keys", "use the rotate command", "thanks", "welcome"]);
  const out = await tool({ query: "zanzibar" });
  assert.is(out.mode, "discovery");
  const hit = out.results.find((r: any) => r.session_id === id);
  assert.ok(hit, JSON.stringify(out));
  assert.is(hit.message_id, "m0");
  assert.match(hit.snippet, /zanzibar/);
  assert.equal(
    hit.window.map((m: any) => m.id),
    ["m0", "m1", "m2", "m3"],
  );
  assert.equal(
    hit.bookend_start.map((m: any) => m.id),
    ["m0", "m1", "m2"],
  );
  assert.equal(
    hit.bookend_end.map((m: any) => m.id),
    ["m1", "m2", "m3"],
  );
  assert.is(hit.title, "short");
});

test("discovery finds inflected forms and a word's prefix (stemming and prefix search)", async () => {
  const id = await session("deploys", ["we were deploying the quetzalcoatl service", "ok"]);
  const stemmed = await client.call("sessions.search", { query: "deployed quetzalcoatl" });
  assert.ok(stemmed.results.some((r) => r.session_id === id));
  const prefix = await client.call("sessions.search", { query: "quetzal" });
  assert.ok(prefix.results.some((r) => r.session_id === id));
});

test("discovery's window holds five messages either side of the match", async () => {
  const id = await session(
    "long",
    texts(40, (i) => (i === 20 ? "the xylophone incident" : "filler")),
  );
  const out = await tool({ query: "xylophone" });
  const hit = out.results.find((r: any) => r.session_id === id);
  assert.equal(hit.window[0].id, "m15");
  assert.equal(hit.window.at(-1).id, "m25");
  assert.equal(
    hit.bookend_end.map((m: any) => m.id),
    ["m37", "m38", "m39"],
  );
});

test("paging forward and backward by re-anchoring reaches both ends, the boundary message in both windows", async () => {
  const id = await session(
    "pages",
    texts(23, () => "page"),
  );
  let w = await client.call("sessions.window", { sessionId: id, aroundMessageId: "m11", window: 3 });
  assert.is(w.first_id, "m8");
  assert.is(w.last_id, "m14");
  const seen = new Set(w.window.map((m) => m.id));
  while (w.has_after) {
    const next = await client.call("sessions.window", { sessionId: id, aroundMessageId: w.last_id, window: 3 });
    assert.ok(
      next.window.some((m) => m.id === w.last_id),
      "the boundary message is in the next window too",
    );
    for (const m of next.window) seen.add(m.id);
    w = next;
  }
  assert.is(w.last_id, "m22");
  while (w.has_before) {
    const prev = await client.call("sessions.window", { sessionId: id, aroundMessageId: w.first_id, window: 3 });
    assert.ok(prev.window.some((m) => m.id === w.first_id));
    for (const m of prev.window) seen.add(m.id);
    w = prev;
  }
  assert.is(w.first_id, "m0");
  assert.is(seen.size, 23, "every message was seen on the way");
});

test("the tool reads a window centred on the anchor", async () => {
  const id = await session(
    "tool window",
    texts(12, () => "plain"),
  );
  const out = await tool({ session_id: id, around_message_id: "m6", window: 2 });
  assert.is(out.mode, "window");
  assert.equal(
    out.window.map((m: any) => m.id),
    ["m4", "m5", "m6", "m7", "m8"],
  );
  assert.is(out.has_before, true);
  assert.is(out.has_after, true);
});

test("limit and window are clamped to 1..10 and 1..20", async () => {
  for (let i = 0; i < 12; i++) await session(`clamp ${i}`, [`the wombat number ${i}`, "noted"]);
  const many = await tool({ query: "wombat", limit: 50 });
  assert.is(many.results.length, 10);
  const few = await tool({ query: "wombat", limit: 0 });
  assert.is(few.results.length, 1);
  const id = await session(
    "wide",
    texts(60, (i) => (i === 30 ? "the aardvark" : "x")),
  );
  const wide = await client.call("sessions.window", { sessionId: id, aroundMessageId: "m30", window: 100 });
  assert.is(wide.first_id, "m10");
  assert.is(wide.last_id, "m50");
  const narrow = await client.call("sessions.window", { sessionId: id, aroundMessageId: "m30", window: 0 });
  assert.equal(
    narrow.window.map((m) => m.id),
    ["m29", "m30", "m31"],
  );
});

test("browsing with no arguments lists the most recent sessions first, without the calling session", async () => {
  const a = await session("older", ["one", "two"]);
  const b = await session("newer", ["three", "four"]);
  const first = await tool({ limit: 10 });
  assert.is(first.mode, "browse");
  const ids = first.sessions.map((s: any) => s.session_id);
  assert.ok(ids.indexOf(b) < ids.indexOf(a), ids.join(" "));
  assert.not.ok(ids.includes(first.sessionId), "the calling session is left out");
  const dates = first.sessions.map((s: any) => s.updated_at);
  assert.equal(dates, [...dates].sort().reverse());
});

test("a branch's parent is excluded from the branch's own discovery, and found from elsewhere", async () => {
  const parent = await session("parent", ["the capybara plan", "sounds good"]);
  const { session: branch } = await client.call("sessions.branch", { sessionId: parent });
  assert.is(branch.parentId, parent);
  assert.is(branch.title, "parent (branch)");
  assert.is(branch.messageCount, 2);
  const inBranch = await tool({ query: "capybara" }, branch.id);
  const ids = inBranch.results.map((r: any) => r.session_id);
  assert.not.ok(ids.includes(parent), ids.join(" "));
  assert.not.ok(ids.includes(branch.id));
  const elsewhere = await tool({ query: "capybara" });
  assert.ok(elsewhere.results.some((r: any) => r.session_id === parent));
});

test("a query with no hits is an empty result, not an error", async () => {
  const out = await tool({ query: "nonexistentwordqqq" });
  assert.is(out.mode, "discovery");
  assert.equal(out.results, []);
});

test("bad argument types get a clear error", async () => {
  const out = await tool({ query: 42 });
  assert.is(out.code, "invalid_arguments");
  assert.match(out.error, /query/);
  const half = await tool({ session_id: "s_x" });
  assert.match(half.error, /both session_id and around_message_id/);
  const badId = await tool({ session_id: "s_x", around_message_id: "12" });
  assert.match(badId.error, /m12/);
});

test("cron and kanban sessions rank below interactive ones", async () => {
  const cron = await session("cron run", ["the narwhal report narwhal narwhal", "ok"], { kind: "cron" });
  const chat = await session("chat", ["a narwhal", "ok"]);
  const { results } = await client.call("sessions.search", { query: "narwhal", limit: 5 });
  assert.equal(
    results.map((r) => r.session_id),
    [chat, cron],
  );
  assert.is(results[1]!.kind, "cron");
});

test.run();

import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";
import { EVERYTHING, fake, mcpConfig } from "./helpers.js";

/** One home with a misbehaving server of each kind, and a good one; each turn must go on. */
const servers = mcpConfig({
  garbage: fake("garbage"),
  silent: fake("silent", { connect_timeout: 1 }),
  big: fake("big"),
  schema: fake("badschema"),
  asks: fake("requests"),
  everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
});

let h: Awaited<ReturnType<typeof chatHome>>;
test.before(async () => {
  h = await chatHome({}, servers);
  // A server that went away is started again at once (not after the default 1 s backoff).
  h.env.AGENT_MCP_BACKOFF_MS = "0";
});
test.after(async () => {
  await h.dispose();
});

let base = 0;
/** Run one `chat -q` turn; requests are then counted from its first. */
async function turn(script: Parameters<typeof h.fake.setScript>[0]) {
  base = h.fake.requests.length;
  h.fake.setScript(script);
  return h.chat(["-q", "go"]);
}
const offered = (i: number): string[] => h.fake.requests[base + i]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
const seenBy = (i: number) => toolMessages(h.fake, base + i)[0]!.content;

test("a server that never answers initialize: a notice naming it and connect_timeout; the others' tools work", async () => {
  const r = await turn([{ toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "ok" } }] }, { text: "Done." }]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stderr, /MCP server silent is unavailable.*did not answer initialize within 1 s \(connect_timeout\)/);
  assert.not.ok(offered(0).some((n) => n.startsWith("mcp_silent_")));
  assert.match(seenBy(1), /Echo: ok/);
});

test("a server that writes garbage to stdout: the lines are skipped, its tools work", async () => {
  const r = await turn([{ toolCalls: [{ name: "mcp_garbage_sleep", arguments: { ms: 1 } }] }, { text: "Done." }]);
  assert.is(r.code, 0, r.stderr);
  assert.match(seenBy(1), /started_at/);
});

test("a tool whose inputSchema is not valid JSON Schema is skipped with a warning; the server's other tools are offered", async () => {
  const r = await turn([{ text: "Nothing to do." }]);
  assert.is(r.code, 0, r.stderr);
  assert.ok(offered(0).includes("mcp_schema_sleep"));
  assert.not.ok(offered(0).includes("mcp_schema_broken"));
  const tools = await h.cli(["mcp", "tools", "schema"]);
  assert.is(tools.code, 0, tools.stderr);
  assert.match(tools.stdout, /warning: tool broken skipped: its inputSchema is not valid JSON Schema/);
});

test("requests we do not support (sampling, roots, unknown) are answered with errors; the call finishes", async () => {
  const r = await turn([{ toolCalls: [{ name: "mcp_asks_ask", arguments: {} }] }, { text: "Done." }]);
  assert.is(r.code, 0, r.stderr);
  const seen = seenBy(1);
  assert.match(seen, /sampling\/createMessage: error -32601/);
  assert.match(seen, /roots\/list: error -32601/);
  assert.match(seen, /custom\/unknown: error -32601/);
});

test("50 MB from a server: a clear tool error naming it; the server is restarted and works again", async () => {
  const r = await turn([{ toolCalls: [{ name: "mcp_big_big", arguments: {} }] }, { text: "Too big." }]);
  assert.is(r.code, 0, r.stderr);
  const seen = seenBy(1);
  assert.match(seen, /MCP server big went away during big: the server sent a message larger than 16 MB/, seen);
  assert.ok(seen.length < 2000);
  const again = await turn([{ toolCalls: [{ name: "mcp_big_sleep", arguments: { ms: 1 } }] }, { text: "Fine now." }]);
  assert.is(again.code, 0, again.stderr);
  assert.match(seenBy(1), /started_at/);
});

test.run();

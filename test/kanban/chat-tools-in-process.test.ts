// A chat session's kanban tools call the board in process (the kanban feature's registry
// interface), not through a socket connection to their own daemon: with the socket capped at one
// connection, held by the CLI's own `chat` call, the tools still reach the board. Workers
// (separate processes) keep the socket: tested in worker-context.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type KanbanHome, kanbanHome } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome({}, "socket:\n  max_connections: 1\n");
});

test.after(async () => {
  await h.dispose();
});

test("a chat session creates, links and reads tasks with its kanban tools while the one socket connection is the CLI's", async () => {
  h.chatReplies.push(
    { toolCalls: [{ name: "kanban_create", arguments: { title: "Write the release notes", triage: true } }] },
    { toolCalls: [{ name: "kanban_list", arguments: { status: ["triage"] } }] },
    { text: "created it" },
  );
  const r = await h.cli(["chat", "-q", "plan the release", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const requests = h.fake.requests.filter((q) => q.body?.messages?.some((m: any) => m.role === "user" && m.content === "plan the release"));
  const toolResults = requests.flatMap((q) => q.body.messages.filter((m: any) => m.role === "tool").map((m: any) => String(m.content)));
  const last = toolResults.at(-1) ?? "";
  assert.match(last, /Write the release notes/, toolResults.join("\n---\n"));
  assert.not.match(toolResults.join("\n"), /too_many_connections|error/i);
  const { tasks } = await h.call("kanban.list", { status: ["triage"] });
  assert.equal(
    tasks.map((t) => t.title),
    ["Write the release notes"],
  );
});

test("the daemon reports the dispatcher as running (it is a normal import, never 'board only')", async () => {
  const status = await h.call("daemon.status", {});
  const kanban = (status.components as Record<string, { status: string; detail?: string }>).kanban;
  assert.equal(kanban, { status: "ok", detail: "dispatcher running" });
});

test.run();

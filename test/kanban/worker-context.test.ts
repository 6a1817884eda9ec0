// A kanban worker's turn has what a daemon turn of its profile has: the skills index and memory
// block in its system prompt, and the skill_view and memory tools (run by the daemon, which owns
// their state). The orchestrator's kanban tools are offered to chat sessions, not to workers.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type KanbanHome, kanbanHome } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
  const dir = join(h.home, "skills", "release-notes");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), "---\nname: release-notes\ndescription: How to write release notes\n---\nList changes by kind.\n");
  mkdirSync(join(h.home, "memories"), { recursive: true });
  writeFileSync(join(h.home, "memories", "MEMORY.md"), "The build runs with npm run build.\n");
});

test.after(async () => {
  await h.dispose();
});

test("a worker's system prompt has its profile's skills index and memory block, and it can use skill_view and memory", async () => {
  const created = await h.task("use skills", [
    (step) =>
      step === 0
        ? {
            toolCalls: [
              { name: "skill_view", arguments: { name: "release-notes" } },
              { name: "memory", arguments: { action: "add", content: "Release notes go in CHANGES.md." } },
            ],
          }
        : step === 1
          ? { toolCalls: [{ name: "kanban_complete", arguments: { summary: "used the skill" } }] }
          : { text: "done" },
  ]);
  await h.waitTask("done", created.id, (t) => t.status === "done");
  const [first, second] = h.requestsOf(created.id);
  const system = first!.body.messages[0].content as string;
  assert.match(system, /## Skills[\s\S]*release-notes: How to write release notes/);
  assert.match(system, /## Memory[\s\S]*The build runs with npm run build\./);
  const tools = first!.body.tools.map((t: any) => t.function.name);
  assert.ok(tools.includes("skill_view") && tools.includes("memory"), tools.join(", "));
  const results = second!.body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content as string);
  assert.match(results[0]!, /List changes by kind\./);
  assert.match(results[1]!, /Release notes go in CHANGES\.md\./);
  // The daemon wrote the memory store.
  assert.match(readFileSync(join(h.home, "memories", "MEMORY.md"), "utf8"), /Release notes go in CHANGES\.md\./);
});

test("a chat session is offered the orchestrator's kanban tools and creates a task with them", async () => {
  h.chatReplies.push({ toolCalls: [{ name: "kanban_create", arguments: { title: "Write the release notes", triage: true } }] }, { text: "created it" });
  const r = await h.cli(["chat", "-q", "plan the release", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const request = h.fake.requests.find((q) => q.body?.messages?.some((m: any) => m.role === "user" && m.content === "plan the release"))!;
  const tools = request.body.tools.map((t: any) => t.function.name);
  for (const name of ["kanban_create", "kanban_unblock", "kanban_link", "kanban_show", "kanban_list"]) assert.ok(tools.includes(name), name);
  for (const name of ["kanban_complete", "kanban_block", "kanban_comment", "kanban_heartbeat"]) assert.not.ok(tools.includes(name), name);
  const { tasks } = await h.call("kanban.list", { status: ["triage"] });
  assert.equal(
    tasks.map((t) => t.title),
    ["Write the release notes"],
  );
});

test("a worker comments on another task and completes its own, each through its kanban tools", async () => {
  const { task: other } = await h.call("kanban.create", { title: "someone else's", triage: true });
  const created = await h.task("comment elsewhere", [
    (step) =>
      step === 0
        ? {
            toolCalls: [
              { name: "kanban_comment", arguments: { task_id: other.id, body: "the API changed" } },
              { name: "kanban_heartbeat", arguments: {} },
            ],
          }
        : step === 1
          ? { toolCalls: [{ name: "kanban_complete", arguments: { summary: "noted" } }] }
          : { text: "done" },
  ]);
  const t = await h.waitTask("done", created.id, (x) => x.status === "done");
  const comments = (await h.show(other.id)).comments;
  assert.equal(
    comments.map((c) => [c.author, c.body]),
    [[`worker ${created.id}`, "the API changed"]],
  );
  assert.ok(t.events.some((e) => e.type === "heartbeat"));
});

test.run();

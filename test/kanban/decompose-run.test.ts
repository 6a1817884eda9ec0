// The decomposer against a real daemon: the model (fake, in the auxiliary.kanban_decomposer slot)
// answers with a plan; the board applies it; the dispatcher's real workers run the children,
// then the orchestrator's worker judges the root.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { eventTypes, type KanbanHome, kanbanHome } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome({}, "auxiliary:\n  kanban_decomposer:\n    model: decomposer-model\n");
});

test.after(async () => {
  await h.dispose();
});

const decomposerRequests = () => h.fake.requests.filter((r) => String(r.body?.messages?.[0]?.content ?? "").startsWith("You plan work on a kanban board"));

test("a fan-out creates the children, runs them in dependency order, then wakes the orchestrator on the root", async () => {
  const { task: root } = await h.call("kanban.create", { title: "Ship the parser", body: "parse and document", triage: true });
  h.decomposerReplies.push(
    "```json\n" +
      JSON.stringify({
        fanout: true,
        rationale: "two parts",
        tasks: [
          { title: "Write the parser", body: "in src/", assignee: "nobody-here", parents: [] },
          { title: "Document the parser", body: "in README", assignee: null, parents: [0] },
        ],
      }) +
      "\n```",
  );
  const { results } = await h.call("kanban.decompose", { taskIds: [root.id] });
  assert.is(results.length, 1);
  const r = results[0]!;
  assert.equal({ ok: r.ok, fanout: r.fanout, reason: r.reason, children: r.child_ids.length }, { ok: true, fanout: true, reason: null, children: 2 });
  const [a, b] = r.child_ids as [string, string];
  const decomposed = await h.show(root.id);
  assert.ok(eventTypes(decomposed).includes("decomposed"));
  assert.match(decomposed.comments.map((c) => c.body).join("\n"), /Decomposed into 2 tasks\. two parts/);
  assert.is(decomposed.assignee, "default");
  // The model was asked in its slot, with the task and the roster of profiles.
  const ask = decomposerRequests()[0]!;
  assert.is(ask.body.model, "decomposer-model");
  assert.match(ask.body.messages[1].content, /Ship the parser/);
  assert.match(ask.body.messages[1].content, /Profiles:\n- default/);
  // Children run (the second waits for the first), then the root, judged by the orchestrator's worker.
  const done = await h.waitTask("done after its children", root.id, (t) => t.status === "done", 60_000);
  const [ta, tb] = [await h.show(a), await h.show(b)];
  assert.is(ta.assignee, "default", "an unknown assignee falls back to the default profile");
  assert.equal(tb.parents, [a]);
  assert.ok(tb.runs[0]!.started_at >= ta.completed_at!, "the second child started after the first was done");
  assert.ok(done.runs[0]!.started_at >= tb.completed_at!, "the root ran after its children were done");
  assert.is(done.runs.length, 1);
});

test("no fan-out tightens the task and takes it out of triage", async () => {
  const { task } = await h.call("kanban.create", { title: "fix typo", triage: true });
  h.decomposerReplies.push(JSON.stringify({ fanout: false, rationale: "small", title: "Fix the typo in README", body: "Line 3 says teh.", assignee: null }));
  const { results } = await h.call("kanban.decompose", { taskIds: [task.id] });
  assert.equal(results[0], { ok: true, task_id: task.id, reason: null, fanout: false, child_ids: [] });
  const t = await h.waitTask("done", task.id, (x) => x.status === "done");
  assert.is(t.title, "Fix the typo in README");
  assert.is(t.body, "Line 3 says teh.");
  assert.is(t.assignee, "default");
  assert.ok(eventTypes(t).includes("promoted"));
});

test("malformed decomposer output leaves the task in triage with the reason", async () => {
  const { task } = await h.call("kanban.create", { title: "vague", triage: true });
  h.decomposerReplies.push("Sure! I would split this into a few parts.");
  const { results } = await h.call("kanban.decompose", { taskIds: [task.id] });
  assert.is(results[0]!.ok, false);
  assert.match(results[0]!.reason ?? "", /malformed decomposer output/);
  const t = await h.show(task.id);
  assert.is(t.status, "triage");
  assert.match(t.reason ?? "", /malformed decomposer output/);
  assert.ok(eventTypes(t).includes("decompose_failed"));
});

test("a fan-out whose parents form a cycle leaves the task in triage and creates nothing", async () => {
  const before = (await h.call("kanban.list", { all: true })).tasks.length;
  const { task } = await h.call("kanban.create", { title: "loopy", triage: true });
  h.decomposerReplies.push(
    JSON.stringify({
      fanout: true,
      tasks: [
        { title: "a", body: "", parents: [1] },
        { title: "b", body: "", parents: [0] },
      ],
    }),
  );
  const { results } = await h.call("kanban.decompose", { taskIds: [task.id] });
  assert.is(results[0]!.ok, false);
  assert.match(results[0]!.reason ?? "", /cycle/);
  assert.is((await h.show(task.id)).status, "triage");
  assert.is((await h.call("kanban.list", { all: true })).tasks.length, before + 1);
});

test("decomposing an unknown task is an error that decomposes nothing", async () => {
  const asked = decomposerRequests().length;
  const error = await h.call("kanban.decompose", { taskIds: ["t_00000000"] }).then(
    () => null,
    (e: { code: string; message: string }) => e,
  );
  assert.is(error?.code, "kanban.task_not_found");
  assert.match(error!.message, /t_00000000/);
  assert.is(decomposerRequests().length, asked);
});

test.run();

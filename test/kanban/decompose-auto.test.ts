// kanban.auto_decompose: dispatcher ticks send triage tasks to the decomposer (at most
// kanban.auto_decompose_per_tick at a time); one whose decomposition failed is not asked again.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type KanbanHome, kanbanHome } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome({ auto_decompose: true, auto_decompose_per_tick: 1, dispatch_interval_seconds: 0.2 });
});

test.after(async () => {
  await h.dispose();
});

const asked = (title: string) =>
  h.fake.requests.filter(
    (r) => String(r.body?.messages?.[0]?.content ?? "").startsWith("You plan work on a kanban board") && String(r.body.messages[1].content).includes(title),
  ).length;

test("triage tasks are decomposed on the dispatcher's ticks without being asked", async () => {
  h.decomposerReplies.push(
    JSON.stringify({ fanout: false, title: "Tightened one", body: "b1", assignee: null }),
    JSON.stringify({ fanout: false, title: "Tightened two", body: "b2", assignee: null }),
  );
  const { task: one } = await h.call("kanban.create", { title: "auto one", triage: true });
  const { task: two } = await h.call("kanban.create", { title: "auto two", triage: true });
  const [a, b] = [
    await h.waitTask("out of triage", one.id, (t) => t.status !== "triage"),
    await h.waitTask("out of triage", two.id, (t) => t.status !== "triage"),
  ];
  assert.equal([a.title, b.title].sort(), ["Tightened one", "Tightened two"]);
  assert.is(asked("auto one"), 1);
  assert.is(asked("auto two"), 1);
});

test("a task whose automatic decomposition failed stays in triage and is not sent again", async () => {
  h.decomposerReplies.push("no idea");
  const { task: bad } = await h.call("kanban.create", { title: "auto bad", triage: true });
  const failed = await h.waitTask("with the decomposer's reason", bad.id, (t) => t.events.some((e) => e.type === "decompose_failed"));
  assert.is(failed.status, "triage");
  // A later task is decomposed on later ticks; the failed one was asked once.
  h.decomposerReplies.push(JSON.stringify({ fanout: false, title: "Later", body: "", assignee: null }));
  const { task: later } = await h.call("kanban.create", { title: "auto later", triage: true });
  await h.waitTask("out of triage", later.id, (t) => t.status !== "triage");
  assert.is(asked("auto bad"), 1);
  assert.is((await h.show(bad.id)).status, "triage");
});

test.run();

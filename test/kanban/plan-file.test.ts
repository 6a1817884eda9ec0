// `agent kanban create --from-file plan.yaml [--hold]` and `agent kanban release`, through the
// built CLI against a real daemon whose dispatcher runs real workers on a fake model: a graph is
// created in one write and runs in dependency order; a bad file creates nothing and names the
// bad entry; held tasks do not run until released.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Task } from "../../shared/protocol/kanban.js";
import { type KanbanHome, kanbanHome } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
  assert.is((await h.cli(["profile", "create", "writer", "--no-alias"])).code, 0);
});
test.after(async () => {
  await h.dispose();
});

function planFile(name: string, text: string): string {
  const path = join(h.home, name);
  writeFileSync(path, text);
  return path;
}

async function taskCount(): Promise<number> {
  return (await h.call("kanban.list", { all: true })).tasks.length;
}

const GRAPH = `tasks:
  - id: design
    title: Design the parser
    assignee: writer
  - id: lexer
    title: Write the lexer
    parents: [design]
  - id: grammar
    title: Write the grammar
    parents: [design]
    max_runtime: 10m
  - id: docs
    title: Document it
    body: |
      Both parts, in README.
    parents: [lexer, grammar]
    priority: 3
`;

test("a graph from a file is created in one write and runs in dependency order", async () => {
  const r = await h.cli(["kanban", "create", "--from-file", planFile("graph.yaml", GRAPH), "--json"]);
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { tasks: Task[]; ids: Record<string, string> };
  const { design, lexer, grammar, docs } = out.ids as Record<string, string>;
  const byId = new Map(out.tasks.map((t) => [t.id, t]));
  // Created together: the links were there before any dispatcher tick could see the tasks.
  assert.equal(new Set(out.tasks.map((t) => t.created_at)).size, 1);
  assert.equal(byId.get(lexer!)!.parents, [design]);
  assert.equal(byId.get(docs!)!.parents, [lexer, grammar]);
  assert.equal(byId.get(design!)!.children.sort(), [lexer!, grammar!].sort());
  assert.equal([byId.get(design!)!.status, byId.get(lexer!)!.status, byId.get(docs!)!.status], ["ready", "todo", "todo"]);
  assert.is(byId.get(design!)!.assignee, "writer");
  assert.is(byId.get(docs!)!.body, "Both parts, in README.\n");
  assert.is(byId.get(docs!)!.priority, 3);
  assert.is(byId.get(grammar!)!.max_runtime, 600);
  assert.is(byId.get(docs!)!.held, false);
  const done = await h.waitTask("done", docs!, (t) => t.status === "done", 60_000);
  const [d, l, g] = [await h.show(design!), await h.show(lexer!), await h.show(grammar!)];
  assert.ok(l.runs[0]!.started_at >= d.completed_at!, "the lexer started after the design was done");
  assert.ok(g.runs[0]!.started_at >= d.completed_at!, "the grammar started after the design was done");
  assert.ok(done.runs[0]!.started_at >= Math.max(l.completed_at!, g.completed_at!), "the docs started after both parents were done");
  assert.is(done.runs.length, 1, "no claim was rejected for an unfinished parent");
});

const BAD: Array<[string, string, RegExp]> = [
  [
    "unknown assignee",
    "tasks:\n  - id: a\n    title: A\n  - id: b\n    title: B\n    assignee: wrier\n",
    /tasks\[1\] \(id "b"\): no profile named "wrier" \(did you mean "writer"\?\)/,
  ],
  [
    "bad parent reference",
    "tasks:\n  - id: a\n    title: A\n  - id: b\n    title: B\n    parents: [nope]\n",
    /tasks\[1\] \(id "b"\): parent "nope" is neither an id in this file/,
  ],
  [
    "unknown board task",
    "tasks:\n  - id: a\n    title: A\n    parents: [t_00000000]\n",
    /tasks\[0\] \(id "a"\): parent t_00000000 is not a task on board "default"/,
  ],
  [
    "cycle",
    "tasks:\n  - id: a\n    title: A\n    parents: [c]\n  - id: b\n    title: B\n    parents: [a]\n  - id: c\n    title: C\n    parents: [b]\n",
    /cycle: a → c → b → a/,
  ],
  ["duplicate local id", "tasks:\n  - id: a\n    title: A\n  - id: a\n    title: again\n", /tasks\[1\] \(id "a"\): duplicate id "a" \(also tasks\[0\]\)/],
  ["bad YAML", "tasks:\n  - id: a\n   title: A\n", /not valid YAML \(line 3, column 1\)/],
  ["missing title", "tasks:\n  - id: a\n", /tasks\[0\] \(id "a"\): needs a "title"/],
  ["unknown key", "tasks:\n  - id: a\n    title: A\n    asignee: writer\n", /tasks\[0\] \(id "a"\): unknown key "asignee"/],
];

for (const [what, text, message] of BAD) {
  test(`a plan file with a ${what} creates nothing and says which entry is wrong`, async () => {
    const before = await taskCount();
    const r = await h.cli(["kanban", "create", "--from-file", planFile("bad.yaml", text)]);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /bad\.yaml/);
    assert.match(r.stderr, message);
    assert.is(await taskCount(), before, "nothing was created");
  });
}

test("a missing file and a title next to --from-file are refused before the daemon is asked", async () => {
  const missing = await h.cli(["kanban", "create", "--from-file", join(h.home, "nowhere.yaml")]);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /cannot read .*nowhere\.yaml: ENOENT/);
  const both = await h.cli(["kanban", "create", "A title", "--from-file", planFile("one.yaml", "tasks:\n  - id: a\n    title: A\n")]);
  assert.is(both.code, 1);
  assert.match(both.stderr, /give no title/);
  const flag = await h.cli(["kanban", "create", "--from-file", join(h.home, "one.yaml"), "--assignee", "writer"]);
  assert.is(flag.code, 1);
  assert.match(flag.stderr, /--assignee does not apply/);
});

test("--hold with --from-file keeps the graph from running until release --all; then it runs in order", async () => {
  const r = await h.cli([
    "kanban",
    "create",
    "--from-file",
    planFile("held.yaml", "tasks:\n  - id: a\n    title: held A\n  - id: b\n    title: held B\n    parents: [a]\n"),
    "--hold",
    "--json",
  ]);
  assert.is(r.code, 0, r.stderr);
  const { ids, tasks } = JSON.parse(r.stdout) as { tasks: Task[]; ids: Record<string, string> };
  assert.equal(
    tasks.map((t) => [t.status, t.held]),
    [
      ["todo", true],
      ["todo", true],
    ],
  );
  // A dispatcher tick (by hand, so no waiting on the interval) starts neither.
  const tick = await h.cli(["kanban", "dispatch", "--json"]);
  assert.is(tick.code, 0, tick.stderr);
  const spawned = (JSON.parse(tick.stdout).spawned as Array<{ task_id: string }>).map((s) => s.task_id);
  assert.not.ok(spawned.includes(ids.a!) || spawned.includes(ids.b!), JSON.stringify(spawned));
  const listed = await h.cli(["kanban", "list"]);
  assert.match(listed.stdout, new RegExp(`${ids.a} +todo \\(held\\)`));
  assert.equal([(await h.show(ids.a!)).runs.length, (await h.show(ids.b!)).runs.length], [0, 0]);
  const released = await h.cli(["kanban", "release", "--all"]);
  assert.is(released.code, 0, released.stderr);
  assert.match(released.stdout, new RegExp(`released ${ids.a} \\(ready\\)`));
  const b = await h.waitTask("done after release", ids.b!, (t) => t.status === "done", 60_000);
  const a = await h.show(ids.a!);
  assert.ok(b.runs[0]!.started_at >= a.completed_at!);
  const types = a.events.map((e) => e.type);
  assert.is(a.events[0]!.type, "created");
  assert.is(a.events[0]!.data?.held, true);
  assert.ok(types.indexOf("released") < types.indexOf("claimed"), types.join(" "));
});

test("create --hold holds one task; release <id> lets it run; releasing a task that is not held is refused", async () => {
  const r = await h.cli(["kanban", "create", "one held task", "--hold", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const task = JSON.parse(r.stdout).task as Task;
  assert.equal([task.status, task.held], ["todo", true]);
  const tick = JSON.parse((await h.cli(["kanban", "dispatch", "--json"])).stdout);
  assert.not.ok(tick.spawned.some((s: { task_id: string }) => s.task_id === task.id));
  const again = await h.cli(["kanban", "release", task.id]);
  assert.is(again.code, 0, again.stderr);
  await h.waitTask("done", task.id, (t) => t.status === "done", 60_000);
  const twice = await h.cli(["kanban", "release", task.id]);
  assert.is(twice.code, 1);
  assert.match(twice.stderr, /is not held/);
});

test.run();

// A task's events are append-only: the `created` event read before a later link, and before a
// decomposition that makes the root wait for the children, reads the same afterwards; the links
// are events of their own. Through `agent kanban show --json` against a real daemon.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Task } from "../../shared/protocol/kanban.js";
import { type KanbanHome, kanbanHome } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
});
test.after(async () => {
  await h.dispose();
});

async function show(id: string): Promise<Task> {
  const r = await h.cli(["kanban", "show", id, "--json"]);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).task as Task;
}

async function create(title: string, ...args: string[]): Promise<string> {
  const r = await h.cli(["kanban", "create", title, "--json", ...args]);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).task.id;
}

test("a later link does not change the child's created event; the link is its own event", async () => {
  const a = await create("first", "--triage");
  const b = await create("second", "--triage");
  const before = await show(b);
  const created = before.events.find((e) => e.type === "created")!;
  assert.equal(created.data?.parents, []);
  const linked = await h.cli(["kanban", "link", a, b]);
  assert.is(linked.code, 0, linked.stderr);
  const after = await show(b);
  assert.equal(after.parents, [a]);
  // Every event recorded before the link reads exactly as it did.
  assert.equal(after.events.slice(0, before.events.length), before.events);
  assert.ok(after.events.some((e) => e.type === "linked" && e.data?.parent === a));
  // And it stays so after a further link on the parent's side.
  const c = await create("third", "--triage");
  assert.is((await h.cli(["kanban", "link", c, b])).code, 0);
  const again = await show(b);
  assert.equal(again.events.slice(0, before.events.length), before.events);
  const parentEvents = (await show(a)).events;
  assert.ok(parentEvents.some((e) => e.type === "child_linked" && e.data?.child === b));
});

test("a decomposition does not change the root's created event; the root's new parents are link events", async () => {
  const root = await create("Ship the parser", "--triage");
  const before = await show(root);
  assert.equal(before.events.find((e) => e.type === "created")!.data?.parents, []);
  h.decomposerReplies.push(
    JSON.stringify({
      fanout: true,
      rationale: "two parts",
      tasks: [
        { title: "Write the parser", body: "", assignee: null, parents: [] },
        { title: "Document the parser", body: "", assignee: null, parents: [0] },
      ],
    }),
  );
  const r = await h.cli(["kanban", "decompose", root, "--json"]);
  assert.is(r.code, 0, r.stderr + r.stdout);
  const [, second] = JSON.parse(r.stdout).results[0].child_ids as [string, string];
  const after = await show(root);
  assert.ok(after.parents.includes(second), "the root waits for the leaf");
  assert.equal(after.events.slice(0, before.events.length), before.events);
  assert.ok(after.events.some((e) => e.type === "linked" && e.data?.parent === second));
  // The child's own created event names only the parents it was created with.
  const child = await show(second);
  const childParents = child.events.find((e) => e.type === "created")!.data!.parents as string[];
  assert.is(childParents.includes(root), false);
});

test.run();

// The decomposer's answer → the plan the board applies (daemon/kanban/decompose/parse.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseDecomposition } from "../../daemon/kanban/decompose/parse.js";

const fanout = (tasks: unknown[]) => JSON.stringify({ fanout: true, rationale: "two parts", tasks });

test("a fan-out in a code fence becomes children with their sibling parent indices", () => {
  const reply =
    "Here is the plan:\n```json\n" +
    fanout([
      { title: "Write the parser", body: "parse it", assignee: "coder", parents: [] },
      { title: "Document it", body: "", assignee: null, parents: [0] },
    ]) +
    "\n```";
  const r = parseDecomposition(reply);
  assert.ok(r.ok);
  if (!r.ok || !r.plan.fanout) throw new Error("expected a fan-out");
  assert.equal(r.plan.children, [
    { title: "Write the parser", body: "parse it", assignee: "coder", parents: [] },
    { title: "Document it", body: "", parents: [0] },
  ]);
  assert.match(r.plan.comment, /Decomposed into 2 tasks\. two parts/);
});

test("no fan-out tightens the task: title, body and the model's assignee", () => {
  const r = parseDecomposition(JSON.stringify({ fanout: false, rationale: "small", title: "Fix the typo", body: "in README", assignee: "writer" }));
  assert.equal(r, { ok: true, plan: { fanout: false, title: "Fix the typo", body: "in README", assignee: "writer", comment: "Kept as one task. small" } });
});

test("output that is not JSON is rejected with a reason", () => {
  const r = parseDecomposition("I think you should split it in two.");
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.reason, /malformed decomposer output: no JSON object/);
});

test("an empty fan-out is rejected", () => {
  const r = parseDecomposition(fanout([]));
  assert.equal(r, { ok: false, reason: "malformed decomposer output: the fan-out is empty" });
});

test("a fan-out of more than 6 tasks is rejected", () => {
  const r = parseDecomposition(fanout(Array.from({ length: 7 }, (_, i) => ({ title: `t${i}`, parents: [] }))));
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.reason, /7 tasks; at most 6/);
});

test("a cycle between siblings is rejected, naming it", () => {
  const r = parseDecomposition(
    fanout([
      { title: "a", parents: [2] },
      { title: "b", parents: [0] },
      { title: "c", parents: [1] },
    ]),
  );
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.reason, /cycle \(\d → \d → \d → \d\)/);
});

test("a parent index out of range, a self-parent and a missing title are each rejected", () => {
  const bad = [
    fanout([
      { title: "a", parents: [5] },
      { title: "b", parents: [] },
    ]),
    fanout([
      { title: "a", parents: [0] },
      { title: "b", parents: [] },
    ]),
    fanout([
      { title: " ", parents: [] },
      { title: "b", parents: [] },
    ]),
    JSON.stringify({ fanout: "yes" }),
  ];
  const reasons = bad.map((b) => {
    const r = parseDecomposition(b);
    return r.ok ? "accepted" : r.reason;
  });
  assert.match(reasons[0]!, /bad index 5/);
  assert.match(reasons[1]!, /names itself as a parent/);
  assert.match(reasons[2]!, /tasks\[0\]\.title is empty/);
  assert.match(reasons[3]!, /fanout is not true or false/);
});

test.run();

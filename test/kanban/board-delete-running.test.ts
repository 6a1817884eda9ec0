// `agent kanban boards delete` is refused while a task of the board runs (its worker would
// report to a board that is gone): real dispatcher, real worker on a fake model that never answers.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { hangs, type KanbanHome, kanbanHome, killGroup } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
});
test.after(async () => {
  await h.dispose();
});

test("a board with a running task is not deleted; once the task is blocked it is", async () => {
  assert.is((await h.cli(["kanban", "boards", "create", "busy"])).code, 0);
  const task = await h.task("runs for ever", [hangs], { board: "busy" });
  const running = await h.waitTask("running", task.id, (t) => t.status === "running" && t.runs.at(-1)?.pgid != null);
  const r = await h.cli(["kanban", "boards", "delete", "busy", "-y"]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`board "busy" has running tasks \\(${task.id}\\); block or reclaim them first`));
  assert.is((await h.call("kanban.list", { board: "busy" })).tasks.length, 1, "nothing was deleted");
  // Blocking closes the run (and keeps the dispatcher from starting it again); its worker goes.
  const block = await h.cli(["kanban", "block", task.id, "--board", "busy"]);
  assert.is(block.code, 0, block.stderr);
  killGroup(running.runs.at(-1)!.pgid!);
  const deleted = await h.cli(["kanban", "boards", "delete", "busy", "-y"]);
  assert.is(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, /deleted board busy \(1 task\(s\)\)/);
});

test.run();

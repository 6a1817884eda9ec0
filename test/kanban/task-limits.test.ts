// Comments and runs per task are capped (the newest kept, the dropped ones counted), so a task
// with thousands of comments or runs keeps every write of its chunk small.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BucketedKv } from "../../daemon/actors/storage/kv.js";
import { Board, type BoardEnv, MAX_COMMENT_CHARS, MAX_COMMENTS, MAX_RUNS } from "../../daemon/kanban/board/board.js";
import { BoardStore } from "../../daemon/kanban/board/store.js";
import { type KanbanHome, kanbanHome } from "./board-helpers.js";

let h: KanbanHome;
const dir = mkdtempSync(join(tmpdir(), "kb-limits-"));

test.before(async () => {
  h = await kanbanHome();
});

test.after(async () => {
  await h.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test("a task keeps its newest comments and kanban show says how many older ones were dropped", async () => {
  const id = await h.create("chatty");
  const c = await h.client();
  const extra = 5;
  for (let i = 0; i < MAX_COMMENTS + extra; i++) await c.call("kanban.comment", { id, body: `comment ${i}` });
  const t = await h.show(id);
  assert.is(t.comments.length, MAX_COMMENTS);
  assert.is(t.comments_dropped, extra);
  assert.is(t.comments[0].body, `comment ${extra}`);
  assert.is(t.comments[MAX_COMMENTS - 1].body, `comment ${MAX_COMMENTS + extra - 1}`);
  const shown = await h.cli(["kanban", "show", id]);
  assert.is(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, `comments: (${extra} older comments dropped; the newest are kept)`);
  assert.not.match(shown.stdout, "comment 4\n");
});

test("comments are also capped by their total size, keeping the newest", async () => {
  const id = await h.create("verbose");
  const c = await h.client();
  const big = (i: number) => `${i}`.padEnd(100_000, "x");
  for (let i = 0; i < 8; i++) await c.call("kanban.comment", { id, body: big(i) });
  const t = await h.show(id);
  const kept = Math.floor(MAX_COMMENT_CHARS / 100_000);
  assert.is(t.comments.length, kept);
  assert.is(t.comments_dropped, 8 - kept);
  assert.is(t.comments[kept - 1].body, big(7));
});

test("a task keeps its newest runs, the current one among them, also after a reload", async () => {
  const env: BoardEnv = {
    resolveAssignee: () => ({ assignee: "default", fellBack: false }),
    orchestrator: () => "default",
    failureLimit: () => 2,
    profileExists: () => true,
    unknownProfile: (n) => new Error(`no profile ${n}`) as never,
  };
  const board = new Board("default", new BoardStore(new BucketedKv(dir)), env);
  await board.load();
  const { task } = await board.create({ title: "retried a lot" }, "test");
  const extra = 3;
  for (let i = 0; i < MAX_RUNS + extra; i++) {
    const claim = await board.claim(task.id, { runId: `r_${i}`, profile: "default" });
    assert.ok(claim.ok, JSON.stringify(claim));
    // Rate limited: back to ready without a failure, so the next claim can follow.
    if (i < MAX_RUNS + extra - 1) await board.endRun(task.id, `r_${i}`, "requeue", null, undefined);
  }
  const check = (b: Board) => {
    const t = b.get(task.id);
    assert.is(t.runs.length, MAX_RUNS);
    assert.is(t.runs_dropped, extra);
    assert.is(t.runs[0]!.run_id, `r_${extra}`);
    assert.is(t.current_run, `r_${MAX_RUNS + extra - 1}`);
    assert.ok(t.runs.some((r) => r.run_id === t.current_run));
  };
  check(board);
  const reloaded = new Board("default", new BoardStore(new BucketedKv(dir)), env);
  await reloaded.load();
  check(reloaded);
  // The current run ends normally although older runs were dropped.
  const [done] = await reloaded.complete([task.id], { summary: "at last", worker: { taskId: task.id, runId: `r_${MAX_RUNS + extra - 1}` } }, "test");
  assert.is(done!.status, "done");
  assert.is(done!.runs[MAX_RUNS - 1]!.outcome, "completed");
});

test.run();

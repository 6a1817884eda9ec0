// The board's dispatcher-facing rules (claim, runs, failures, decomposition) and its storage,
// on a Board over the real bucketed KV files the board actor uses, in a temp folder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BucketedKv } from "../../daemon/actors/storage/kv.js";
import { Board, type BoardEnv } from "../../daemon/kanban/board/board.js";
import { BoardStore } from "../../daemon/kanban/board/store.js";
import { AgentError } from "../../shared/errors.js";
import type { ActorKv } from "../../daemon/actors/types.js";
import type { BoardEvent, Task } from "../../shared/protocol/kanban.js";

const dirs: string[] = [];
const PROFILES = new Set(["default", "writer", "boss"]);
let orchestrator = "default";

const env: BoardEnv = {
  resolveAssignee: (r) => (r && PROFILES.has(r) ? { assignee: r, fellBack: false } : { assignee: "default", fellBack: Boolean(r) }),
  orchestrator: () => orchestrator,
  failureLimit: () => 2,
  profileExists: (n) => PROFILES.has(n),
  unknownProfile: (n) => new AgentError("kanban.unknown_profile", `no profile named "${n}"`),
};

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "kb-model-"));
  dirs.push(dir);
  return dir;
}

async function open(dir = freshDir(), kv: ActorKv = new BucketedKv(dir)): Promise<{ board: Board; dir: string }> {
  const board = new Board("default", new BoardStore(kv), env);
  await board.load();
  return { board, dir };
}

/** The same board read back from its files, as a restarted daemon would. */
async function reopen(dir: string): Promise<Board> {
  return (await open(dir)).board;
}

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const make = async (b: Board, title: string, extra: Record<string, unknown> = {}) => (await b.create({ title, ...extra }, "test")).task;

test("of many simultaneous claims of one task exactly one wins", async () => {
  const { board } = await open();
  const t = await make(board, "Contested");
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => board.claim(t.id, { runId: `r_${i}`, profile: "default" })));
  const winners = results.filter((r) => r.ok);
  assert.is(winners.length, 1);
  const task = board.get(t.id);
  assert.is(task.status, "running");
  assert.is(task.runs.length, 1);
  assert.is(task.current_run, (winners[0] as { task: Task }).task.current_run);
});

test("a claim of a task whose parents are not done demotes it to todo with claim_rejected", async () => {
  const { board, dir } = await open();
  const parent = await make(board, "Parent");
  const child = await make(board, "Child", { parents: [parent.id] });
  // A ready task with an open parent cannot be made through the rules: write the record as a
  // crash of an older version might have left it, then read the board back.
  const kv = new BucketedKv(dir);
  const chunk = (await kv.getJson<Task[]>("chunk/00000000"))!;
  chunk.find((t) => t.id === child.id)!.status = "ready";
  await kv.putJson("chunk/00000000", chunk);
  const again = await reopen(dir);
  const r = await again.claim(child.id, { runId: "r_x", profile: "default" });
  assert.is(r.ok, false);
  const t = again.get(child.id);
  assert.is(t.status, "todo");
  assert.equal(t.events.at(-1)!.type, "claim_rejected");
  assert.equal(t.events.at(-1)!.data!.parents, [parent.id]);
});

test("a claim of a task that is not ready is refused and changes nothing", async () => {
  const { board } = await open();
  const t = await make(board, "Triage", { triage: true });
  const r = await board.claim(t.id, { runId: "r_1", profile: "default" });
  assert.is(r.ok, false);
  assert.is(board.get(t.id).status, "triage");
});

async function running(board: Board, extra: Record<string, unknown> = {}) {
  const t = await make(board, "Work", extra);
  const r = await board.claim(t.id, { runId: "r_1", profile: "default" });
  assert.ok(r.ok);
  await board.attachRun(t.id, "r_1", { pid: 4242, pgid: 4242, logPath: "/tmp/x.log" });
  return t.id;
}

test("a crash below the failure limit counts one failure and makes the task ready again", async () => {
  const { board } = await open();
  const id = await running(board);
  const t = await board.endRun(id, "r_1", "crashed", "exit code 1", undefined);
  assert.equal([t.status, t.consecutive_failures, t.runs[0]!.outcome, t.runs[0]!.pid], ["ready", 1, "crashed", 4242]);
});

test("at the failure limit the task is blocked with a gave_up event", async () => {
  const { board } = await open();
  const id = await running(board);
  await board.endRun(id, "r_1", "spawn_failed", "ENOENT", undefined);
  assert.ok((await board.claim(id, { runId: "r_2", profile: "default" })).ok);
  const t = await board.endRun(id, "r_2", "timed_out", "past max_runtime", undefined);
  assert.equal([t.status, t.consecutive_failures], ["blocked", 2]);
  assert.ok(t.events.some((e) => e.type === "gave_up"));
  assert.match(t.reason!, /gave up after 2/);
});

test("a task's max_retries wins over the failure limit passed by the dispatcher", async () => {
  const { board } = await open();
  const id = await running(board, { maxRetries: 1 });
  const t = await board.endRun(id, "r_1", "crashed", null, 5);
  assert.is(t.status, "blocked");
});

test("the failure limit passed by the dispatcher wins over kanban.failure_limit", async () => {
  const { board } = await open();
  const id = await running(board);
  const t = await board.endRun(id, "r_1", "crashed", null, 1);
  assert.is(t.status, "blocked");
});

test("a worker that exits 0 with its task still running is a protocol_violation: blocked at once", async () => {
  const { board } = await open();
  const id = await running(board);
  const t = await board.endRun(id, "r_1", "exited_clean", "exit code 0", undefined);
  assert.equal([t.status, t.consecutive_failures], ["blocked", 0]);
  assert.ok(t.events.some((e) => e.type === "protocol_violation"));
});

test("exit 75 (requeue) goes back to ready without counting a failure", async () => {
  const { board } = await open();
  const id = await running(board);
  const t = await board.endRun(id, "r_1", "requeue", "rate limited", undefined);
  assert.equal([t.status, t.consecutive_failures, t.runs[0]!.outcome], ["ready", 0, "requeue"]);
});

test("a run whose worker completed its task meanwhile is only closed", async () => {
  const { board } = await open();
  const id = await running(board);
  await board.complete([id], { summary: "did it", worker: { taskId: id, runId: "r_1" } }, "worker:r_1");
  const t = await board.endRun(id, "r_1", "exited_clean", "exit code 0", undefined);
  assert.equal([t.status, t.runs[0]!.outcome], ["done", "completed"]);
  assert.not.ok(t.events.some((e) => e.type === "protocol_violation"));
});

test("completion resets the failure counter and unblock resets it too", async () => {
  const { board } = await open();
  const id = await running(board);
  await board.endRun(id, "r_1", "crashed", null, 1);
  assert.is(board.get(id).consecutive_failures, 1);
  const [u] = await board.unblock([id], "test");
  assert.equal([u!.status, u!.consecutive_failures], ["ready", 0]);
  assert.ok((await board.claim(id, { runId: "r_2", profile: "default" })).ok);
  await board.endRun(id, "r_2", "crashed", null, 5);
  assert.ok((await board.claim(id, { runId: "r_3", profile: "default" })).ok);
  const [done] = await board.complete([id], { result: "42" }, "test");
  assert.equal([done!.status, done!.consecutive_failures, done!.result], ["done", 0, "42"]);
});

test("heartbeats extend the claim of the worker's own run only", async () => {
  const { board } = await open();
  const id = await running(board);
  const before = board.get(id).runs[0]!.last_heartbeat;
  await board.heartbeat(id, "r_1", "worker:r_1");
  await board.heartbeat(id, "r_1", "worker:r_1");
  const t = board.get(id);
  assert.ok(t.runs[0]!.last_heartbeat >= before);
  assert.is(t.events.filter((e) => e.type === "heartbeat").length, 1);
  try {
    await board.heartbeat(id, "r_other", "worker:r_other");
    assert.unreachable("a stranger's heartbeat was accepted");
  } catch (error) {
    assert.is((error as { code: string }).code, "kanban.not_your_task");
  }
});

test("reclaim closes the run and makes the task ready without counting a failure", async () => {
  const { board } = await open();
  const id = await running(board);
  const [t] = await board.reclaim([id], "test");
  assert.equal([t!.status, t!.consecutive_failures, t!.runs[0]!.outcome, t!.current_run], ["ready", 0, "reclaimed", null]);
});

test("a fan-out creates the children, links siblings, makes the root wait for every leaf and hands it to the orchestrator", async () => {
  orchestrator = "boss";
  try {
    const { board, dir } = await open();
    const root = await make(board, "Ship the release", { triage: true });
    const r = await board.applyDecomposition(root.id, {
      fanout: true,
      comment: "split in three",
      children: [
        { title: "Write notes", body: "", assignee: "writer", parents: [] },
        { title: "Build", body: "", assignee: "ghost", parents: [] },
        { title: "Publish", body: "", assignee: null, parents: [0, 1] },
      ],
    });
    assert.ok(r.ok && r.fanout);
    const [notes, build, publish] = r.child_ids.map((id) => board.get(id));
    assert.equal([notes!.status, build!.status, publish!.status], ["ready", "ready", "todo"]);
    assert.equal([notes!.assignee, build!.assignee, publish!.assignee], ["writer", "default", "default"]);
    assert.equal(publish!.parents, [notes!.id, build!.id]);
    const t = board.get(root.id);
    assert.equal([t.status, t.assignee, t.parents, t.decomposed], ["todo", "boss", [publish!.id], true]);
    assert.is(t.comments.at(-1)!.body, "split in three");
    assert.ok(t.events.some((e) => e.type === "decomposed"));
    // Everything landed on disk.
    const again = await reopen(dir);
    assert.is(again.tasks.size, 4);
    // The root becomes ready (for the orchestrator) when the whole graph is done.
    await board.complete([notes!.id, build!.id], { summary: "x" }, "test");
    assert.is(board.get(root.id).status, "todo");
    await board.complete([publish!.id], { summary: "x" }, "test");
    assert.is(board.get(root.id).status, "ready");
  } finally {
    orchestrator = "default";
  }
});

test("a decomposition without fan-out tightens the task, assigns it and takes it out of triage", async () => {
  const { board } = await open();
  const root = await make(board, "do the thing with the stuff", { triage: true });
  const r = await board.applyDecomposition(root.id, { fanout: false, title: "Rename the config key", body: "In shared/config.", assignee: "writer" });
  assert.ok(r.ok && !r.fanout);
  const t = board.get(root.id);
  assert.equal([t.title, t.body, t.assignee, t.status], ["Rename the config key", "In shared/config.", "writer", "ready"]);
});

test("a plan with a cycle is refused and changes nothing; a rejection leaves the task in triage with the reason", async () => {
  const { board } = await open();
  const root = await make(board, "Loop", { triage: true });
  try {
    await board.applyDecomposition(root.id, {
      fanout: true,
      comment: "",
      children: [
        { title: "a", body: "", parents: [1] },
        { title: "b", body: "", parents: [0] },
      ],
    });
    assert.unreachable("a cyclic plan was applied");
  } catch (error) {
    assert.is((error as { code: string }).code, "kanban.invalid_plan");
  }
  assert.is(board.tasks.size, 1);
  const r = await board.rejectDecomposition(root.id, "the parent indices make a cycle");
  assert.is(r.ok, false);
  const t = board.get(root.id);
  assert.equal([t.status, t.reason], ["triage", "the parent indices make a cycle"]);
});

test("an empty fan-out is refused", async () => {
  const { board } = await open();
  const root = await make(board, "Nothing", { triage: true });
  try {
    await board.applyDecomposition(root.id, { fanout: true, comment: "", children: [] });
    assert.unreachable();
  } catch (error) {
    assert.is((error as { code: string }).code, "kanban.invalid_plan");
  }
});

test("a change of several tasks interrupted after its commit record lands whole at the next start", async () => {
  const dir = freshDir();
  const real = new BucketedKv(dir);
  const { board } = await open(dir, real);
  const parent = await make(board, "Parent");
  // Fillers put the child in another chunk than its parent, so completing the parent touches two.
  for (let i = 0; i < 40; i++) await make(board, `filler ${i}`);
  const child = await make(board, "Child", { parents: [parent.id] });
  // A KV that dies after the commit record: the task records of the completion never land.
  let dead = false;
  const dying: ActorKv = {
    get: (k) => real.get(k),
    getJson: (k) => real.getJson(k),
    list: (p) => real.list(p),
    delete: (k) => (dead ? Promise.reject(new Error("killed")) : real.delete(k)),
    put: (k, v) => (dead ? Promise.reject(new Error("killed")) : real.put(k, v)),
    putJson: async (k, v) => {
      if (dead) throw new Error("killed");
      await real.putJson(k, v);
      if (k === "tx") dead = true;
    },
  };
  const crashing = new Board("default", new BoardStore(dying), env);
  await crashing.load();
  const failed = await crashing.complete([parent.id], { summary: "x" }, "test").then(
    () => false,
    () => true,
  );
  assert.ok(failed && dead, "the write died after its commit record");
  const after = await reopen(dir);
  assert.equal([after.get(parent.id).status, after.get(child.id).status], ["done", "ready"]);
});

test("tasks are stored in chunks of 32 in creation order, and a burst of creations shares its writes", async () => {
  const dir = freshDir();
  const real = new BucketedKv(dir);
  let puts = 0;
  const counting: ActorKv = {
    ...real,
    get: (k) => real.get(k),
    getJson: (k) => real.getJson(k),
    list: (p) => real.list(p),
    delete: (k) => real.delete(k),
    put: (k, v) => real.put(k, v),
    putJson: (k, v) => (puts++, real.putJson(k, v)),
  };
  const { board } = await open(dir, counting);
  const made = await Promise.all(Array.from({ length: 40 }, (_, i) => make(board, `burst ${i}`)));
  assert.ok(puts < 40, `${puts} puts for 40 creations`);
  const first = (await real.getJson<Task[]>("chunk/00000000"))!;
  const second = (await real.getJson<Task[]>("chunk/00000001"))!;
  assert.equal([first.length, second.length], [32, 8]);
  assert.equal(
    [...first, ...second].map((t) => t.id),
    made.map((t) => t.id),
  );
  assert.is((await reopen(dir)).tasks.size, 40);
});

test("events carry the board, the task and its status after the change", async () => {
  const { board } = await open();
  const seen: BoardEvent[] = [];
  board.onEvent((e) => seen.push(e));
  const t = await make(board, "Observed");
  await board.block([t.id], { reason: "why" }, "test");
  assert.equal(
    seen.map((e) => [e.type, e.status, e.task_id, e.board]),
    [
      ["created", "ready", t.id, "default"],
      ["blocked", "blocked", t.id, "default"],
    ],
  );
  assert.ok(seen[1]!.seq > seen[0]!.seq);
});

test("a held task stays todo through the rules that would make it ready, until released", async () => {
  const { board, dir } = await open();
  const parent = await make(board, "Parent");
  const child = await make(board, "Held child", { parents: [parent.id], hold: true });
  assert.equal([child.status, child.held], ["todo", true]);
  await board.complete([parent.id], { summary: "ok" }, "test");
  assert.is(board.get(child.id).status, "todo", "a finished parent does not wake a held child");
  assert.match(String(await board.update(child.id, { status: "ready" }, "api").catch((e: Error) => e.message)), /it is held/);
  await board.block([child.id], { reason: "wait" }, "test");
  await board.unblock([child.id], "test");
  assert.is(board.get(child.id).status, "todo", "unblocking keeps it held");
  assert.is((await reopen(dir)).get(child.id).held, true, "the hold survives a reload");
  const [released] = await board.release([child.id], "test");
  assert.equal([released!.status, released!.held], ["ready", false]);
  assert.match(String(await board.release([child.id], "test").catch((e: Error) => e.message)), /is not held/);
});

test("block and schedule park a task the same way: a running run closed with the reason, a closed task refused", async () => {
  const { board } = await open();
  for (const [verb, status] of [
    ["block", "blocked"],
    ["schedule", "scheduled"],
  ] as const) {
    const id = await running(board);
    const park = (ids: string[], reason?: string) => (verb === "block" ? board.block(ids, { reason }, "test") : board.schedule(ids, reason, "test"));
    const [t] = await park([id], "  wait for review ");
    assert.equal([t!.status, t!.reason, t!.current_run], [status, "wait for review", null], verb);
    assert.equal([t!.runs[0]!.outcome, t!.runs[0]!.detail], [status, "  wait for review "], verb);
    assert.equal(t!.events.at(-1)!.type, status, verb);
    const done = await make(board, `done before ${verb}`);
    await board.complete([done.id], { summary: "done" }, "test");
    const err = await park([done.id], "x").then(
      () => null,
      (e: AgentError) => e,
    );
    assert.ok(err instanceof AgentError, `${verb} of a done task is refused`);
    assert.match(err!.message, new RegExp(`a closed task cannot be ${status}`));
    assert.is(board.get(done.id).status, "done", `${verb} changed nothing`);
  }
});

test("unblock, promote and reclaim refuse a task in any other status, naming it, and change nothing", async () => {
  const { board } = await open();
  const t = await make(board, "Ready one");
  for (const [verb, call, message] of [
    ["unblock", () => board.unblock([t.id], "test"), "only blocked or scheduled tasks can be unblocked"],
    ["promote", () => board.promote([t.id], "test"), "only triage tasks are promoted"],
    ["reclaim", () => board.reclaim([t.id], "test"), "only running tasks are reclaimed"],
  ] as const) {
    const err = await call().then(
      () => null,
      (e: AgentError) => e,
    );
    assert.ok(err instanceof AgentError, `${verb} of a ready task is refused`);
    assert.is(err!.code, "kanban.invalid_transition");
    assert.is(err!.message, `${t.id} is ready: ${message}`);
    assert.is(board.get(t.id).status, "ready", `${verb} changed nothing`);
  }
});
test.run();

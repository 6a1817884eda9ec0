// The board's rules through `agent kanban ...` against a real daemon on a temp AGENT_HOME.
import { spawn } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, runCli, stopDaemon, tempHome } from "../helpers/cli.js";
import { type KanbanHome, kanbanHome, waitFor } from "./board-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
  assert.is((await h.cli(["profile", "create", "writer", "--no-alias"])).code, 0);
  assert.is((await h.cli(["profile", "create", "ops", "--no-alias"])).code, 0);
});
test.after(async () => {
  await h.dispose();
});

const count = async () => (await h.json(["kanban", "list", "--all"])).tasks.length;

test("create then list works first time on a fresh home (the daemon starts on demand)", async () => {
  const { home, cleanup } = tempHome();
  try {
    const env = { HOME: home, AGENT_PROFILE: "" };
    const created = await runCli(["kanban", "create", "Write the release notes"], { home, env });
    assert.is(created.code, 0, created.stderr);
    assert.match(created.stdout, /created t_[0-9a-f]{8} \(ready, default\)/);
    const listed = await runCli(["kanban", "list"], { home, env });
    assert.is(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /ready\s+0\s+default\s+\S+\s+Write the release notes/);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test("create with a mistyped assignee is refused with the closest profile and how to create it; nothing is created", async () => {
  const before = await count();
  const r = await h.cli(["kanban", "create", "Draft", "--assignee", "wirter"]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /no profile named "wirter" \(did you mean "writer"\?\)/);
  assert.match(r.stderr, /agent profile create wirter/);
  const far = await h.cli(["kanban", "create", "Draft", "--assignee", "ghost"]);
  assert.is(far.code, 1, far.stderr);
  assert.match(far.stderr, /no profile named "ghost" \(profiles: default, ops, writer\); to create it: agent profile create ghost/);
  assert.is(await count(), before, "nothing was created");
});

test("without an assignee a task falls back to kanban.default_assignee when it is set, else the default profile", async () => {
  assert.is((await h.json(["kanban", "create", "No assignee given"])).task.assignee, "default");
  assert.is((await h.cli(["config", "set", "kanban.default_assignee", "ops"])).code, 0);
  try {
    assert.is((await h.json(["kanban", "create", "No assignee given"])).task.assignee, "ops");
    const r = await h.cli(["kanban", "create", "Deploy", "--assignee", "nobody"]);
    assert.is(r.code, 1, "an explicit unknown assignee is refused even with a default assignee set");
  } finally {
    assert.is((await h.cli(["config", "set", "kanban.default_assignee", ""])).code, 0);
  }
});

test("a known assignee is kept as given", async () => {
  assert.is((await h.json(["kanban", "create", "Poem", "--assignee", "writer"])).task.assignee, "writer");
});

test("create --triage makes a triage task, unassigned until decomposed or promoted", async () => {
  const t = (await h.json(["kanban", "create", "Vague idea", "--triage"])).task;
  assert.is(t.status, "triage");
  assert.is(t.assignee, null);
  const [p] = (await h.json(["kanban", "promote", t.id])).tasks;
  assert.is(p.status, "ready");
  assert.is(p.assignee, "default");
});

test("create is ready when every parent is done and todo otherwise", async () => {
  const parent = await h.create("Parent");
  const child = await h.create("Child", "--parent", parent);
  assert.is(await h.status(child), "todo");
  await h.json(["kanban", "complete", parent, "--summary", "ok"]);
  assert.is(await h.status(child), "ready");
  assert.is(await h.status(await h.create("Late child", "--parent", parent)), "ready");
});

test("create with an unknown parent fails with exit 1 and creates nothing", async () => {
  const before = await count();
  const r = await h.cli(["kanban", "create", "Orphan", "--parent", "t_00000000"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /unknown parent t_00000000/);
  assert.is(await count(), before);
});

test("the same idempotency key returns the existing task", async () => {
  const a = await h.json(["kanban", "create", "Once", "--idempotency-key", "k-1"]);
  const b = await h.json(["kanban", "create", "Once again", "--idempotency-key", "k-1"]);
  assert.is(a.created, true);
  assert.is(b.created, false);
  assert.is(b.task.id, a.task.id);
  assert.is(b.task.title, "Once");
});

test("create records priority, retries, runtime, skills and the body", async () => {
  const t = (
    await h.json([
      "kanban",
      "create",
      "Full",
      "--body",
      "details",
      "--priority",
      "5",
      "--max-retries",
      "4",
      "--max-runtime",
      "1h30m",
      "--skill",
      "a",
      "--skill",
      "b",
    ])
  ).task;
  assert.equal([t.body, t.priority, t.max_retries, t.max_runtime, t.skills], ["details", 5, 4, 5400, ["a", "b"]]);
  assert.match(t.id, /^t_[0-9a-f]{8}$/);
});

test("--max-runtime reads a duration as a cron schedule does (the one parser): spaced parts and any case", async () => {
  for (const [text, seconds] of [
    ["1h 30m", 5400],
    ["2H", 7200],
    ["90", 90],
  ] as const) {
    const t = (await h.json(["kanban", "create", `Runtime ${text}`, "--max-runtime", text])).task;
    assert.is(t.max_runtime, seconds, text);
  }
});

test("a task cannot be linked to itself", async () => {
  const a = await h.create("Self");
  const r = await h.cli(["kanban", "link", a, a]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /cannot depend on itself/);
});

test("a link that would close a cycle is refused and changes nothing", async () => {
  const a = await h.create("A");
  const b = await h.create("B", "--parent", a);
  const c = await h.create("C", "--parent", b);
  const r = await h.cli(["kanban", "link", c, a]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /cycle/);
  assert.equal((await h.show(a)).parents, []);
});

test("linking an unfinished parent demotes a ready child to todo, and unlinking makes it ready again", async () => {
  const parent = await h.create("Blocker");
  const child = await h.create("Was ready");
  assert.is(await h.status(child), "ready");
  const linked = await h.json(["kanban", "link", parent, child]);
  assert.is(linked.child.status, "todo");
  assert.ok(linked.child.events.some((e: any) => e.type === "demoted"));
  const unlinked = await h.json(["kanban", "unlink", parent, child]);
  assert.is(unlinked.child.status, "ready");
});

test("readiness follows chains: each task becomes ready only when the one before is done", async () => {
  const a = await h.create("Step 1");
  const b = await h.create("Step 2", "--parent", a);
  const c = await h.create("Step 3", "--parent", b);
  assert.equal([await h.status(b), await h.status(c)], ["todo", "todo"]);
  await h.json(["kanban", "complete", a, "--summary", "1"]);
  assert.equal([await h.status(b), await h.status(c)], ["ready", "todo"]);
  await h.json(["kanban", "complete", b, "--result", "2"]);
  assert.is(await h.status(c), "ready");
});

test("readiness follows fan-ins: a task waits for every parent, and archived counts as finished", async () => {
  const p1 = await h.create("Left");
  const p2 = await h.create("Right");
  const join = await h.create("Join", "--parent", p1, "--parent", p2);
  await h.json(["kanban", "complete", p1, "--summary", "l"]);
  assert.is(await h.status(join), "todo");
  await h.json(["kanban", "archive", p2]);
  assert.is(await h.status(join), "ready");
});

test("complete without a summary or result fails with exit 1 and leaves the task as it was", async () => {
  const a = await h.create("Unfinished");
  const r = await h.cli(["kanban", "complete", a]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /--summary/);
  assert.is(await h.status(a), "ready");
});

test("complete takes several ids, and one unknown id among them changes none", async () => {
  const a = await h.create("One");
  const b = await h.create("Two");
  const bad = await h.cli(["kanban", "complete", a, "t_deadbeef", b, "--summary", "x"]);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, /no task t_deadbeef/);
  assert.equal([await h.status(a), await h.status(b)], ["ready", "ready"]);
  const ok = await h.json(["kanban", "complete", a, b, "--summary", "both"]);
  assert.equal(
    ok.tasks.map((t: any) => [t.status, t.summary, t.consecutive_failures]),
    [
      ["done", "both", 0],
      ["done", "both", 0],
    ],
  );
});

test("a closed task cannot be completed again", async () => {
  const a = await h.create("Done once");
  await h.json(["kanban", "complete", a, "--summary", "x"]);
  const r = await h.cli(["kanban", "complete", a, "--summary", "again"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /already closed/);
});

test("schedule parks a task with its reason, and unblock brings it back through its parents", async () => {
  const parent = await h.create("Gate");
  const a = await h.create("Follow-up");
  const [s] = (await h.json(["kanban", "schedule", a, "check", "again", "tomorrow"])).tasks;
  assert.equal([s.status, s.reason], ["scheduled", "check again tomorrow"]);
  await h.json(["kanban", "link", parent, a]);
  const [u] = (await h.json(["kanban", "unblock", a])).tasks;
  assert.is(u.status, "todo");
  await h.json(["kanban", "complete", parent, "--summary", "open"]);
  assert.is(await h.status(a), "ready");
});

test("block records the reason and unblock makes the task ready again", async () => {
  const a = await h.create("Needs a human");
  const [b] = (await h.json(["kanban", "block", a, "--reason", "which database?"])).tasks;
  assert.equal([b.status, b.reason], ["blocked", "which database?"]);
  const [u] = (await h.json(["kanban", "unblock", a])).tasks;
  assert.equal([u.status, u.reason, u.consecutive_failures], ["ready", null, 0]);
});

test("unblock of a task that is neither blocked nor scheduled fails with exit 1", async () => {
  const a = await h.create("Fine");
  const r = await h.cli(["kanban", "unblock", a]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /only blocked or scheduled/);
});

test("reclaim of a task that is not running fails with exit 1", async () => {
  const a = await h.create("Idle");
  const r = await h.cli(["kanban", "reclaim", a]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /only running tasks/);
});

test("assign changes the assignee of several tasks, and an unknown profile changes nothing", async () => {
  const a = await h.create("X");
  const b = await h.create("Y");
  const r = await h.cli(["kanban", "assign", a, b, "ghost"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /agent profile create ghost/);
  const typo = await h.cli(["kanban", "assign", a, b, "writr"]);
  assert.is(typo.code, 1);
  assert.match(typo.stderr, /did you mean "writer"\?/);
  assert.equal([(await h.show(a)).assignee, (await h.show(b)).assignee], ["default", "default"]);
  const ok = await h.json(["kanban", "assign", a, b, "writer"]);
  assert.equal(
    ok.tasks.map((t: any) => t.assignee),
    ["writer", "writer"],
  );
});

test("a worker may not complete or block a task that is not its own, but may comment on it", async () => {
  const a = await h.create("Someone else's");
  const worker = { AGENT_KANBAN_TASK: "t_11111111", AGENT_KANBAN_RUN_ID: "r_1" };
  const done = await h.cli(["kanban", "complete", a, "--summary", "mine now"], worker);
  assert.is(done.code, 1);
  assert.match(done.stderr, /only its own running task/);
  const blocked = await h.cli(["kanban", "block", a, "no"], worker);
  assert.is(blocked.code, 1);
  assert.is(await h.status(a), "ready");
  const commented = await h.json(["kanban", "comment", a, "looks", "good"], worker);
  assert.equal(commented.task.comments.at(-1).body, "looks good");
});

test("comments, runs, stats and show answer with --json", async () => {
  const a = await h.create("Discussed");
  await h.json(["kanban", "comment", a, "first"]);
  const shown = await h.show(a);
  assert.is(shown.comments[0].body, "first");
  assert.equal((await h.json(["kanban", "runs", a])).runs, []);
  const stats = await h.json(["kanban", "stats"]);
  assert.ok(stats.total >= 1 && stats.by_status.ready >= 1);
});

test("list filters by status and assignee, and hides archived tasks unless --all", async () => {
  const a = await h.create("Filtered", "--assignee", "ops");
  await h.json(["kanban", "archive", a]);
  assert.not.ok((await h.json(["kanban", "list"])).tasks.some((t: any) => t.id === a));
  assert.ok((await h.json(["kanban", "list", "--all"])).tasks.some((t: any) => t.id === a));
  const archived = (await h.json(["kanban", "list", "--status", "archived", "--assignee", "ops"])).tasks;
  assert.equal(
    archived.map((t: any) => t.id),
    [a],
  );
  const r = await h.cli(["kanban", "list", "--status", "sideways"]);
  assert.is(r.code, 1);
});

test("mistakes exit 1 (the board's refusals) or 2 (the parser's: unknown subcommand or flag, bad number) with a clear message and change nothing", async () => {
  const before = await count();
  for (const [code, args] of [
    [1, ["kanban", "create"]],
    [1, ["kanban", "create", "   "]],
    [1, ["kanban", "create", "x", "--max-runtime", "soon"]],
    [2, ["kanban", "create", "x", "--bogus"]],
    [2, ["kanban", "create", "x", "--priority", "high"]],
    [1, ["kanban", "link", "t_00000001"]],
    [2, ["kanban", "frobnicate"]],
    [1, ["kanban", "show", "t_99999999"]],
    [1, ["kanban", "boards", "create", "Bad Name"]],
  ] as const) {
    const r = await h.cli([...args]);
    assert.is(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.ok(r.stderr.trim().length > 0, args.join(" "));
  }
  assert.is(await count(), before);
});

test("a mistyped id among several is a usage error and blocks none of them", async () => {
  const id = (await h.json(["kanban", "create", "Keep me ready"])).task.id;
  const r = await h.cli(["kanban", "block", id, "t_nope", "--reason", "r"]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /t_nope is not a task id/);
  assert.is((await h.json(["kanban", "show", id])).task.status, "ready");
});

test("boards: create, use and list, and --board picks one per command", async () => {
  const created = await h.json(["kanban", "boards", "create", "side"]);
  assert.is(created.created, true);
  const id = (await h.json(["kanban", "create", "On the side", "--board", "side"])).task.id;
  assert.not.ok((await h.json(["kanban", "list"])).tasks.some((t: any) => t.id === id));
  await h.json(["kanban", "boards", "use", "side"]);
  try {
    const listed = await h.json(["kanban", "list"]);
    assert.is(listed.board, "side");
    assert.equal(
      listed.tasks.map((t: any) => t.id),
      [id],
    );
    const boards = await h.json(["kanban", "boards", "list"]);
    assert.equal(
      boards.boards.map((b: any) => [b.name, b.current]),
      [
        ["default", false],
        ["side", true],
      ],
    );
  } finally {
    await h.json(["kanban", "boards", "use", "default"]);
  }
  const missing = await h.cli(["kanban", "list", "--board", "nope"]);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /no board named "nope"/);
});

test("watch prints each board event as it happens", async () => {
  const child = spawn(process.execPath, [CLI, "kanban", "watch", "--json"], {
    env: { ...process.env, ...h.env, AGENT_HOME: h.home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  try {
    // The watch is open once an event created after it shows up; create until one does.
    const id = await waitFor(
      () => `a created event in watch output: ${out}`,
      async () => {
        const t = await h.create("Watched");
        return out.includes(t) ? t : null;
      },
      15_000,
    );
    const line = out.split("\n").find((l) => l.includes(id))!;
    const event = JSON.parse(line);
    assert.equal([event.type, event.status, event.board], ["created", "ready", "default"]);
  } finally {
    child.kill("SIGINT");
  }
});

test("log of a task that never ran says there is no log yet", async () => {
  const a = await h.create("Silent");
  const r = await h.cli(["kanban", "log", a]);
  assert.is(r.code, 0);
  assert.match(r.stderr, /no log/);
});

test.run();

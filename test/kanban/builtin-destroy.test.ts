// `agent actors destroy` on the product's own actors (a kanban board, a profile's cron table, a
// chat session) is refused by the daemon, names the command that owns the data, and changes
// nothing: the board's tasks, the cron jobs and the session are all still there afterwards.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { rpcConnect } from "../helpers/cli.js";
import { type KanbanHome, kanbanHome } from "./board-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
});
test.after(async () => {
  await h.dispose();
});

async function actorOf(name: string): Promise<{ actor_id: string; key: string; builtin: boolean }> {
  const list = await h.json(["actors", "list", "--name", name]);
  assert.is(list.actors.length, 1, `one ${name} actor: ${JSON.stringify(list.actors)}`);
  return list.actors[0];
}

test("destroying a board actor is refused, names the kanban commands, and every task stays", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await h.create(`task ${i}`, "--triage"));
  const board = await actorOf("board");
  assert.ok(board.builtin, "listed as built-in");
  const r = await h.cli(["actors", "destroy", board.actor_id]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /built-in board actor/);
  assert.match(r.stderr, /agent kanban boards delete default/);
  const listed = (await h.json(["kanban", "list", "--all"])).tasks.map((t: { id: string }) => t.id).sort();
  assert.equal(listed, [...ids].sort());
  assert.is((await actorOf("board")).actor_id, board.actor_id, "the actor is still there");
  assert.match((await h.cli(["actors", "list"])).stdout, /\(built-in\)/);
});

test("destroying a cron actor is refused, names agent cron remove, and the jobs stay", async () => {
  const added = await h.json(["cron", "add", "every 1d", "--script", "echo hi", "--name", "keep-me"]);
  const cron = await actorOf("cron");
  const r = await h.cli(["actors", "destroy", cron.actor_id]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /agent cron remove/);
  const jobs = (await h.json(["cron", "list"])).jobs.map((j: { id: string }) => j.id);
  assert.equal(jobs, [added.job.id]);
});

test("calling a cron actor's action is refused (it would skip the cron service), and no job is added", async () => {
  const before = (await h.json(["cron", "list"])).jobs.length;
  const cron = await actorOf("cron");
  const r = await h.cli(["actors", "call", cron.actor_id, "add", '{"schedule":"every 1m","script":"touch /tmp/x"}']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /built-in cron actor and is not called this way/);
  assert.is((await h.json(["cron", "list"])).jobs.length, before);
});

test("destroying a session actor is refused, names agent sessions delete, and the session stays", async () => {
  const conn = await rpcConnect(h.home);
  let sessionId: string;
  try {
    const r = (await conn.rpc.sendRequest("chat.sessions.create", { title: "keep this chat" })) as { session: { id: string } };
    sessionId = r.session.id;
  } finally {
    conn.close();
  }
  const session = await actorOf("session");
  const r = await h.cli(["actors", "destroy", session.actor_id]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, `agent sessions delete ${sessionId}`);
  const { sessions } = await h.json(["sessions", "list"]);
  assert.ok(
    sessions.some((s: { id: string }) => s.id === sessionId),
    "the session is still listed",
  );
});

test("the daemon refuses the destroy from any client with actor.builtin_refused", async () => {
  const board = await actorOf("board");
  const conn = await rpcConnect(h.home);
  try {
    await conn.rpc.sendRequest("actors.destroy", { actorId: board.actor_id });
    assert.unreachable("refused");
  } catch (error) {
    const e = error as { data?: { code?: string } };
    assert.is(e.data?.code, "actor.builtin_refused", JSON.stringify(e));
  } finally {
    conn.close();
  }
  assert.is((await actorOf("board")).actor_id, board.actor_id);
});

test("agent kanban boards delete removes a board and its tasks, after asking; the default board stays usable", async () => {
  assert.is((await h.cli(["kanban", "boards", "create", "scratch"])).code, 0);
  await h.create("scratch one", "--board", "scratch", "--triage");
  await h.create("scratch two", "--board", "scratch", "--triage");
  assert.is((await h.cli(["kanban", "boards", "use", "scratch"])).code, 0);
  const asked = await h.cli(["kanban", "boards", "delete", "scratch"]);
  assert.is(asked.code, 1, "no terminal and no -y: refused");
  assert.match(asked.stderr, /Delete board scratch and its 2 task\(s\)\? Nothing was changed: confirm with -y/);
  assert.is((await h.json(["kanban", "list", "--board", "scratch"])).tasks.length, 2);
  const r = await h.json(["kanban", "boards", "delete", "scratch", "-y"]);
  assert.equal(r, { board: "scratch", tasks: 2, current: "default" });
  const boards = await h.json(["kanban", "boards", "list"]);
  assert.equal(
    boards.boards.map((b: { name: string }) => b.name),
    ["default"],
  );
  assert.is(boards.current, "default");
  const gone = await h.cli(["kanban", "list", "--board", "scratch"]);
  assert.is(gone.code, 1);
  assert.match(gone.stderr, /no board named "scratch"/);
  assert.is((await h.json(["actors", "list", "--name", "board"])).actors.length, 1, "its actor is gone");
  const missing = await h.cli(["kanban", "boards", "delete", "nowhere", "-y"]);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /no board named "nowhere"/);
  // A board of that name made again starts empty.
  assert.is((await h.json(["kanban", "boards", "create", "scratch"])).created, true);
  assert.is((await h.json(["kanban", "list", "--board", "scratch"])).tasks.length, 0);
  // The default board and its tasks are untouched.
  assert.is((await h.json(["kanban", "list", "--all"])).tasks.length, 3);
});

test.run();

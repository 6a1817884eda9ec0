// `agent sessions`, `agent backup` and `agent import` as a user runs them, against one daemon on a
// temp home with sessions made by real turns (the fake model echoes the prompt).
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome, driveChat, waitFor } from "../agent/helpers.js";
import { runCli, tempHome } from "../helpers/cli.js";

let h: Awaited<ReturnType<typeof chatHome>>;

test.before(async () => {
  h = await chatHome({
    respond: (req) => ({ text: `reply to: ${String(req.body.messages.at(-1).content).slice(0, 80)}` }),
  });
});

test.after(async () => {
  await h.dispose();
});

async function newSession(prompt: string): Promise<string> {
  const r = await h.chat(["-q", prompt, "--json"]);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).session_id;
}

const json = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const r = await h.cli([...args, "--json"], { env });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout);
};

test("agent sessions list, show, search and export show a session made by a chat turn", async () => {
  const id = await newSession("tell me about the pangolin migration");
  const list = (await json(["sessions", "list"])).sessions;
  const entry = list.find((s: any) => s.id === id);
  assert.is(entry.kind, "chat");
  assert.is(entry.message_count, 2);
  const text = await h.cli(["sessions", "list"]);
  assert.match(text.stdout, /SESSION\s+KIND/);
  const show = await json(["sessions", "show", id]);
  assert.equal(
    show.messages.map((m: any) => m.role),
    ["user", "assistant"],
  );
  assert.match((await h.cli(["sessions", "show", id])).stdout, /\[m1\] assistant: reply to: tell me about the pangolin/);
  const found = (await json(["sessions", "search", "pangolin"])).results;
  assert.is(found[0].session_id, id);
  assert.match((await h.cli(["sessions", "search", "pangolins"])).stdout, new RegExp(`${id}[\\s\\S]*> m0`));
  const md = await h.cli(["sessions", "export", id]);
  assert.match(md.stdout, /pangolin migration/);
  const exported = await json(["sessions", "export", id, "--format", "json"]);
  assert.is(exported.session.id, id);
  assert.is(exported.messages.length, 2);
  const file = join(h.home, "out.json");
  assert.is((await h.cli(["sessions", "export", id, "--format", "json", "-o", file])).code, 0);
  assert.is(JSON.parse(readFileSync(file, "utf8")).messages.length, 2);
});

test("agent sessions delete removes the session from the listing and from search", async () => {
  const id = await newSession("the okapi question");
  assert.is((await json(["sessions", "search", "okapi"])).results.length, 1);
  const r = await json(["sessions", "delete", id]);
  assert.is(r.deleted, id);
  assert.not.ok((await json(["sessions", "list"])).sessions.some((s: any) => s.id === id));
  assert.equal((await json(["sessions", "search", "okapi"])).results, []);
});

test("sessions belong to their profile: list and search see the current profile's unless --all-profiles", async () => {
  assert.is((await h.cli(["profile", "create", "writer", "--no-alias"])).code, 0);
  const theirs = await h.cli(["-p", "writer", "chat", "-q", "the axolotl draft", "--json"]);
  assert.is(theirs.code, 0, theirs.stderr);
  const id = JSON.parse(theirs.stdout).session_id;
  assert.not.ok((await json(["sessions", "list"])).sessions.some((s: any) => s.id === id));
  assert.not.ok((await json(["chat", "--list"])).sessions.some((s: any) => s.id === id));
  assert.ok((await json(["-p", "writer", "sessions", "list"])).sessions.some((s: any) => s.id === id));
  assert.ok((await json(["sessions", "list", "--all-profiles"])).sessions.some((s: any) => s.id === id));
  assert.equal((await json(["sessions", "search", "axolotl"])).results, []);
  assert.is((await json(["-p", "writer", "sessions", "search", "axolotl"])).results[0].session_id, id);
  assert.is((await json(["sessions", "search", "axolotl", "--all-profiles"])).results[0].profile, "writer");
});

test("a kanban worker's session is listed with its kind", async () => {
  const r = await h.chat(["-q", "work the task", "--json"], { env: { AGENT_KANBAN_TASK: "t_1" } });
  assert.is(r.code, 0, r.stderr);
  const id = JSON.parse(r.stdout).session_id;
  const kanban = (await json(["sessions", "list", "--kind", "kanban"])).sessions;
  assert.equal(
    kanban.map((s: any) => s.id),
    [id],
  );
  assert.match((await h.cli(["sessions", "list"])).stdout, new RegExp(`${id}\\s+kanban`));
});

test("bad arguments get clear errors and change nothing", async () => {
  const cases: Array<[string[], number, RegExp]> = [
    [["sessions", "show"], 2, /takes one argument/],
    [["sessions", "search"], 2, /needs a query/],
    [["sessions", "export", "x", "--format", "pdf"], 2, /--format is md or json/],
    [["sessions", "list", "--limit", "0"], 2, /--limit must be a positive integer/],
    [["sessions", "list", "--kind", "robot"], 2, /--kind is chat, cron, kanban or messaging/],
    [["sessions", "frobnicate"], 2, /unknown subcommand/],
    [["sessions", "show", "s_nope"], 1, /no session s_nope/],
    [["backup", "--label", "no spaces"], 2, /--label uses/],
    [["import"], 2, /takes one archive/],
    [["import", join(h.home, "missing.tar.gz")], 1, /no archive at/],
  ];
  for (const [args, code, message] of cases) {
    const r = await h.cli(args);
    assert.is(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});

test("an append writes one journal line, not the whole sessions listing", async () => {
  const id = await newSession("the first turn");
  await h.cli(["daemon", "restart"]);
  const snapshot = join(h.home, "data", "agent", "sessions.json");
  const journal = join(h.home, "data", "agent", "sessions.jsonl");
  const before = statSync(snapshot);
  const lines = existsSync(journal) ? readFileSync(journal, "utf8").split("\n").filter(Boolean).length : 0;
  await h.chat(["-q", "a second turn", "--resume", id]);
  assert.is(statSync(snapshot).mtimeMs, before.mtimeMs, "the snapshot was not rewritten");
  assert.ok(readFileSync(journal, "utf8").split("\n").filter(Boolean).length > lines);
  assert.is((await json(["sessions", "list"])).sessions.find((s: any) => s.id === id).message_count, 4);
});

test("the search index is persisted: after a restart, and after a kill -9, search finds every message without a rebuild", async () => {
  const id = await newSession("the quokka census");
  await h.cli(["daemon", "stop"]);
  assert.is((await json(["sessions", "search", "quokka"])).results[0].session_id, id);
  await h.chat(["-q", "and the wallaby census", "--resume", id]);
  const { pid } = await json(["daemon", "status"]);
  process.kill(pid, "SIGKILL");
  await waitFor("the killed daemon to be gone", () => !isAlive(pid), 10_000);
  const after = (await json(["sessions", "search", "wallaby"])).results;
  assert.is(after[0].session_id, id);
  assert.is(after[0].message_id, "m2");
});

test("agent sessions reindex rebuilds the index from the transcripts", async () => {
  const id = await newSession("the tapir notes");
  const r = await json(["sessions", "reindex"]);
  assert.ok(r.sessions >= 1 && r.messages >= 2, JSON.stringify(r));
  assert.match((await h.cli(["sessions", "reindex"])).stdout, /reindexed \d+ messages of \d+ sessions/);
  assert.ok(existsSync(join(h.home, "data", "agent", "search", "index.json")), "the rebuilt index is written as a snapshot");
  assert.is((await json(["sessions", "search", "tapir"])).results[0].session_id, id);
});

test("/branch copies the history into a new linked session and /sessions <n> resumes another", async () => {
  const other = await newSession("the gecko plan");
  const chat = driveChat(h);
  chat.send("the ibis plan");
  await chat.expect(/reply to: the ibis plan/);
  let from = chat.out.length;
  chat.send("/branch ibis take two");
  const m = await chat.expect(/branched: now in session (\S+) "ibis take two" \(2 messages copied from (\S+)\)/, from);
  const [, branchId, parentId] = m;
  chat.send("after the branch");
  await chat.expect(/reply to: after the branch/, from);
  from = chat.out.length;
  chat.send("/sessions");
  await chat.expect(/\/sessions <n\|id> resumes one/, from);
  const row = new RegExp(`(\\d+)\\s+${other}`).exec(chat.out.slice(from))!;
  chat.send(`/sessions ${row[1]}`);
  await chat.expect(new RegExp(`resumed session ${other}`), from);
  assert.is(await chat.end(), 0);
  const list = (await json(["sessions", "list"])).sessions;
  const branch = list.find((s: any) => s.id === branchId);
  assert.is(branch.parent_id, parentId);
  assert.is(branch.message_count, 4);
  assert.is(list.find((s: any) => s.id === parentId).message_count, 2);
});

test("a backup taken while sessions are written restores into an empty home that works", async () => {
  const id = await newSession("the marmot archive");
  const client = await connectDaemon({ home: h.home });
  let writing = true;
  let appended = 0;
  const writes = (async () => {
    while (writing) {
      await client.call("chat.sessions.append", { sessionId: id, messages: [{ role: "user", content: `marmot note ${appended}` }] });
      appended++;
    }
  })();
  try {
    await waitFor("some appends before the backup", () => appended >= 5, 10_000);
    const backup = await json(["backup", "--label", "live"]);
    assert.match(backup.path, /agent-backup-\d{8}-\d{6}-live\.tar\.gz$/);
    writing = false;
    await writes;
    const target = tempHome("ri");
    try {
      const restored = await runCli(["import", backup.path, "-y", "--json"], { home: target.home });
      assert.is(restored.code, 0, restored.stderr);
      const list = JSON.parse((await runCli(["sessions", "list", "--json"], { home: target.home })).stdout).sessions;
      const s = list.find((x: any) => x.id === id);
      assert.ok(s && s.message_count >= 7, JSON.stringify(s));
      const show = JSON.parse((await runCli(["sessions", "show", id, "--json"], { home: target.home })).stdout);
      assert.is(show.messages.length, s.message_count, "the listing and the transcript agree");
      const found = JSON.parse((await runCli(["sessions", "search", "marmot", "--json"], { home: target.home })).stdout).results;
      assert.is(found[0].session_id, id);
    } finally {
      await runCli(["daemon", "stop"], { home: target.home });
      target.cleanup();
    }
  } finally {
    writing = false;
    await writes.catch(() => undefined);
    client.close();
  }
});

test("import refuses a home that is not empty, and an archive that is not a backup", async () => {
  const backup = await json(["backup", "--quick"]);
  const r = await h.cli(["import", backup.path]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /is not empty.*--force/);
  const target = tempHome("rj");
  try {
    const junk = join(target.home, "..", `junk-${process.pid}.tar.gz`);
    writeFileSync(junk, "not an archive");
    const empty = join(target.home, "fresh");
    mkdirSync(empty);
    const bad = await runCli(["import", junk], { home: empty });
    assert.is(bad.code, 1);
    assert.match(bad.stderr, /not a readable \.tar\.gz|not an agent backup/);
    assert.ok(!existsSync(join(empty, "data")), "nothing was restored");
  } finally {
    target.cleanup();
  }
});

test("a backup to a place that cannot be written fails at once with a clear error, and the daemon keeps answering", async () => {
  const r = await h.cli(["backup", "--output", "/proc/no-such/dir/x.tar.gz"]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /cannot write the backup to \/proc\/no-such\/dir/);
  assert.is((await h.cli(["daemon", "status", "--json"])).code, 0);
});

test("a backup removes the staging folder a killed daemon left in the home", async () => {
  const stale = join(h.home, "backups", ".staging-999999999-1");
  mkdirSync(join(stale, "data"), { recursive: true });
  writeFileSync(join(stale, "data", "left.json"), "{}");
  const backup = await json(["backup", "--quick"]);
  assert.ok(existsSync(backup.path));
  assert.not.ok(existsSync(stale), "the stale staging folder is gone");
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test.run();

import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome } from "../agent/helpers.js";
import { runCli, tempHome } from "../helpers/cli.js";
import { stopServer, Tmux, tuiCommand } from "./tmux.js";

/**
 * The TUI end to end, as a person uses it: `agent --tui` in tmux on a temp home with the fake
 * model server, keys in, the screen read back with capture-pane.
 */

type Home = Awaited<ReturnType<typeof chatHome>>;
let h: Home;
const open: Tmux[] = [];

function lastUser(body: { messages?: Array<{ role: string; content: unknown }> }): { role: string; text: string } {
  const m = body.messages?.[body.messages.length - 1];
  return { role: m?.role ?? "", text: typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "") };
}

test.before(async () => {
  h = await chatHome({
    respond: (req) => {
      const last = lastUser(req.body);
      if (last.role === "tool") return { text: "The folder has **files**." };
      if (last.text.includes("use a tool")) return { toolCalls: [{ name: "list_files", arguments: { path: "." } }] };
      if (last.text.includes("escape")) return { text: "safe\u001b]0;pwned\u0007 text\u001b[2J end" };
      if (last.text.includes("slow")) return { text: "word ".repeat(400), chunkDelayMs: 100, chunkChars: 5 };
      return { text: "# Answer\n\n- first point\n- second point\n\n```\ncode here\n```\n\nDone.", chunkDelayMs: 120, chunkChars: 6 };
    },
  });
  await h.cli(["daemon", "start"]);
  // The kanban view's tasks stay where the test put them: no worker is spawned for them.
  const capped = await h.cli(["config", "set", "kanban.max_in_progress", "0"]);
  if (capped.code !== 0) throw new Error(capped.stderr);
});

test.after(async () => {
  for (const t of open) t.kill();
  stopServer();
  await h.dispose();
});

function tui(extra = "", home = h.home, env: Record<string, string> = {}): Tmux {
  const t = new Tmux(tuiCommand(home, extra, env));
  open.push(t);
  return t;
}

test("agent --tui opens on the chat, ready to type, with Unicode borders and a status bar", async () => {
  const t = tui();
  const screen = await t.waitFor(/daemon \d+ │ profile default │ model \S*fake-model/);
  assert.match(screen, /1 Chat\s+2 Sessions\s+3 Kanban\s+4 Actors\s+5 Logs\s+6 Profiles/);
  assert.match(screen, /┌─+┐/, "box borders are Unicode glyphs");
  assert.not.match(screen, /lqqq|qqqk/, "not the ACS letters");
  assert.match(screen, /Type a message/);
  assert.match(screen, /workers/);
  t.kill();
});

test("a typed message is answered in streamed, rendered Markdown", async () => {
  const t = tui();
  await t.waitFor(/Type a message/);
  t.type("hello there");
  t.press("Enter");
  await t.waitFor(/❯ hello there/);
  // Streamed: the first point shows while the rest is still coming.
  const partial = await t.waitFor(/• first point/);
  assert.not.match(partial, /Done\./, "the answer arrives in pieces");
  const screen = await t.waitFor(/Done\./);
  assert.match(screen, /^\s+Answer\s*│?/m, "the heading without its #");
  assert.not.match(screen, /# Answer/);
  assert.match(screen, /• second point/);
  assert.match(screen, /│ code here/, "the code block set apart");
  await t.waitFor(/ctx [1-9]/);
  t.kill();
});

test("a tool call shows as one compact row that expands to its arguments and result", async () => {
  const t = tui();
  await t.waitFor(/Type a message/);
  t.type("please use a tool");
  t.press("Enter");
  const screen = await t.waitFor(/The folder has files\./);
  assert.match(screen, /▸ ⚙ list_files \{"path":"\."\}\s+✓/);
  assert.not.match(screen, /result:/, "collapsed by default");
  t.press("Escape");
  await t.waitFor(/› ▸ ⚙ list_files/);
  t.press("Enter");
  const open = await t.waitFor(/▾ ⚙ list_files/);
  // Arguments and result as readable lines, not JSON.
  assert.match(open, /│ arguments\s[\s\S]*│ {3}path: \./);
  assert.match(open, /│ result\s[^\n]*\n *│ {3}\S/);
  t.kill();
});

test("slash commands run in the chat, with Tab completing their names", async () => {
  const t = tui();
  await t.waitFor(/Type a message/);
  t.type("/ski");
  t.press("Tab");
  await t.waitFor(/│\/skills /);
  t.press("Enter");
  await t.waitFor(/no skills yet \(add folders with a SKILL\.md/);
  t.type("/help");
  t.press("Enter");
  const screen = await t.waitFor(/\/reload-skills/);
  assert.match(screen, /\/handoff/);
  t.type("/nosuch");
  t.press("Enter");
  await t.waitFor(/unknown command \/nosuch/);
  t.kill();
});

test("model text cannot drive the terminal: its escape sequences are removed", async () => {
  const t = tui();
  await t.waitFor(/Type a message/);
  t.type("show an escape");
  t.press("Enter");
  const screen = await t.waitFor(/safe text end/);
  assert.not.match(screen, /pwned/);
  assert.is.not(t.paneTitle(), "pwned", "the window title was not changed");
  assert.match(screen, /❯ show an escape/, "the screen was not cleared");
  t.kill();
});

test("Ctrl-C interrupts a running turn, and twice on an empty input quits", async () => {
  const t = tui();
  await t.waitFor(/Type a message/);
  t.type("a slow answer");
  t.press("Enter");
  await t.waitFor(/word word/);
  await t.waitFor(/answering… \(Ctrl-C interrupts\)/);
  t.press("C-c");
  await t.waitFor(/\(interrupted\)/);
  t.type("draft");
  t.press("C-c");
  await t.waitForNo(/│draft/);
  t.press("C-c");
  await t.waitFor(/press Ctrl-C again to quit/);
  t.press("C-c");
  assert.is(await t.waitForExit(), 0, "the TUI exited with status 0");
  t.kill();
});

test("the keys overlay lists every key, and the palette switches views", async () => {
  const t = tui();
  await t.waitFor(/Type a message/);
  t.press("F1");
  const keys = await t.waitFor(/Keys \(Esc closes/);
  assert.match(keys, /Ctrl-P\s+command palette/);
  t.press("Escape");
  await t.waitForNo(/Keys \(Esc closes/);
  t.press("C-p");
  await t.waitFor(/Command palette/);
  t.type("logs");
  t.press("Enter");
  await t.waitFor(/Components/);
  await t.waitFor(/daemon ready/);
  t.kill();
});

test("the kanban view: a task created from the keys appears in its column, and one made elsewhere arrives live", async () => {
  const t = tui();
  await t.waitFor(/Type a message/);
  t.press("F4");
  await t.waitFor(/┌─ ready \(\d+\) ─/);
  t.press("c");
  await t.waitFor(/New task: title/);
  t.type("write the release notes");
  t.press("Enter");
  await t.waitFor(/Assignee/);
  t.press("Enter");
  let screen = await t.waitFor(/created (t_[0-9a-f]{8}) in ready/);
  const id = screen.match(/created (t_[0-9a-f]{8}) in ready/)![1]!;
  screen = await t.waitFor(new RegExp(`${id} · def`));
  // The card sits under the ready column's header.
  const lines = screen.split("\n");
  const header = lines.findIndex((l) => /┌─ ready \(1\) ─/.test(l));
  const col = lines[header]!.indexOf("┌─ ready");
  assert.ok(header >= 0, "a ready column with one task");
  assert.match(lines[header + 1]!.slice(col), /^│write the release/);
  const made = await h.cli(["kanban", "create", "made from the CLI", "--json"]);
  assert.is(made.code, 0, made.stderr);
  await t.waitFor(/┌─ ready \(2\) ─[\s\S]*made from the CLI/);
  t.press("Enter");
  await t.waitFor(new RegExp(`Task ${id} \\(Esc back\\)`));
  t.press("m");
  await t.waitFor(/Comment on/);
  t.type("looks good");
  t.press("Enter");
  await t.waitFor(/Comments \(1\)[\s\S]*looks good/);
  t.kill();
});

test("the sessions view finds a message by full-text search and opens its session", async () => {
  const t = tui();
  await t.waitFor(/Type a message/);
  t.type("tell me about zanzibar");
  t.press("Enter");
  await t.waitFor(/Done\./);
  t.press("F3");
  await t.waitFor(/Sessions \(\d+\)/);
  t.press("/");
  await t.waitFor(/Search sessions/);
  t.type("zanzibar");
  t.press("Enter");
  await t.waitFor(/\d+ hits? for "zanzibar"/);
  await t.waitFor(/◀ match/);
  t.press("Enter");
  await t.waitFor(/❯ tell me about zanzibar[\s\S]*session s_\S+ .*: \d+ messages/);
  t.kill();
});

test("the actors view lists actors by name, and the inspector shows state, actions and a call's effect", async () => {
  await h.cli(["actors", "new", "counter"]);
  const created = await h.cli(["actors", "create", "counter", "--key", "demo"]);
  const id = created.stdout.trim();
  await h.cli(["actors", "call", id, "increment", "5"]);
  const t = tui();
  await t.waitFor(/Type a message/);
  t.press("F5");
  await t.waitFor(/counter\s+demo\s+\S+\s+/);
  // Other actors (the board, sessions) are listed too: filter by name.
  t.press("/");
  await t.waitFor(/Filter actors by name/);
  t.type("counter");
  t.press("Enter");
  await t.waitFor(/Actors named \*counter\*/);
  let screen = await t.waitFor(/count: 5/);
  assert.match(screen, /Actions \(\d+\)/);
  assert.match(screen, /increment/);
  assert.match(screen, /Connections/);
  assert.match(screen, /Traces/);
  t.press("c");
  await t.waitFor(/Action of counter to call/);
  t.type("increment");
  t.press("Enter");
  await t.waitFor(/Arguments for increment/);
  t.press("C-u");
  t.type("[2]");
  t.press("Enter");
  screen = await t.waitFor(/count: 7/);
  assert.match(screen, /increment → 7/);
  t.kill();
});

test("the window resizes cleanly: the layout follows, and the sidebar gives way on a narrow screen", async () => {
  const t = tui();
  await t.waitFor(/┌─ agent ─/);
  t.resize(100, 30);
  // The sidebar (34 columns) now ends at the new right edge, the status bar is on row 30.
  let screen = await t.waitFor(/^ {66}┌─ agent ─+┐$/m);
  screen = await t.waitFor(/^(?:.*\n){29}.*● daemon \d+/);
  assert.ok(
    screen.split("\n").every((l) => [...l].length <= 100),
    "nothing drawn past the new width",
  );
  t.resize(70, 20);
  screen = await t.waitFor(/^(?:.*\n){19}.*● daemon \d+/);
  screen = await t.waitForNo(/┌─ agent ─/);
  assert.match(screen, /└─{60,}┘/, "the input box spans the narrow width");
  t.kill();
});

test("the TUI survives a daemon restart: it reconnects, says so, and chats on", async () => {
  const t = tui();
  const before = await t.waitFor(/daemon (\d+) │/);
  const oldPid = before.match(/daemon (\d+) │/)![1];
  const r = await runCli(["daemon", "restart"], { home: h.home });
  assert.is(r.code, 0, r.stderr);
  const screen = await t.waitFor(/reconnected to the daemon \(pid (\d+)\)/, 20_000);
  const newPid = screen.match(/reconnected to the daemon \(pid (\d+)\)/)![1];
  assert.is.not(newPid, oldPid);
  await t.waitFor(new RegExp(`daemon ${newPid} │`));
  t.type("still there?");
  t.press("Enter");
  await t.waitFor(/Done\./);
  t.kill();
});

test("a 10,000-message session opens at its end and scrolls to its first message", async () => {
  const client = await connectDaemon({ home: h.home, autostart: false });
  let sessionId: string;
  try {
    sessionId = (await client.call("chat.sessions.create", { title: "long one" })).session.id;
    for (let k = 0; k < 10; k++) {
      const messages = Array.from({ length: 1000 }, (_, i) => {
        const n = k * 1000 + i;
        return n % 2 === 0 ? { role: "user" as const, content: `question number ${n}` } : { role: "assistant" as const, content: `answer number ${n}` };
      });
      await client.call("chat.sessions.append", { sessionId, messages });
    }
  } finally {
    client.close();
  }
  const t = tui(`--resume ${sessionId}`);
  await t.waitFor(/answer number 9999/);
  await t.waitFor(/10000 messages/);
  t.press("Escape");
  await t.waitFor(/› session s_/);
  t.press("g");
  await t.waitFor(/question number 0\b/, 20_000);
  t.press("G");
  await t.waitFor(/answer number 9999/);
  t.kill();
});

test("--dev shows the RPC traffic in a panel", async () => {
  const t = tui("--dev");
  const screen = await t.waitFor(/RPC traffic \(--dev\)/);
  assert.ok(screen);
  await t.waitFor(/→ [\d:.]+ #\d+ [a-z.]+ \{/);
  await t.waitFor(/← [\d:.]+ #\d+ [a-z.]+ \d+ ms/);
  t.kill();
});

test("a home without a model opens on a panel that says what to add, and the other views work", async () => {
  const { home, cleanup } = tempHome("tn");
  const t = tui("", home);
  try {
    const screen = await t.waitFor(/No model is configured yet/);
    assert.match(screen, /config\.yaml/);
    assert.match(screen, /model no model/);
    t.press("F7");
    await t.waitFor(/default \(this TUI\)/);
    t.press("F6");
    await t.waitFor(/daemon ready/);
  } finally {
    t.kill();
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test("display.statusbar: false opens without the status bar, and /statusbar toggles it for the session", async () => {
  assert.is((await h.cli(["config", "set", "display.statusbar", "false"])).code, 0);
  const t = tui();
  try {
    // Once the chat's status is in (the sidebar names the model), the status bar is gone.
    await t.waitFor(/model\s+\S*fake-model/);
    await t.waitForNo(/● daemon \d+/);
    t.type("/statusbar");
    t.press("Enter");
    await t.waitFor(/status bar on/);
    await t.waitFor(/● daemon \d+ │ profile default/);
    t.type("/statusbar");
    t.press("Enter");
    await t.waitFor(/status bar off/);
    await t.waitForNo(/● daemon \d+/);
  } finally {
    t.kill();
    assert.is((await h.cli(["config", "set", "display.statusbar", "true"])).code, 0);
  }
});

test.run();

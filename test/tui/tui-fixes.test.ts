import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, driveChat } from "../agent/helpers.js";
import { runCli, tempHome, waitFor } from "../helpers/cli.js";
import { stopServer, Tmux, tmux, tuiCommand } from "./tmux.js";

/**
 * The TUI fixes of issue 22 as a user meets them: a daemon restart mid-answer (TUI and line
 * mode), the narrow 80x24 layout, colors under tmux, the help and keys layout, the kanban detail
 * and the tool rows. The TUI runs in tmux on a temp home with the fake model server.
 */

type Home = Awaited<ReturnType<typeof chatHome>>;
let h: Home;
const open: Tmux[] = [];

function lastUser(body: { messages?: Array<{ role: string; content: unknown }> }): { role: string; text: string } {
  const m = body.messages?.[body.messages.length - 1];
  return { role: m?.role ?? "", text: typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "") };
}

/** What the library says when a pending call dies with its connection: never on a user's screen. */
const LIBRARY_TEXT = /Pending response|got disposed|Connection is (closed|disposed)|vscode-jsonrpc|jsonrpc/i;

test.before(async () => {
  h = await chatHome({
    respond: (req) => {
      const last = lastUser(req.body);
      if (last.role === "tool") return { text: "Ran it." };
      if (last.text.includes("run a command"))
        return { toolCalls: [{ name: "terminal", arguments: { command: "echo alpha; echo beta; echo gamma >&2; exit 3" } }] };
      if (last.text.includes("use a tool with a very long name"))
        return { toolCalls: [{ name: "mcp__a_server_with_a_long_name__and_a_tool_with_an_even_longer_name", arguments: { q: "x" } }] };
      if (last.text.includes("use a tool with a very long argument"))
        return { toolCalls: [{ name: "list_files", arguments: { path: `./${"deep/".repeat(40)}` } }] };
      if (last.text.includes("slow")) return { text: `${"tick ".repeat(150)}THE-END`, chunkDelayMs: 60, chunkChars: 5 };
      return { text: "Done.", chunkDelayMs: 20, chunkChars: 6 };
    },
  });
  // A restart drops the connections 300 ms after the stop instead of letting a turn run 10 s on.
  h.env.AGENT_RPC_GRACE_MS = "300";
  await h.cli(["daemon", "start"]);
  const capped = await h.cli(["config", "set", "kanban.max_in_progress", "0"]);
  if (capped.code !== 0) throw new Error(capped.stderr);
});

test.after(async () => {
  for (const t of open) t.kill();
  stopServer();
  await h.dispose();
});

function tui(width = 120, height = 40, extra = "", env: Record<string, string> = {}, home = h.home): Tmux {
  const t = new Tmux(tuiCommand(home, extra, { AGENT_RPC_GRACE_MS: "300", ...env }), width, height);
  open.push(t);
  return t;
}

const count = (s: string, re: RegExp) => (s.match(new RegExp(re.source, "g")) ?? []).length;

test("a daemon restart mid-answer: the TUI shows the answer once, and no library text", async () => {
  const t = tui(120, 40);
  await t.waitFor(/daemon \d+ │/);
  t.type("a slow answer please");
  t.press("Enter");
  await t.waitFor(/tick tick tick tick tick tick/);
  const r = await h.cli(["daemon", "restart"]);
  assert.is(r.code, 0, r.stderr);
  await t.waitFor(/reconnected to the daemon/, 20_000);
  await t.waitFor(/THE-END/, 30_000);
  await t.waitForNo(/answering…/, 10_000);
  const final = t.screen();
  assert.not.match(final, LIBRARY_TEXT, final);
  assert.is(count(final, /THE-END/), 1, final);
  // Every word of the answer once: the partial answer streamed before the restart is gone.
  assert.is(count(final, /\btick\b/), 150, final);
  t.kill();
});

test("line-mode agent chat across a daemon restart: a clear error of ours, no library text", async () => {
  const c = driveChat(h);
  c.send("another slow answer please");
  await c.expect(/tick tick tick/);
  const r = await h.cli(["daemon", "restart"]);
  assert.is(r.code, 0, r.stderr);
  await c.expect(/the daemon went away/, 0, 20_000);
  assert.not.match(c.out + c.err, LIBRARY_TEXT, c.out + c.err);
  assert.match(c.out, /error: the daemon closed the connection/);
  await c.end();
});

const lines = (screen: string) => screen.split("\n");
const statusLine = (screen: string) =>
  lines(screen)
    .filter((l) => l.trim())
    .pop() ?? "";

test("at 80x24 the sidebar is hidden (below 100 columns) and the status bar's parts shrink instead of being cut", async () => {
  const t = tui(80, 24);
  let screen = await t.waitFor(/● daemon \d+/);
  assert.not.match(screen, /┌─ agent ─/, "no sidebar at 80 columns");
  assert.match(screen, /└─{70,}┘/, "the input box spans the width");
  let bar = statusLine(screen);
  assert.ok([...bar].length <= 80, bar);
  // Every part whole, the least important ones in their short forms: nothing cut mid-word.
  assert.match(bar, /^ ● daemon \d+ │ (profile )?default │ (model default\/)?fake-model │ ctx \d+ │ tok \d+ │ (workers|w) \S+ │ F1( keys)?$/, bar);
  // A message on the bar: it goes first, whole; the least important parts give way, the daemon stays.
  t.press("C-c");
  screen = await t.waitFor(/press Ctrl-C again to quit/);
  bar = statusLine(screen);
  assert.match(bar, /^ press Ctrl-C again to quit │ ● daemon \d+ │ /, bar);
  assert.not.match(bar, /│ F1/, "the least important part left out");
  assert.match(bar, /fake-model/, "the model kept before the keys hint");
  t.resize(99, 30);
  await t.waitFor(/^(?:.*\n){29}.*● daemon \d+/);
  screen = await t.waitForNo(/┌─ agent ─/);
  t.resize(100, 30);
  await t.waitFor(/┌─ agent ─/);
  t.kill();
});

test("at 80x24 a tool row keeps its timing, even with a long argument", async () => {
  const t = tui(80, 24);
  await t.waitFor(/● daemon \d+/);
  t.type("use a tool with a very long argument");
  t.press("Enter");
  const screen = await t.waitFor(/Ran it\./);
  const row = lines(screen).find((l) => l.includes("⚙ list_files"));
  assert.ok(row, screen);
  assert.match(row!, /… {2}(✓|✗ failed) \d+ ms\s*$/, row);
  // A name too long for the row is cut too, before the status.
  t.type("use a tool with a very long name");
  t.press("Enter");
  const after = await t.waitFor(/⚙ mcp__a_server.*(✓|✗ failed) \d+ ms/);
  const long = lines(after).find((l) => l.includes("⚙ mcp__a_server"))!;
  assert.ok([...long].length <= 80, long);
  assert.match(long, /… {2}(✓|✗ failed) \d+ ms\s*$/, long);
  t.kill();
});

test("at 80x24 the kanban view shows every status, starting at triage", async () => {
  const t = tui(80, 24);
  await t.waitFor(/● daemon \d+/);
  t.press("F4");
  const screen = await t.waitFor(/┌─ triage \(\d+\) ─/);
  const board = lines(screen).slice(1, 3).join("\n");
  for (const status of ["triage", "todo", "scheduled", "ready", "running", "blocked", "review", "done"])
    assert.match(board, new RegExp(`\\b${status} \\d+`), board);
  // The first column on the left is triage; the others scroll in with → / l.
  assert.match(lines(screen)[2]!, /^┌─ triage \(/);
  for (let i = 0; i < 7; i++) t.press("l");
  await t.waitFor(/┌─ done \(\d+\) ─/);
  t.kill();
});

test("under TERM=tmux-256color the TUI draws with 256 colors: gray is gray, not black", async () => {
  for (const term of ["tmux-256color", "screen-256color"]) {
    const t = tui(120, 40, "", { TERM: term });
    await t.waitFor(/┌─ agent ─/);
    const pane = tmux("capture-pane", "-p", "-e", "-t", t.name);
    // The sidebar's gray border (the palette's border role): a 256-colour gray; 8 colors would draw it black (30).
    const border = /\x1b\[38;5;(\d+)m┌─\x1b\[39m agent/.exec(pane);
    assert.ok(border && Number(border[1]) >= 232, `${term}: ${JSON.stringify(pane.slice(0, 400))}`);
    assert.not.match(pane, /Error on|plab_norm/, "no terminfo error on the screen");
    t.kill();
  }
});

test("/help lines up in columns at 80 and at 120 columns", async () => {
  for (const [w, hgt] of [
    [80, 24],
    [120, 40],
  ] as const) {
    const t = tui(w, hgt + 30);
    await t.waitFor(/● daemon \d+/);
    t.type("/help");
    t.press("Enter");
    const screen = await t.waitFor(/F1 lists the TUI's keys/);
    const ls = lines(screen);
    const from = ls.findIndex((l) => /^\s+Commands:/.test(l));
    const to = ls.findIndex((l, i) => i > from && /\/<skill-name>/.test(l));
    assert.ok(from >= 0 && to > from + 5, screen);
    const rows = ls.slice(from + 1, to).map((l) => l.slice(0, w - (w >= 100 ? 34 : 0)));
    // The column where the descriptions start, from the first command row.
    const first = /^( {4}\/\S.*? {2,})\S/.exec(rows[0]!)!;
    const col = first[1]!.length;
    for (const r of rows) {
      if (/^ {4}\/\S/.test(r)) {
        const key = /^ {4}(\/.*?)(?= {2}|$)/.exec(r)![1]!;
        if (4 + key.length + 2 <= col) assert.match(r.slice(col - 2, col + 1), /^ {2}\S/, `a row's text starts at column ${col}: ${r}`);
      } else if (r.trim()) assert.match(r, new RegExp(`^ {${col}}\\S`), `a wrapped line continues at column ${col}:\n${r}\n${rows.join("\n")}`);
    }
    t.kill();
  }
});

test("the F1 overlay keeps keys and their descriptions apart", async () => {
  for (const [w, hgt] of [
    [80, 24],
    [120, 40],
  ] as const) {
    const t = tui(w, hgt);
    await t.waitFor(/● daemon \d+/);
    t.press("F1");
    let screen = await t.waitFor(/Keys \(Esc closes/);
    for (let i = 0; i < 4 && !/Ctrl-A \/ Ctrl-E/.test(screen); i++) {
      const before = screen;
      t.press("PageDown");
      // The overlay scrolled: the screen changed (at its end without the line, the test fails here).
      screen = await waitFor("the F1 overlay to scroll", () => {
        const now = t.screen();
        return now !== before && now;
      });
    }
    assert.match(screen, /Ctrl-A \/ Ctrl-E/);
    assert.not.match(screen, /Ctrl-W\S/, screen);
    assert.not.match(screen, /[a-zA-Z0-9)]line start/, screen);
    assert.match(screen, /line start \/ end/);
    // One description column for every section.
    const ls = lines(screen);
    const top = [...ls.find((l) => l.includes("┌─ Keys"))!];
    const left = top.indexOf("┌");
    const right = top.indexOf("┐");
    const cols = new Set(
      ls
        .map((l) => [...l].slice(left + 1, right).join(""))
        .map((l) => /^( {2}\S(?:\S| \S)*? {2,})\S/.exec(l)?.[1]?.length)
        .filter((n): n is number => n !== undefined),
    );
    assert.is(cols.size, 1, `${[...cols].join(", ")}\n${screen}`);
    t.kill();
  }
});

test("the no-model panel has its right border", async () => {
  const { home, cleanup } = tempHome("tf");
  try {
    for (const [w, hgt] of [
      [80, 24],
      [120, 40],
    ] as const) {
      const t = tui(w, hgt + 26, "", {}, home);
      const screen = await t.waitFor(/No model is configured yet/);
      const ls = lines(screen);
      const top = ls.findIndex((l) => /┌─+┐/.test(l) && !/agent/.test(l));
      const right = ls[top]!.indexOf("┐");
      const bottom = ls.findIndex((l, i) => i > top && /└─+┘/.test(l));
      assert.ok(top >= 0 && bottom > top + 2, screen);
      for (const l of ls.slice(top + 1, bottom)) assert.is([...l][right], "│", `the right border in column ${right}: ${l}`);
      t.kill();
    }
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test('after Ctrl-C, "interrupting…" leaves once "(interrupted)" shows', async () => {
  const t = tui(120, 40);
  await t.waitFor(/● daemon \d+/);
  t.type("a slow answer please");
  t.press("Enter");
  await t.waitFor(/tick tick tick/);
  t.press("C-c");
  await t.waitFor(/\(interrupted\)/, 20_000);
  const screen = await t.waitForNo(/answering…/);
  assert.not.match(screen, /interrupting…/, screen);
  t.kill();
});

test("the kanban detail shows the worker's summary and its result, each under its own label", async () => {
  const made = await h.cli(["kanban", "create", "report the result", "--json"]);
  assert.is(made.code, 0, made.stderr);
  const id = JSON.parse(made.stdout).task.id as string;
  const done = await h.cli(["kanban", "complete", id, "--summary", "short summary text", "--result", "the full result payload"]);
  assert.is(done.code, 0, done.stderr);
  const t = tui(120, 40);
  await t.waitFor(/● daemon \d+/);
  t.press("F4");
  // The board opens on its first column with tasks (issue 36): done, the others strips.
  await t.waitFor(/┌─ done \(1\) ─/);
  t.press("Enter");
  const screen = await t.waitFor(new RegExp(`Task ${id} \\(Esc back\\)[\\s\\S]*Comments`));
  assert.match(screen, /│Summary +│.*\n│short summary text +│/, screen);
  assert.match(screen, /│Result +│.*\n│the full result payload +│/, screen);
  t.kill();
});

test("an expanded terminal row shows the exit code and the output as lines", async () => {
  const t = tui(120, 40);
  await t.waitFor(/● daemon \d+/);
  t.type("run a command");
  t.press("Enter");
  await t.waitFor(/Ran it\./);
  await t.waitFor(/⚙ terminal .*✗ failed|⚙ terminal .*✓/);
  t.press("C-o");
  const screen = await t.waitFor(/exit code 3/);
  assert.match(screen, /│ {3}alpha +│[^\n]*\n *│ {3}beta +│[^\n]*\n *│ {3}gamma +│/, screen);
  assert.match(screen, /│\s+command: echo alpha; echo beta/, screen);
  assert.not.match(screen, /\\n/, "no escaped newlines");
  t.kill();
});

test.run();

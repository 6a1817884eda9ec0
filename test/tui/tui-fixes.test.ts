import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, driveChat } from "../agent/helpers.js";
import { runCli } from "../helpers/cli.js";
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
      if (last.text.includes("run a command")) return { toolCalls: [{ name: "terminal", arguments: { command: "printf 'alpha\\nbeta\\n'; echo gamma >&2; exit 3" } }] };
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

test.run();

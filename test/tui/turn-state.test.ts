import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "../agent/helpers.js";
import { runCli } from "../helpers/cli.js";
import { stopServer, Tmux, tuiCommand } from "./tmux.js";

/**
 * Issue 36: the TUI's turn state after a daemon restart comes from the daemon. A message, a
 * restart, another message, then Ctrl-C twice on the empty input quits (it used to take three:
 * the first was swallowed as an interrupt of a turn the TUI still thought was running).
 */

let h: Awaited<ReturnType<typeof chatHome>>;
const open: Tmux[] = [];

test.before(async () => {
  h = await chatHome({
    respond: (req) => {
      const body = req.body as { messages?: Array<{ role: string; content: unknown }> };
      const last = body.messages?.[body.messages.length - 1];
      // The first answer is still streaming when the daemon restarts.
      if (String(last?.content ?? "").includes("first")) return { text: `Answer ${"word ".repeat(60)}Done.`, chunkDelayMs: 100, chunkChars: 10 };
      return { text: "Second Done." };
    },
  });
  await h.cli(["daemon", "start"]);
});

test.after(async () => {
  for (const t of open) t.kill();
  stopServer();
  await h.dispose();
});

test("after a daemon restart, Ctrl-C twice on an empty input quits", async () => {
  const t = new Tmux(tuiCommand(h.home));
  open.push(t);
  const before = await t.waitFor(/daemon (\d+) │/);
  const oldPid = before.match(/daemon (\d+) │/)![1];
  t.type("first message");
  t.press("Enter");
  await t.waitFor(/Answer/);
  const r = await runCli(["daemon", "restart"], { home: h.home });
  assert.is(r.code, 0, r.stderr);
  const screen = await t.waitFor(/reconnected to the daemon \(pid (\d+)\)/, 20_000);
  assert.is.not(screen.match(/reconnected to the daemon \(pid (\d+)\)/)![1], oldPid);
  t.type("second message");
  t.press("Enter");
  await t.waitFor(/Second Done\./);
  await t.waitForNo(/turn running|answering…/);
  t.press("C-c");
  await t.waitFor(/press Ctrl-C again to quit/);
  t.press("C-c");
  assert.is(await t.waitForExit(), 0);
});

test.run();

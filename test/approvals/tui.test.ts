import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { missingCommand, testUnless } from "../helpers/skip.js";
import { chatHome, waitFor } from "../agent/helpers.js";
import { connectDaemon } from "../../shared/client/index.js";
import type { RecordedRequest } from "../fixtures/fake-model-server.js";
import { stopServer, Tmux, tuiCommand } from "../tui/tmux.js";

/** The approval dialog of the TUI, driven in tmux: command and cwd shown, the status bar flag, keys answer. */
const noTmux = missingCommand("tmux", ["-V"]);
const hasTmux = noTmux === null;
/** A test that drives a terminal in tmux: reported skipped, with why, where tmux is missing. */
const inTmux = testUnless(noTmux);

let h: Awaited<ReturnType<typeof chatHome>>;
let dir: string;
let outside: string;
const open: Tmux[] = [];

const lastUser = (req: RecordedRequest) => {
  const msgs: Array<{ role: string; content: unknown }> = req.body.messages;
  return String([...msgs].reverse().find((m) => m.role === "user")?.content ?? "");
};

test.before(async () => {
  if (!hasTmux) return;
  dir = mkdtempSync(join(tmpdir(), "appr-tui-"));
  outside = mkdtempSync(join(tmpdir(), "appr-tui-out-"));
  h = await chatHome(
    {
      respond: (req) => {
        const msgs: Array<{ role: string }> = req.body.messages;
        const user = lastUser(req);
        const round = /round (\w+)/.exec(user)?.[1] ?? "?";
        if (msgs.at(-1)!.role === "tool") return { text: `finished ${round}` };
        if (user.includes("write"))
          return { toolCalls: [{ name: "write_file", arguments: { path: join(outside, "notes.txt"), content: "first line\n\u001b[2Jsecond line\n" } }] };
        return { toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: dir } }] };
      },
    },
    "approvals:\n  mode: smart\n  timeout: 120\n",
  );
  await h.cli(["daemon", "start"]);
});

test.after(async () => {
  if (!hasTmux) return;
  for (const t of open) t.kill();
  stopServer();
  await h.dispose();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

inTmux("the dialog shows the command and its cwd, the status bar flags it, keys answer it", async () => {
  mkdirSync(join(dir, "build"));
  writeFileSync(join(dir, "build", "marker"), "x");
  const t = new Tmux(`cd '${dir}' && ${tuiCommand(h.home)}`);
  open.push(t);
  await t.waitFor(/Type a message/);
  t.type("round one");
  t.press("Enter");
  let screen = await t.waitFor(/Approval needed/);
  assert.match(screen, /dangerous command: recursive delete/);
  assert.match(screen, /rm -rf \.\/build/);
  assert.ok(screen.includes(`cwd  ${dir}`), screen);
  assert.match(screen, /⚠ approval waiting/, screen);
  t.type("d");
  await t.waitFor(/reason for the model/);
  t.type("keep the build");
  t.press("Enter");
  screen = await t.waitFor(/finished one/);
  assert.not.match(screen, /approval waiting/);
  assert.ok(existsSync(join(dir, "build", "marker")), "denied: not run");
  assert.match(JSON.stringify(h.fake.requests.at(-1)!.body.messages.at(-1)), /denied by the user, who said: keep the build/);

  t.type("round two");
  t.press("Enter");
  await t.waitFor(/Approval needed/);
  t.type("o");
  await t.waitFor(/finished two/);
  assert.not.ok(existsSync(join(dir, "build")), "approved once: it ran");

  // A write outside the workspace: the dialog shows the diff, cleaned of escapes.
  t.type("round three write");
  t.press("Enter");
  screen = await t.waitFor(/Approval needed/);
  assert.match(screen, /write outside the session's workspace/);
  assert.match(screen, /\+first line/);
  assert.match(screen, /\+second line/);
  assert.ok(screen.includes(join(outside, "notes.txt")), screen);
  t.type("s");
  await t.waitFor(/finished three/);
  assert.is(readFileSync(join(outside, "notes.txt"), "utf8"), "first line\n\u001b[2Jsecond line\n");
  t.kill();
});

inTmux("a TUI opened on a session whose question waits (another client asks) shows the dialog and answers it", async () => {
  mkdirSync(join(dir, "build"), { recursive: true });
  writeFileSync(join(dir, "build", "marker"), "x");
  const client = await connectDaemon({ home: h.home });
  try {
    const sent = client.call("chat.send", { prompt: "round four", interactive: true, cwd: dir });
    let pending: Array<{ sessionId: string }> = [];
    await waitFor("the question", async () => (pending = (await client.call("approvals.pending", {})).approvals).length === 1, 20_000);
    const t = new Tmux(`cd '${dir}' && ${tuiCommand(h.home, `--resume ${pending[0]!.sessionId}`)}`);
    open.push(t);
    const screen = await t.waitFor(/Approval needed/);
    assert.match(screen, /rm -rf \.\/build/);
    t.type("o");
    const result = await sent;
    assert.is(result.answer, "finished four");
    assert.not.ok(existsSync(join(dir, "build")), "approved in the TUI: it ran");
    await t.waitForNo(/Approval needed/);
    t.kill();
  } finally {
    client.close();
  }
});

test.run();

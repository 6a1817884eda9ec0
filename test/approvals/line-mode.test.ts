import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { missingCommand, testUnless } from "../helpers/skip.js";
import { chatHome, waitFor } from "../agent/helpers.js";
import { CLI } from "../helpers/cli.js";
import type { RecordedRequest } from "../fixtures/fake-model-server.js";
import { stopServer, Tmux, tmux } from "../tui/tmux.js";

/**
 * Approval questions in the line-mode chat, answered by typing: `agent chat` runs in tmux (a real
 * terminal) in a temp folder; the fake model asks for a recursive delete there.
 */
const noTmux = missingCommand("tmux", ["-V"]);
const hasTmux = noTmux === null;
/** A test that drives a terminal in tmux: reported skipped, with why, where tmux is missing. */
const inTmux = testUnless(noTmux);

const COMMAND = "rm -rf ./build && mkdir -p build && echo ran >> runs.log";

function lastUserText(req: RecordedRequest): string {
  const msgs: Array<{ role: string; content: unknown }> = req.body.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i]!.role === "user") return String(msgs[i]!.content);
  return "";
}

let h: Awaited<ReturnType<typeof chatHome>>;
let dir: string;
const open: Tmux[] = [];

test.before(async () => {
  if (!hasTmux) return;
  h = await chatHome(
    {
      respond: (req) => {
        const msgs: Array<{ role: string }> = req.body.messages;
        const user = lastUserText(req);
        const round = /round (\w+)/.exec(user)?.[1] ?? "?";
        const toolsSinceUser = msgs.length - 1 - msgs.map((m) => m.role).lastIndexOf("user");
        const wanted = user.includes("twice") ? 2 : 1;
        if (toolsSinceUser < wanted * 2) return { toolCalls: [{ name: "terminal", arguments: { command: COMMAND } }] };
        return { text: `finished ${round}` };
      },
    },
    "approvals:\n  mode: smart\n  timeout: 60\n",
  );
  dir = mkdtempSync(join(tmpdir(), "appr-line-"));
  mkdirSync(join(dir, "build"));
  await h.cli(["daemon", "start"]);
});

test.after(async () => {
  if (!hasTmux) return;
  for (const t of open) t.kill();
  stopServer();
  await h.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const runs = () => (existsSync(join(dir, "runs.log")) ? readFileSync(join(dir, "runs.log"), "utf8").split("\n").filter(Boolean).length : 0);

function chat(): Tmux {
  const t = new Tmux(`cd '${dir}' && env AGENT_HOME='${h.home}' AGENT_GATEWAY_PORT=0 NO_COLOR=1 ${process.execPath} ${CLI} chat`);
  open.push(t);
  return t;
}

async function pending(): Promise<Array<{ id: string; summary: string; details: { cwd?: string } }>> {
  const r = await h.cli(["approvals", "pending", "--json"]);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).approvals;
}

/** How many questions the pane has shown (its whole scrollback). */
const asked = (t: Tmux) => (tmux("capture-pane", "-p", "-S", "-", "-t", t.name).match(/^approve\?/gm) ?? []).length;

/** Type a prompt and wait until the daemon holds its approval question and the chat shows it. */
async function askAndWait(t: Tmux, prompt: string) {
  const before = asked(t);
  t.type(prompt);
  t.press("Enter");
  let found: Awaited<ReturnType<typeof pending>> = [];
  await waitFor(
    () => `an approval question for "${prompt}"; the screen:\n${t.screen()}`,
    async () => (found = await pending()).length === 1,
    20_000,
  );
  await waitFor("the question on the screen", () => asked(t) === before + 1);
  return found[0]!;
}

async function answer(t: Tmux, text: string, round: string) {
  t.type(text);
  t.press("Enter");
  await t.waitFor(new RegExp(`finished ${round}\\n── .*\\n>`), 20_000);
}

inTmux("deny with a reason: the model reads the reason and the command does not run", async () => {
  const t = chat();
  await t.waitFor(/agent chat ·/);
  const q = await askAndWait(t, "round one clean up");
  assert.is(q.summary, COMMAND);
  const screen = t.screen();
  assert.match(screen, /approval needed \(dangerous command: recursive delete\)/);
  assert.ok(screen.includes(`$ ${COMMAND}`), screen);
  assert.ok(screen.includes(`in ${dir}`), screen);
  await answer(t, "d not on a Friday", "one");
  assert.is(runs(), 0, "nothing ran");
  const last = h.fake.requests.at(-1)!.body.messages.at(-1);
  assert.is(last.role, "tool");
  assert.match(last.content, /denied by the user, who said: not on a Friday/);
  assert.match(t.screen(), /✗ denied: not on a Friday/);

  // once: it runs; the next identical call is asked again.
  await askAndWait(t, "round two");
  await answer(t, "o", "two");
  assert.is(runs(), 1);
  await askAndWait(t, "round three");
  await answer(t, "once", "three");
  assert.is(runs(), 2);

  // session: the same call later in this session is not asked.
  await askAndWait(t, "round four twice");
  await answer(t, "s", "four");
  assert.is(runs(), 4, "both calls ran after one answer");
  t.type("round five");
  t.press("Enter");
  await t.waitFor(/finished five\n── .*\n>/, 20_000);
  assert.is(runs(), 5);

  // A new session does not inherit the session grant; "always" is remembered for the profile.
  t.press("C-d");
  assert.is(await t.waitForExit(), 0);
  const t1 = chat();
  await t1.waitFor(/agent chat ·/);
  await askAndWait(t1, "round six");
  await answer(t1, "a", "six");
  assert.is(runs(), 6);
  t1.press("C-d");
  assert.is(await t1.waitForExit(), 0);
  const list = await h.cli(["approvals", "list"]);
  assert.ok(list.stdout.includes(`command:${COMMAND}`), list.stdout);
  const t2 = chat();
  await t2.waitFor(/agent chat ·/);
  t2.type("round seven");
  t2.press("Enter");
  await t2.waitFor(/finished seven/, 20_000);
  assert.is(runs(), 7);
  assert.is(asked(t2), 0);

  // revoked: asked again.
  const revoked = await h.cli(["approvals", "revoke", `command:${COMMAND}`]);
  assert.is(revoked.code, 0, revoked.stderr);
  await askAndWait(t2, "round eight");
  await answer(t2, "deny", "eight");
  assert.is(runs(), 7);
  const again = await h.cli(["approvals", "revoke", `command:${COMMAND}`]);
  assert.is(again.code, 4, "an unknown key is not found");
  t2.kill();
});

inTmux("chat -q at a terminal asks too, and runs on once", async () => {
  const before = runs();
  const t = new Tmux(`cd '${dir}' && env AGENT_HOME='${h.home}' AGENT_GATEWAY_PORT=0 NO_COLOR=1 ${process.execPath} ${CLI} chat -q 'round ten'`);
  open.push(t);
  await waitFor("the question on the screen", () => asked(t) === 1, 20_000);
  assert.match(t.screen(), /approval needed \(dangerous command: recursive delete\)/);
  t.type("o");
  t.press("Enter");
  assert.is(await t.waitForExit(20_000), 0);
  assert.match(t.screen(), /finished ten/);
  assert.is(runs(), before + 1);
});

inTmux("an unanswered question is denied after approvals.timeout", async () => {
  const set = await h.cli(["config", "set", "approvals.timeout", "1"]);
  assert.is(set.code, 0, set.stderr);
  const t = chat();
  await t.waitFor(/agent chat ·/);
  const before = runs();
  t.type("round nine");
  t.press("Enter");
  await t.waitFor(/approve\?/);
  await t.waitFor(/finished nine/, 20_000);
  assert.is(runs(), before);
  assert.match(t.screen(), /nobody answered the approval question within 1 s \(approvals\.timeout\)/);
  assert.match(JSON.stringify(h.fake.requests.at(-1)!.body.messages.at(-1)), /approvals\.timeout/);
  assert.equal(await pending(), []);
  t.kill();
});

test.run();

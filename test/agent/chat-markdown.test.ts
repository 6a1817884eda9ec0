import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI } from "../helpers/cli.js";
import { stopServer, Tmux } from "../tui/tmux.js";
import { chatHome } from "./helpers.js";

/**
 * Line-mode chat renders the model's Markdown on a terminal (tmux: no `**`/`#`/fence markers,
 * code set apart) and stays raw when stdout is piped; model text stays escape-stripped.
 */

const ANSWER =
  "# Release plan\n\nShip the **important** fix and the `patch` today.\n\n- first step\n- second step\n\n```js\nconst answer = 42;\n```\n\nSafe\u001b]0;pwned\u0007 end.";

type Home = Awaited<ReturnType<typeof chatHome>>;
let h: Home;
const open: Tmux[] = [];

test.before(async () => {
  h = await chatHome({ respond: () => ({ text: ANSWER, chunkChars: 7 }) });
  await h.cli(["daemon", "start"]);
});

test.after(async () => {
  for (const t of open) t.kill();
  stopServer();
  await h.dispose();
});

function term(args: string): Tmux {
  const t = new Tmux(`env AGENT_HOME='${h.home}' AGENT_GATEWAY_PORT=0 ${process.execPath} ${CLI} chat ${args}`, 100, 40);
  open.push(t);
  return t;
}

function assertRendered(screen: string): void {
  assert.match(screen, /^Release plan\s*$/m, "the heading without its #");
  assert.not.match(screen, /# Release plan/);
  assert.match(screen, /Ship the important fix and the patch today\./, "no ** or backticks");
  assert.not.match(screen, /\*\*/);
  assert.match(screen, /• first step\n• second step/);
  assert.match(screen, /┌ js\n│ const answer = 42;/, "the code block set apart with a gutter");
  assert.not.match(screen, /```/);
  assert.match(screen, /Safe end\./, "the escape sequence is stripped");
}

test("agent chat on a terminal renders the streamed answer as Markdown", async () => {
  const t = term("");
  await t.waitFor(/fake-model · \/help/);
  t.type("plan please");
  t.press("Enter");
  const screen = await t.waitFor(/── s_\S+ · fake-model/);
  assertRendered(screen);
  assert.is.not(t.paneTitle(), "pwned");
  t.press("C-d");
  assert.is(await t.waitForExit(), 0);
});

test("agent chat -q on a terminal renders the answer as Markdown", async () => {
  // The shell stays after the command: a dead pane's screen loses its first line.
  const t = new Tmux(`sh -c "AGENT_HOME='${h.home}' AGENT_GATEWAY_PORT=0 ${process.execPath} ${CLI} chat -q 'plan please'; echo EXIT=\\$?; sleep 60"`, 100, 40);
  open.push(t);
  const screen = await t.waitFor(/EXIT=\d+/, 20_000);
  assert.match(screen, /EXIT=0/);
  assertRendered(screen);
});

test("piped, the answer stays raw Markdown (chat -q and the line mode)", async () => {
  const q = await h.chat(["-q", "plan please"]);
  assert.is(q.code, 0, q.stderr);
  assert.ok(q.stdout.includes("# Release plan\n\nShip the **important** fix and the `patch` today."), q.stdout);
  assert.ok(q.stdout.includes("```js\nconst answer = 42;\n```"));
  assert.ok(q.stdout.includes("Safe end."));
  const line = await h.chat([], { input: "plan please\n" });
  assert.is(line.code, 0, line.stderr);
  assert.ok(line.stdout.includes("Ship the **important** fix"), line.stdout);
});

test.run();

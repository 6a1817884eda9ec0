import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, startedHome } from "../helpers/cli.js";
import { missingCommand, testUnless } from "../helpers/skip.js";
import { stopServer, Tmux, tuiCommand } from "./tmux.js";

/**
 * The TUI's Actors view and the product's own actors, in tmux as a person uses it: a built-in
 * (here a kanban board) is listed as built-in, its inspector works (read over the socket, the
 * gateway hiding built-ins from a caller without its token) instead of saying the actor does
 * not exist, and `x` is refused by the daemon with the command that owns the data. And the
 * kanban view's mark for a held task.
 */

let h: Awaited<ReturnType<typeof startedHome>>;
const open: Tmux[] = [];
const cli = (args: string[]) => runCli(args, { home: h.home, env: { HOME: h.home, AGENT_PROFILE: "", AGENT_GATEWAY_TOKEN: "" } });

test.before(async () => {
  if (!hasTmux) return;
  h = await startedHome({ AGENT_GATEWAY_TOKEN: "" });
});
test.after(async () => {
  for (const t of open) t.kill();
  if (!hasTmux) return;
  stopServer();
  await h.dispose();
});

const noTmux = missingCommand("tmux", ["-V"]);
const hasTmux = noTmux === null;
/** A test that drives the TUI in tmux: reported skipped, with why, where tmux is missing. */
const inTmux = testUnless(noTmux);

inTmux("a built-in board actor is listed as built-in with a working inspector, and x leaves its tasks alone", async () => {
  for (const title of ["one", "two", "three"]) assert.is((await cli(["kanban", "create", title, "--triage"])).code, 0);
  const board = JSON.parse((await cli(["actors", "list", "--name", "board", "--json"])).stdout).actors[0];
  const t = new Tmux(tuiCommand(h.home, "", { AGENT_GATEWAY_TOKEN: "" }));
  open.push(t);
  await t.waitFor(/Type a message/);
  t.press("F5");
  await t.waitFor(/Actors \(\d+\)/);
  t.press("/");
  await t.waitFor(/Filter actors by name/);
  t.type("board");
  t.press("Enter");
  await t.waitFor(/Actors named \*board\*/);
  let screen = await t.waitFor(/Built-in/);
  assert.match(screen, /board \(built-in\)\s+default\s+run/);
  assert.match(screen, /board key default\s+● running/);
  assert.match(screen, /holds the tasks of kanban board "default"/);
  assert.match(screen, /managed with: agent kanban boards delete default/);
  assert.not.match(screen, /no actor with id/, "the inspector does not say the listed actor does not exist");
  assert.not.match(screen, /not found/i);
  t.press("x");
  screen = await t.waitFor(/built-in board actor/);
  assert.match(screen, /agent kanban/);
  const tasks = JSON.parse((await cli(["kanban", "list", "--all", "--json"])).stdout).tasks;
  assert.is(tasks.length, 3, "the board's tasks are all there");
  const still = JSON.parse((await cli(["actors", "list", "--name", "board", "--json"])).stdout).actors;
  assert.equal(
    still.map((a: { actor_id: string }) => a.actor_id),
    [board.actor_id],
  );
  t.kill();
});

inTmux("the kanban view marks a held task, and R releases it", async () => {
  const made = await cli(["kanban", "create", "wait for me", "--hold", "--json"]);
  assert.is(made.code, 0, made.stderr);
  const id = JSON.parse(made.stdout).task.id as string;
  const t = new Tmux(tuiCommand(h.home, "", { AGENT_GATEWAY_TOKEN: "" }));
  open.push(t);
  await t.waitFor(/Type a message/);
  t.press("F4");
  await t.waitFor(/┌─ todo \(1\) ─/);
  await t.waitFor(/\[held\] wait for me/);
  // The view opens on the triage column: one to the right is todo.
  await t.waitFor(/┌─ triage \(\d+\) ─/);
  t.press("l");
  t.press("Enter");
  await t.waitFor(/held: not dispatched until released \(R\)/);
  t.press("Escape");
  // Back on the board before R: an Escape read together with the next key is Alt-R to a terminal app.
  await t.waitForNo(/held: not dispatched until released \(R\)/);
  t.press("R");
  await t.waitFor(new RegExp(`released ${id}`));
  await t.waitFor(/┌─ ready \(1\) ─/);
  assert.not.match(await t.waitForNo(/\[held\]/), /\[held\]/);
  const task = JSON.parse((await cli(["kanban", "show", id, "--json"])).stdout).task;
  assert.equal([task.held, task.status], [false, "ready"]);
  t.kill();
});

test.run();

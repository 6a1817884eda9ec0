// The TUI's Logs view as a person watches it (tmux): it shows a component's last lines and keeps
// following the file through a rotation, a line written in two pieces and a truncation, all
// through the one follower (shared/log-follow.ts).
import { appendFileSync, mkdirSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "../agent/helpers.js";
import { stopServer, Tmux, tuiCommand } from "./tmux.js";

type Home = Awaited<ReturnType<typeof chatHome>>;
let h: Home;
let t: Tmux | null = null;

const line = (msg: string) => JSON.stringify({ ts: "2026-11-22T10:00:00.000Z", level: "info", component: "aaa", msg }) + "\n";

test.before(async () => {
  h = await chatHome();
  await h.cli(["daemon", "start"]);
});

test.after(async () => {
  t?.kill();
  stopServer();
  await h.dispose();
});

test("the Logs view follows a component's log through a rotation, a half-written line and a truncation", async () => {
  const dir = join(h.home, "logs");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "aaa.log");
  writeFileSync(file, line("alpha-first"));
  t = new Tmux(tuiCommand(h.home));
  await t.waitFor(/Type a message/);
  t.press("F6");
  await t.waitFor(/Components/);
  // "daemon" is listed first, then "aaa".
  t.press("Down");
  await t.waitFor(/aaa · following/);
  await t.waitFor(/alpha-first/);
  appendFileSync(file, line("beta-before-rotation"));
  renameSync(file, `${file}.1`);
  writeFileSync(file, line("gamma-after-rotation"));
  await t.waitFor(/gamma-after-rotation/);
  const whole = line("delta-in-two-pieces");
  appendFileSync(file, whole.slice(0, 40));
  // A few looks at the half line (the view looks every 300 ms): it must wait for the rest.
  await new Promise((r) => setTimeout(r, 700));
  appendFileSync(file, whole.slice(40));
  await t.waitFor(/delta-in-two-pieces/);
  truncateSync(file, 0);
  appendFileSync(file, line("eps"));
  const screen = await t.waitFor(/eps/);
  const order = ["alpha-first", "beta-before-rotation", "gamma-after-rotation", "delta-in-two-pieces", "eps"].map((m) => screen.indexOf(m));
  assert.ok(
    order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)),
    `every line once, in order:\n${screen}`,
  );
  assert.not.match(screen, /"msg"/, "no line was shown raw (a piece of a JSON line)");
});

test.run();

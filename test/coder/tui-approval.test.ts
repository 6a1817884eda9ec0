import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "../agent/helpers.js";
import { missingCommand, testUnless } from "../helpers/skip.js";
import { stopServer, Tmux, tuiCommand } from "../tui/tmux.js";

/**
 * The TUI with the coder runtime: `/coder-runtime on`, then the app-server's approval requests
 * shown in the TUI's approval dialog (the command; the diff of a file change) and answered by
 * keys. The app-server is the fake (test/fixtures/fake-app-server.mjs).
 */
const noTmux = missingCommand("tmux", ["-V"]);
const inTmux = testUnless(noTmux);
const FIXTURE = fileURLToPath(new URL("../fixtures/fake-app-server.mjs", import.meta.url));

let h: Awaited<ReturnType<typeof chatHome>>;
let dir: string;
const open: Tmux[] = [];

test.before(async () => {
  if (noTmux) return;
  dir = mkdtempSync(join(tmpdir(), "coder-tui-"));
  h = await chatHome({}, `  api_mode: responses\ncoder_runtime:\n  command: ${FIXTURE}\napprovals:\n  mode: ask\n  timeout: 120\n`);
  await h.cli(["daemon", "start"]);
});

test.after(async () => {
  if (noTmux) return;
  for (const t of open) t.kill();
  stopServer();
  await h.dispose();
  rmSync(dir, { recursive: true, force: true });
});

inTmux("the approval dialog shows the app-server's command and diff; keys answer it", async () => {
  const t = new Tmux(`cd '${dir}' && ${tuiCommand(h.home)}`);
  open.push(t);
  await t.waitFor(/Type a message/);
  t.type("/coder-runtime on");
  t.press("Enter");
  await t.waitFor(/coder runtime: on/);
  t.type("command please");
  t.press("Enter");
  let screen = await t.waitFor(/Approval needed/);
  assert.match(screen, /touch made-by-coder/);
  t.type("o");
  screen = await t.waitFor(/decision: accept/);
  assert.not.match(screen, /Approval needed/);
  t.type("filechange please");
  t.press("Enter");
  screen = await t.waitFor(/Approval needed/);
  assert.match(screen, /\/w\/a\.txt/);
  assert.match(screen, /\+hello/);
  t.type("d");
  await t.waitFor(/reason for the model/);
  t.press("Enter");
  await t.waitFor(/decision: decline/);
  assert.is(h.fake.requests.length, 0, "the agent's own model was never called");
  t.kill();
});

test.run();

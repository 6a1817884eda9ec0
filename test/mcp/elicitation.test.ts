// Elicitation (`elicitation/create`) from a real MCP server (server-everything's
// trigger-elicitation-request) in the line-mode chat: the form is asked field by field in a real
// terminal (tmux), the answer reaches the server; decline and the timeout decline.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages, waitFor } from "../agent/helpers.js";
import { CLI } from "../helpers/cli.js";
import { missingCommand, testUnless } from "../helpers/skip.js";
import { stopServer, Tmux, tuiCommand } from "../tui/tmux.js";
import { EVERYTHING, mcpConfig } from "./helpers.js";

const noTmux = missingCommand("tmux", ["-V"]);
const inTmux = testUnless(noTmux);
const TOOL = "mcp_everything_trigger-elicitation-request";

let h: Awaited<ReturnType<typeof chatHome>>;
const open: Tmux[] = [];

test.before(async () => {
  if (noTmux) return;
  h = await chatHome(
    {
      respond: (req) => {
        const msgs: Array<{ role: string }> = req.body.messages;
        return msgs.at(-1)!.role === "tool" ? { text: "form done" } : { toolCalls: [{ name: TOOL, arguments: {} }] };
      },
    },
    `${mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } })}approvals:\n  mode: off\n  timeout: 60\n`,
  );
  await h.cli(["daemon", "start"]);
});

test.after(async () => {
  if (noTmux) return;
  for (const t of open) t.kill();
  stopServer();
  await h.dispose();
});

function chat(): Tmux {
  const t = new Tmux(`env AGENT_HOME='${h.home}' AGENT_GATEWAY_PORT=0 NO_COLOR=1 ${process.execPath} ${CLI} chat`, 240, 50);
  open.push(t);
  return t;
}

/** Answer the prompt that is showing now, then wait for the next one to show. */
async function reply(t: Tmux, text: string, next: RegExp) {
  if (text) t.type(text);
  t.press("Enter");
  await t.waitFor(next, 10_000);
}

const lastTool = () => toolMessages(h.fake, h.fake.requests.length - 1).at(-1)?.content ?? "";

inTmux("line mode: the server's form is asked field by field; bad values are asked again; the answer reaches the server", async () => {
  const t = chat();
  await t.waitFor(/agent chat ·/);
  t.type("fill the form");
  t.press("Enter");
  await t.waitFor(/\? MCP server everything asks for input:\n {2}Please provide inputs for the following fields:[\s\S]*answer\? ?$/m, 30_000);
  await reply(t, "a", /name \(text, required\): ?$/m);
  await reply(t, "", /name is required\n {2}name \(text, required\): ?$/m);
  await reply(t, "Ada Lovelace", /check \(yes\/no, optional\): ?$/m);
  await reply(t, "yes", /firstLine \(text, optional, Enter: It was a dark and stormy night\.\): ?$/m);
  await reply(t, "", /email \(text, email, optional\): ?$/m);
  await reply(t, "not-an-email", /email must be an email address\n {2}email \(text, email, optional\): ?$/m);
  await reply(t, "ada@example.com", /homepage \(text, uri, optional\): ?$/m);
  await reply(t, "", /birthdate \(text, date, optional\): ?$/m);
  await reply(t, "", /integer \(integer 1–100, optional, Enter: 42\): ?$/m);
  await reply(t, "500", /integer must be at most 100\n {2}integer \(.*\): ?$/m);
  await reply(t, "7", /number \(number 0–1000, optional, Enter: 3\.14\): ?$/m);
  await reply(t, "", /untitledSingleSelectEnum \(one of: Monica, Rachel, Joey, Chandler, Ross, Phoebe, optional, Enter: Monica\): ?$/m);
  await reply(t, "Joey", /untitledMultipleSelectEnum \(comma-separated, from: .*\): ?$/m);
  await reply(t, "Piano, Drums", /titledSingleSelectEnum \(one of: hero-1 \(Superman\), .*\): ?$/m);
  await reply(t, "wonder woman", /titledMultipleSelectEnum \(.*\): ?$/m);
  await reply(t, "", /legacyTitledEnum \(one of: pet-1 \(Cats\), .*\): ?$/m);
  t.type("Dogs");
  t.press("Enter");
  await t.waitFor(/✓ answered[\s\S]*form done/, 20_000);
  const seen = lastTool();
  assert.match(seen, /User provided the requested information/);
  assert.match(seen, /- Name: Ada Lovelace/);
  assert.match(seen, /- Agreed to terms: true/);
  assert.match(seen, /- Email: ada@example\.com/);
  assert.match(seen, /- Favorite Integer: 7/);
  assert.match(seen, /- Favorite Number: 3\.14/);
  assert.not.match(seen, /Homepage/, "an optional field left empty is left out");
  // What the server received, in its own debug echo of the raw result.
  assert.match(seen, /"untitledMultipleSelectEnum":\s*\[\s*"Piano",\s*"Drums"\s*\]/);
  assert.match(seen, /"titledSingleSelectEnum":\s*"hero-3"/);
  assert.match(seen, /"legacyTitledEnum":\s*"pet-2"/);
  t.kill();
});

inTmux("line mode: decline and cancel reach the server as such", async () => {
  const t = chat();
  await t.waitFor(/agent chat ·/);
  for (const [key, said] of [
    ["d", /User declined to provide the requested information/],
    ["c", /User cancelled the elicitation dialog/],
  ] as const) {
    const before = h.fake.requests.length;
    t.type(`form ${key}`);
    t.press("Enter");
    await waitFor(
      () => `the form on the screen:\n${t.screen()}`,
      () => /answer\? ?$/m.test(t.screen()),
      30_000,
    );
    t.type(key);
    t.press("Enter");
    await waitFor("the model to read the tool result", () => h.fake.requests.length >= before + 2, 20_000);
    assert.match(lastTool(), said);
    await t.waitFor(/form done\n── .*\n>/, 20_000);
  }
  t.kill();
});

inTmux("TUI: the dialog shows the server's form; keys fill it field by field; a bad value is shown and asked again", async () => {
  const t = new Tmux(tuiCommand(h.home), 160, 45);
  open.push(t);
  await t.waitFor(/Type a message/);
  const before = h.fake.requests.length;
  t.type("fill it in the dialog");
  t.press("Enter");
  let screen = await t.waitFor(/Input requested/, 30_000);
  assert.match(screen, /\? MCP server everything asks for input/);
  assert.match(screen, /Please provide inputs for the following fields:/);
  assert.match(screen, /String \*/, "the required field is marked");
  // The status bar is drawn on its own tick: wait for it rather than read the dialog's first frame.
  await t.waitFor(/⚠ approval/);
  t.type("a");
  await t.waitFor(/name \(text, required\)/);
  t.type("Grace Hopper");
  t.press("Enter");
  await t.waitFor(/check \(yes\/no, optional\)/);
  t.type("maybe");
  t.press("Enter");
  await t.waitFor(/check must be yes or no/);
  // The editor keeps what was typed: clear it, then a valid answer.
  for (let i = 0; i < 5; i++) t.press("BSpace");
  t.type("no");
  t.press("Enter");
  // The rest take their defaults or are left out.
  for (const name of [
    "firstLine",
    "email",
    "homepage",
    "birthdate",
    "integer",
    "number",
    "untitledSingleSelectEnum",
    "untitledMultipleSelectEnum",
    "titledSingleSelectEnum",
    "titledMultipleSelectEnum",
    "legacyTitledEnum",
  ]) {
    await t.waitFor(new RegExp(`│${name} \\(`));
    t.press("Enter");
  }
  screen = await t.waitFor(/form done/, 20_000);
  assert.not.match(screen, /Input requested/);
  await waitFor("the model to read the tool result", () => h.fake.requests.length >= before + 2, 20_000);
  const seen = lastTool();
  assert.match(seen, /- Name: Grace Hopper/);
  assert.match(seen, /- Agreed to terms: false/);
  assert.match(seen, /- Favorite Integer: 42/);
  t.kill();
});

test.run();

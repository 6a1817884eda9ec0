import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "./helpers.js";

/** `agent chat -q "/<command>"` runs the slash command, as the interactive chat would, and calls no model. */

type Home = Awaited<ReturnType<typeof chatHome>>;
let h: Home;

test.before(async () => {
  h = await chatHome({ respond: () => ({ text: "a model answer" }) });
  const dir = join(h.home, "skills", "greeter");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), "---\nname: greeter\ndescription: says hello nicely\n---\nSay hello.\n");
});

test.after(async () => {
  await h.dispose();
});

const modelCalls = () => h.fake.requests.filter((r) => r.path.endsWith("/chat/completions")).length;

test('chat -q "/skills" lists the skills and makes no model call', async () => {
  const r = await h.chat(["-q", "/skills"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /\/greeter\s+says hello nicely/);
  assert.is(modelCalls(), 0, "no prompt went to the model");
});

test('chat -q "/help" prints the commands; "/bundles" and "/cron" run too', async () => {
  const help = await h.chat(["-q", "/help"]);
  assert.is(help.code, 0, help.stderr);
  assert.match(help.stdout, /Commands:[\s\S]*\/skills/);
  const bundles = await h.chat(["-q", "/bundles"]);
  assert.is(bundles.code, 0, bundles.stderr);
  assert.match(bundles.stdout, /no skill bundles yet/);
  const cron = await h.chat(["-q", "/cron"]);
  assert.is(cron.code, 0, cron.stderr);
  assert.match(cron.stdout, /no cron jobs/);
  const stop = await h.chat(["-q", "/stop"]);
  assert.is(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /nothing is running/);
  assert.is(modelCalls(), 0);
});

test("a slash command that needs the interactive chat says so (exit 2); a bad one gives its hint", async () => {
  for (const c of ["/exit", "/debug", "/image x.png", "/fast"]) {
    const r = await h.chat(["-q", c]);
    assert.is(r.code, 2, c);
    assert.match(r.stderr, /only works inside an interactive chat: run `agent chat`/, c);
  }
  const bad = await h.chat(["-q", "/exit --nope"]);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /\/exit does not take --nope/);
  assert.is(modelCalls(), 0);
});

test("a skill name still loads the skill and sends the turn; a plain prompt still goes to the model", async () => {
  const r = await h.chat(["-q", "/greeter to Ann"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /a model answer/);
  const plain = await h.chat(["-q", "hello"]);
  assert.is(plain.code, 0, plain.stderr);
  assert.is(modelCalls(), 2);
});

test('chat -q "/sessions" lists the sessions; "/sessions 1" says how to continue one', async () => {
  const calls = modelCalls();
  const list = await h.chat(["-q", "/sessions"]);
  assert.is(list.code, 0, list.stderr);
  const id = /\b(s_\S+)/.exec(list.stdout)?.[1];
  assert.ok(id, list.stdout);
  const pick = await h.chat(["-q", "/sessions 1"]);
  assert.is(pick.code, 0, pick.stderr);
  assert.match(pick.stdout, new RegExp(`continue it with agent chat --resume ${id}`));
  assert.is(modelCalls(), calls);
});

test.run();

import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "../agent/helpers.js";

// Issue 23, part 4b: a FIFO named SKILL.md never hangs a chat or the daemon's stop.

const h = await chatHome({ respond: () => ({ text: "still here" }) });
test.after(() => h.dispose());

const fifo = join(h.home, "skills", "trap", "SKILL.md");

test("a FIFO as SKILL.md: chats still work, the skill is reported failed with the reason, daemon stop is quick", async () => {
  mkdirSync(join(h.home, "skills", "trap"), { recursive: true });
  mkdirSync(join(h.home, "skills", "fine"), { recursive: true });
  writeFileSync(join(h.home, "skills", "fine", "SKILL.md"), "---\nname: fine\ndescription: a working skill\n---\nDo fine things.\n");
  execFileSync("mkfifo", [fifo]);
  const first = await h.chat(["-q", "hello"], { timeoutMs: 20_000 });
  assert.is(first.code, 0, first.stderr);
  assert.match(first.stdout, /still here/);
  // The good skill is offered to the model; the FIFO is not read.
  assert.ok(JSON.stringify(h.fake.requests.at(-1)!.body.messages[0]).includes("fine"));
  const listed = await h.chat([], { input: "/skills\n/exit\n", timeoutMs: 20_000 });
  assert.is(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /\/fine\s+a working skill/);
  assert.match(listed.stdout, /skipped: trap\/SKILL\.md: is not a regular file \(a FIFO\)/);
  const info = await h.cli(["profile", "info", "default"]);
  assert.is(info.code, 0, info.stderr);
  assert.match(info.stdout, /FAILED skill: trap\/SKILL\.md: is not a regular file \(a FIFO\)/);
  // Deleting the FIFO leaves nothing stuck: the next chat runs too.
  rmSync(fifo);
  const second = await h.chat(["-q", "again"], { timeoutMs: 20_000 });
  assert.is(second.code, 0, second.stderr);
  const started = Date.now();
  const stopped = await h.cli(["daemon", "stop"]);
  assert.is(stopped.code, 0, stopped.stderr);
  assert.ok(Date.now() - started < 5_000, `daemon stop took ${Date.now() - started} ms`);
});

test.run();

// `agent kanban create --from-file` of a plan larger than a plan can be (a 50 MB file, and
// 3 MiB on stdin): a clear usage error naming the size and the cap, nothing created, the file
// never sent whole to the daemon.
import { rmSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const h = tempHome("planbig");
const path = `${h.home}-plan.yaml`;

test.after(async () => {
  await stopDaemon(h.home);
  h.cleanup();
  rmSync(path, { force: true });
});

const bigPlan = (bytes: number) => {
  let s = "tasks:\n  - id: a\n    title: big\n    body: |\n";
  const line = `      ${"x".repeat(100)}\n`;
  s += line.repeat(Math.ceil((bytes - s.length) / line.length));
  return s;
};

test("a 50 MB plan file is refused before it is read, with its size and the cap; nothing is created", async () => {
  writeFileSync(path, bigPlan(50 * 1024 * 1024));
  const r = await runCli(["kanban", "create", "--from-file", path], { home: h.home });
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /plan\.yaml is 50\.0 MiB; a plan file is at most 2 MiB \(split it into several\)/);
  assert.not.match(r.stderr, /invalid params|Too big/);
  const list = await runCli(["kanban", "list", "--json"], { home: h.home });
  assert.is(list.code, 0, list.stderr);
  assert.equal(JSON.parse(list.stdout).tasks, []);
});

test("a 3 MiB plan on stdin gets the same clear refusal", async () => {
  const r = await runCli(["kanban", "create", "--from-file", "-"], { home: h.home, input: bigPlan(3 * 1024 * 1024) });
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /stdin is 3\.0 MiB of text; a plan file is at most 2 MiB/);
});

test.run();

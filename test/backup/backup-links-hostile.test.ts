// `agent backup` of a home whose links point back at it: a link to the home's backups/ folder
// (where the backup stages), to the home itself, to a folder the link is inside of, and into
// /proc. The backup finishes quickly, never copies the home into itself, and reports each as
// skipped with its reason. A link dropped whole at the follow cap reports only itself, not
// what was skipped inside it.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";
import { missingCommand, testUnless } from "../helpers/skip.js";

const homes: { home: string; cleanup: () => void }[] = [];
const outside = mkdtempSync(join(tmpdir(), "bkh-out-"));

test.after(async () => {
  for (const h of homes) {
    await stopDaemon(h.home);
    h.cleanup();
  }
  rmSync(outside, { recursive: true, force: true });
});

const entriesOf = (archive: string) => execFileSync("tar", ["tzf", archive], { encoding: "utf8" }).split("\n").filter(Boolean);

test("links back into the home, its backups folder and /proc: skipped with a reason, never copied into the archive", async () => {
  const h = tempHome("bkh");
  homes.push(h);
  mkdirSync(join(h.home, "skills", "loop"), { recursive: true });
  mkdirSync(join(h.home, "backups"), { recursive: true });
  writeFileSync(join(h.home, ".env"), "OPENAI_API_KEY=sk-hostile-test\n");
  symlinkSync(join(h.home, "backups"), join(h.home, "bk"));
  symlinkSync(".", join(h.home, "self"));
  symlinkSync("..", join(h.home, "skills", "loop", "up"));
  symlinkSync("/proc/self", join(h.home, "proc"));
  const started = Date.now();
  const r = await runCli(["backup", "--json"], { home: h.home, timeoutMs: 60_000 });
  assert.is(r.code, 0, r.stderr);
  const ms = Date.now() - started;
  const out = JSON.parse(r.stdout) as { path: string; followed: string[]; skipped: { path: string; reason: string }[] };
  const reasons = Object.fromEntries(out.skipped.map((s) => [s.path, s.reason]));
  assert.equal(out.followed, [], JSON.stringify(out));
  assert.match(reasons.bk ?? "", /backups folder/, JSON.stringify(reasons));
  assert.match(reasons.self ?? "", /a link to a folder it is inside of \(a loop\)/);
  assert.match(reasons["skills/loop/up"] ?? "", /a link to a folder it is inside of \(a loop\)/);
  assert.match(reasons.proc ?? "", /system folder/);
  assert.not.match(JSON.stringify(out), /ENAMETOOLONG/);
  const names = entriesOf(out.path);
  assert.ok(!names.some((n) => /^(bk|self|proc)\/|^skills\/loop\/up\//.test(n)), names.join("\n"));
  assert.ok(ms < 30_000, `${ms} ms`);
});

testUnless(missingCommand("mkfifo"))("a link dropped whole at the follow cap reports only itself, not what was skipped inside it", async () => {
  const tree = join(outside, "tree");
  mkdirSync(tree);
  for (let i = 0; i < 10; i++) writeFileSync(join(tree, `f${i}.txt`), "x");
  execFileSync("mkfifo", [join(tree, "a-pipe")]);
  const h = tempHome("bkh");
  homes.push(h);
  mkdirSync(h.home, { recursive: true });
  symlinkSync(tree, join(h.home, "tree"));
  const r = await runCli(["backup", "--json"], { home: h.home, env: { AGENT_BACKUP_FOLLOW_MAX_FILES: "5" } });
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { skipped: { path: string; reason: string }[] };
  assert.equal(
    out.skipped.map((s) => s.path),
    ["tree"],
  );
  assert.match(out.skipped[0]!.reason, /more than the cap for followed links \(5 files/);
});

test.run();

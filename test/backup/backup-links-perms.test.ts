// `agent backup` of a home with symbolic links: a skill linked from a dotfiles folder is in the
// archive (and back after import); a broken link and a loop are reported as skipped with the
// reason, in the output and in --json. Archives are written 0600; an unfinished `.tar.gz.tmp`
// a killed backup left is removed by the next backup and by a daemon start.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const src = tempHome("bkl");
const dotfiles = mkdtempSync(join(tmpdir(), "bkl-dot-"));
const homes = [src];

test.after(async () => {
  for (const h of homes) {
    await stopDaemon(h.home);
    h.cleanup();
  }
  rmSync(dotfiles, { recursive: true, force: true });
});

test("a skill linked from a dotfiles folder is in the backup and back after import; broken links and loops are reported", async () => {
  mkdirSync(join(dotfiles, "myskill", "refs"), { recursive: true });
  writeFileSync(join(dotfiles, "myskill", "SKILL.md"), "---\nname: myskill\ndescription: mine\n---\nbody\n");
  writeFileSync(join(dotfiles, "myskill", "refs", "a.md"), "ref\n");
  symlinkSync(join(dotfiles, "myskill"), join(dotfiles, "myskill", "refs", "loop"));
  mkdirSync(join(src.home, "skills"), { recursive: true });
  symlinkSync(join(dotfiles, "myskill"), join(src.home, "skills", "myskill"));
  symlinkSync(join(dotfiles, "gone"), join(src.home, "skills", "broken"));
  const text = await runCli(["backup"], { home: src.home });
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`followed link skills/myskill -> ${dotfiles}/myskill`));
  assert.match(text.stdout, new RegExp(`skipped skills/broken: a link to ${dotfiles}/gone, which does not exist`));
  assert.match(text.stdout, /skipped skills\/myskill\/refs\/loop: a link to a folder it is inside of \(a loop\)/);
  const r = await runCli(["backup", "--json"], { home: src.home });
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.followed, [`skills/myskill -> ${join(dotfiles, "myskill")}`]);
  assert.equal(
    out.skipped.map((s: { path: string }) => s.path),
    ["skills/broken", "skills/myskill/refs/loop"],
  );
  const target = tempHome("bkl-t");
  homes.push(target);
  const imp = await runCli(["import", out.path, "-y"], { home: target.home });
  assert.is(imp.code, 0, imp.stderr);
  assert.match(readFileSync(join(target.home, "skills", "myskill", "SKILL.md"), "utf8"), /name: myskill/);
  assert.is(readFileSync(join(target.home, "skills", "myskill", "refs", "a.md"), "utf8"), "ref\n");
  assert.not.ok(existsSync(join(target.home, "skills", "broken")));
});

test("the archive is written 0600", async () => {
  const r = await runCli(["backup", "--json", "--quick"], { home: src.home });
  assert.is(r.code, 0, r.stderr);
  const path = JSON.parse(r.stdout).path;
  assert.is(statSync(path).mode & 0o777, 0o600);
  const out = join(mkdtempSync(join(tmpdir(), "bkl-o-")), "x.tar.gz");
  const o = await runCli(["backup", "--json", "-o", out], { home: src.home });
  assert.is(o.code, 0, o.stderr);
  assert.is(statSync(out).mode & 0o777, 0o600);
  rmSync(join(out, ".."), { recursive: true, force: true });
});

test("a leftover .tar.gz.tmp is removed by the next backup and by a daemon start", async () => {
  const stale = join(src.home, "backups", "agent-backup-20260101-000000.tar.gz.tmp");
  writeFileSync(stale, "partial");
  const r = await runCli(["backup", "--quick"], { home: src.home });
  assert.is(r.code, 0, r.stderr);
  assert.not.ok(existsSync(stale), "removed by the next backup");
  await stopDaemon(src.home);
  writeFileSync(stale, "partial");
  const userFile = join(src.home, "backups", "mine.tmp");
  writeFileSync(userFile, "not ours");
  const start = await runCli(["daemon", "start"], { home: src.home });
  assert.is(start.code, 0, start.stderr);
  assert.not.ok(existsSync(stale), "removed at daemon start");
  assert.ok(existsSync(userFile), "only our names are removed");
});

test.run();

// Files the profiles feature writes go through the daemon's one atomic write: the new contents
// replace the file (a new inode renamed over it), never rewrite it in place, so a crash leaves
// the old or the new file and another name for the old inode (a hard link) is never changed.
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeAlias } from "../../daemon/profiles/alias.js";
import { disableCronJobs } from "../../daemon/profiles/distribution.js";

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "prof-atomic-"));
  dirs.push(dir);
  return dir;
}
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("installing a distribution's cron file replaces it whole: the file it was linked to keeps the author's text", async () => {
  const dir = freshDir();
  const source = join(dir, "source.yaml");
  const text = "jobs:\n  - name: daily\n    schedule: every 1d\n    prompt: report\n    enabled: true\n";
  writeFileSync(source, text);
  mkdirSync(join(dir, "profile", "cron"), { recursive: true });
  const installed = join(dir, "profile", "cron", "daily.yaml");
  linkSync(source, installed);
  assert.is(await disableCronJobs(join(dir, "profile"), ["cron/daily.yaml"]), 1);
  assert.match(readFileSync(installed, "utf8"), /enabled: false/);
  assert.is(readFileSync(source, "utf8"), text, "the other name of the old file is untouched");
  assert.is.not(statSync(installed).ino, statSync(source).ino);
  assert.equal(readdirSync(join(dir, "profile", "cron")), ["daily.yaml"], "no temp file left");
});

test("a profile alias is written whole and executable, replacing an earlier alias of ours", async () => {
  const home = freshDir();
  const saved = process.env.HOME;
  process.env.HOME = home;
  try {
    const first = await writeAlias("writer");
    assert.ok(first.path);
    const old = join(home, "old-alias");
    linkSync(first.path!, old);
    const before = readFileSync(old, "utf8");
    const again = await writeAlias("writer");
    assert.is(again.path, first.path);
    assert.is(statSync(again.path!).mode & 0o777, 0o755);
    assert.match(readFileSync(again.path!, "utf8"), /exec agent --profile writer/);
    assert.is.not(statSync(again.path!).ino, statSync(old).ino, "replaced by a rename, not rewritten in place");
    assert.is(readFileSync(old, "utf8"), before);
    assert.equal(readdirSync(join(home, ".local", "bin")), ["writer"]);
  } finally {
    process.env.HOME = saved;
  }
});

test.run();

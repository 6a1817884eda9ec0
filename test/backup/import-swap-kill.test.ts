// A `--force` import killed between its two renames leaves the home moved aside
// (`.<home>.import-old-<pid>-<ms>`) and no home. The next command that starts the daemon
// creates the home's logs/ folder before the daemon cleans up; the home moved aside must still
// be put back, never removed as if the swap had completed. A swap that did complete (killed
// before the old home was removed) is recognised by its marker and the old home is removed.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeArchive } from "../fixtures/archives.mjs";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const leftovers = (home: string) => readdirSync(dirname(home)).filter((n) => n.startsWith(`.${basename(home)}.import-`));

test("a home moved aside by a killed --force import is put back by a daemon start the CLI makes (which creates logs/ first)", async () => {
  const t = tempHome("impswap");
  try {
    const aside = join(dirname(t.home), `.${basename(t.home)}.import-old-999999999-1`);
    rmSync(t.home, { recursive: true });
    mkdirSync(join(aside, "notes"), { recursive: true });
    writeFileSync(join(aside, "notes", "mine.md"), "mine\n");
    const r = await runCli(["daemon", "start"], { home: t.home });
    assert.is(r.code, 0, r.stderr);
    assert.ok(existsSync(join(t.home, "notes", "mine.md")), `the home was lost: ${readdirSync(t.home).join(", ")}`);
    assert.is(readFileSync(join(t.home, "notes", "mine.md"), "utf8"), "mine\n");
    assert.equal(leftovers(t.home), []);
  } finally {
    await stopDaemon(t.home);
    t.cleanup();
  }
});

test("a completed swap (killed before the old home was removed): the old home is removed, the imported one stays", async () => {
  const t = tempHome("impswap");
  try {
    const name = `.${basename(t.home)}.import-old-999999999-2`;
    const aside = join(dirname(t.home), name);
    mkdirSync(aside);
    writeFileSync(join(aside, "old.md"), "old\n");
    mkdirSync(join(t.home, "notes"), { recursive: true });
    writeFileSync(join(t.home, "notes", "imported.md"), "new\n");
    writeFileSync(join(t.home, ".import-swap.json"), `${JSON.stringify({ old: name })}\n`);
    const r = await runCli(["daemon", "start"], { home: t.home });
    assert.is(r.code, 0, r.stderr);
    assert.is(readFileSync(join(t.home, "notes", "imported.md"), "utf8"), "new\n");
    assert.not.ok(existsSync(join(t.home, "old.md")));
    assert.not.ok(existsSync(join(t.home, ".import-swap.json")));
    assert.equal(leftovers(t.home), []);
  } finally {
    await stopDaemon(t.home);
    t.cleanup();
  }
});

test("a --force import that completes leaves no marker and no old home", async () => {
  const t = tempHome("impswap");
  try {
    const archive = join(dirname(t.home), `${basename(t.home)}-a.tar.gz`);
    await writeArchive(archive, [
      { path: "notes/", type: "Directory" },
      { path: "notes/imported.md", content: "new\n" },
    ]);
    writeFileSync(join(t.home, "mine.md"), "mine\n");
    const r = await runCli(["import", archive, "-y", "--force"], { home: t.home });
    assert.is(r.code, 0, r.stderr);
    assert.equal(readdirSync(t.home).sort(), ["data", "mine.md", "notes"]);
    assert.equal(leftovers(t.home), []);
    rmSync(archive, { force: true });
  } finally {
    t.cleanup();
  }
});

test.run();

// A tar cut at an entry boundary and still a valid .gz (a `tar | gzip` whose tar was killed):
// `agent import` refuses it as truncated instead of restoring part of a home, and changes
// nothing. The same archive whole imports.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeArchive } from "../fixtures/archives.mjs";
import { runCli, tempHome } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "imptrunc-"));
const whole = join(dir, "whole.tar.gz");
const cut = join(dir, "cut.tar.gz");
const leftovers = (home: string) => readdirSync(dirname(home)).filter((n) => n.startsWith(`.${basename(home)}.import-`));

test.before(async () => {
  await writeArchive(whole, [
    { path: "notes/", type: "Directory" },
    { path: "notes/a.md", content: "first\n" },
    { path: "notes/b.md", content: "second\n" },
  ]);
  // Drop the last entry and the end-of-archive blocks: the tar ends right after notes/a.md.
  const tar = gunzipSync(readFileSync(whole));
  let end = tar.length;
  while (end > 0 && tar[end - 1] === 0) end--;
  end = Math.ceil(end / 512) * 512; // the end of notes/b.md's data block
  const bHeader = end - 1024; // notes/b.md: one header block and one data block
  assert.is(tar.subarray(bHeader, bHeader + 10).toString("latin1"), "notes/b.md");
  writeFileSync(cut, gzipSync(tar.subarray(0, bHeader)));
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test("a tar cut at an entry boundary is refused as truncated and nothing changes", async () => {
  const t = tempHome("imptrunc");
  try {
    const r = await runCli(["import", cut, "-y"], { home: t.home });
    assert.is(r.code, 1, r.stderr + r.stdout);
    assert.match(r.stderr, /is cut short \(no end-of-archive blocks\): a truncated archive; nothing was restored/);
    assert.equal(readdirSync(t.home), []);
    assert.equal(leftovers(t.home), []);
    const ok = await runCli(["import", whole, "-y"], { home: t.home });
    assert.is(ok.code, 0, ok.stderr);
    assert.is(readFileSync(join(t.home, "notes", "b.md"), "utf8"), "second\n");
  } finally {
    t.cleanup();
  }
});

test.run();

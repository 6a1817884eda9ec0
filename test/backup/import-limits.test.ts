// `agent import` of a small archive that inflates to 800 MB: streamed to disk with the import's
// peak RSS under 200 MB; caps on total size, file count and file size refuse an archive over
// them with a clear error, changing nothing.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { bombEntries, writeArchive } from "../fixtures/archives.mjs";
import { runCli, tempHome } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "implim-"));
const bomb = join(dir, "bomb.tar.gz");
const PRELOAD = fileURLToPath(new URL("../fixtures/peak-rss.mjs", import.meta.url));
const MiB = 1024 ** 2;

const leftovers = (home: string) => readdirSync(dirname(home)).filter((n) => n.startsWith(`.${basename(home)}.import-`));

test.before(async () => {
  await writeArchive(bomb, bombEntries({ inflated: 800 * MiB, random: 3.5 * MiB }));
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test("a 4 MB archive that inflates to 800 MB is restored with the import's peak RSS under 200 MB", async () => {
  const size = statSync(bomb).size;
  assert.ok(size > 3 * MiB && size < 6 * MiB, `archive of ${size} bytes`);
  const t = tempHome("imprss");
  try {
    const rssFile = join(dir, "rss");
    const r = await runCli(["import", bomb, "-y"], {
      home: t.home,
      env: { NODE_OPTIONS: `--import ${PRELOAD}`, PEAK_RSS_FILE: rssFile },
      timeoutMs: 120_000,
    });
    assert.is(r.code, 0, r.stderr);
    const peakKiB = Number(readFileSync(rssFile, "utf8"));
    console.log(`  import of a ${(size / MiB).toFixed(1)} MB archive inflating to 800 MB: peak RSS ${(peakKiB / 1024).toFixed(0)} MB`);
    assert.ok(peakKiB > 0 && peakKiB < 200 * 1024, `peak RSS ${peakKiB} KiB`);
    let total = 0;
    for (const f of readdirSync(join(t.home, "data"))) total += statSync(join(t.home, "data", f)).size;
    assert.ok(total >= 799 * MiB, `restored ${total} bytes`);
  } finally {
    t.cleanup();
  }
});

for (const [what, args, env, message] of [
  ["the total size cap (flag)", ["--max-bytes", "100M"], {}, /holds more than 100 MiB of files, the cap/],
  ["the total size cap (env)", [], { AGENT_IMPORT_MAX_BYTES: "100M" }, /holds more than 100 MiB of files, the cap/],
  ["the per-file cap", ["--max-file-bytes", "10M"], {}, /holds a file of [\d.]+ MiB \(data\/zeros-0\.bin\), over the cap of 10 MiB per file/],
  ["the file count cap", ["--max-files", "3"], {}, /holds more than 3 files and folders, the cap/],
] as const) {
  test(`an archive over ${what} is refused with a clear error and nothing changes`, async () => {
    const t = tempHome("impcap");
    try {
      const r = await runCli(["import", bomb, "-y", ...args], { home: t.home, env: { ...env } });
      assert.is(r.code, 1, r.stderr);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /nothing was restored/);
      assert.not.match(r.stderr, /unexpected error|\n\s+at /);
      assert.equal(readdirSync(t.home), []);
      assert.equal(leftovers(t.home), []);
    } finally {
      t.cleanup();
    }
  });
}

test("a cap that is not a size is a usage error", async () => {
  const t = tempHome("impcap");
  try {
    const r = await runCli(["import", bomb, "--max-bytes", "lots"], { home: t.home });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /--max-bytes takes a positive number/);
    assert.ok(existsSync(t.home));
    assert.equal(readdirSync(t.home), []);
  } finally {
    t.cleanup();
  }
});

test.run();

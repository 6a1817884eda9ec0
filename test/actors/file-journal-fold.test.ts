import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FileJournal } from "../../daemon/actors/storage/file-journal.js";
import { actorEntryPath, indexDir, prepareActorLayout } from "../../daemon/actors/storage/layout.js";
import { tempHome, waitFor } from "../helpers/cli.js";

const generations = (dir: string) =>
  readdirSync(indexDir(dir))
    .filter((f) => f.startsWith("files.journal."))
    .sort();

/** A journal generation 0 with `n` files' contents, and `empty` empty generations after it (left by folds a stop interrupted). */
function leftover(dir: string, n: number, empty: number): void {
  prepareActorLayout(dir);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(`a${i}.json\t{"n":${i}}\n`);
  writeFileSync(join(indexDir(dir), "files.journal.0"), lines.join(""));
  for (let g = 1; g <= empty; g++) writeFileSync(join(indexDir(dir), `files.journal.${g}`), "");
}

test("a fold at start reuses the empty generation an interrupted fold left, so no journal file is added", async () => {
  const { home: dir, cleanup } = tempHome("fj");
  try {
    leftover(dir, 3, 3);
    const j = FileJournal.open(dir);
    await j.ready();
    await waitFor("the fold is done", () => j.size === 0);
    await j.close();
    assert.equal(generations(dir), ["files.journal.3"]);
    for (let i = 0; i < 3; i++) assert.is(readFileSync(actorEntryPath(dir, `a${i}.json`), "utf8"), `{"n":${i}}`);
  } finally {
    cleanup();
  }
});

test("starts stopped while their fold runs leave no more journal files than they found, and every file reads back", async () => {
  const { home: dir, cleanup } = tempHome("fj");
  try {
    leftover(dir, 2000, 1);
    for (let round = 0; round < 5; round++) {
      const j = FileJournal.open(dir);
      await j.ready();
      await j.close();
      const gens = generations(dir);
      assert.ok(gens.length <= 2 && gens.every((g) => g === "files.journal.0" || g === "files.journal.1"), gens.join(" "));
    }
    const j = FileJournal.open(dir);
    await j.ready();
    for (let i = 0; i < 2000; i += 97) assert.is(j.read(`a${i}.json`), `{"n":${i}}`);
    await waitFor("the fold is done", () => j.size === 0, 30_000);
    await j.close();
    assert.equal(generations(dir), ["files.journal.1"]);
    for (let i = 0; i < 2000; i += 97) assert.is(readFileSync(actorEntryPath(dir, `a${i}.json`), "utf8"), `{"n":${i}}`);
  } finally {
    cleanup();
  }
});

test.run();

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FileJournal } from "../../daemon/actors/storage/file-journal.js";
import { actorEntryPath, indexDir, prepareActorLayout } from "../../daemon/actors/storage/layout.js";
import { tempHome } from "../helpers/cli.js";

/** One write per event-loop turn, as an actor answering calls turn after turn does. */
async function writeTurns(j: FileJournal, name: string, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++) await j.write(name, () => `{"n":${i}}`);
}

test("a file written in many turns a second goes to the journal instead of being replaced each turn, and reads back after a reopen", async () => {
  const { home: dir, cleanup } = tempHome("fj");
  try {
    prepareActorLayout(dir);
    let j = FileJournal.open(dir);
    await j.ready();
    await writeTurns(j, "hot.json", 1, 30);
    // The first writes replaced the file in place; once hot, the newest contents are journal lines.
    assert.is.not(readFileSync(actorEntryPath(dir, "hot.json"), "utf8"), '{"n":30}');
    assert.is(j.read("hot.json"), '{"n":30}');
    assert.ok(readdirSync(indexDir(dir)).some((f) => f.startsWith("files.journal.")));
    await j.close();
    j = FileJournal.open(dir);
    await j.ready();
    assert.is(j.read("hot.json"), '{"n":30}');
    await j.close();
  } finally {
    cleanup();
  }
});

test("a file written now and then is replaced in place", async () => {
  const { home: dir, cleanup } = tempHome("fj");
  try {
    prepareActorLayout(dir);
    const j = FileJournal.open(dir);
    await j.ready();
    await writeTurns(j, "quiet.json", 1, 3);
    assert.ok(existsSync(actorEntryPath(dir, "quiet.json")));
    assert.is(readFileSync(actorEntryPath(dir, "quiet.json"), "utf8"), '{"n":3}');
    assert.is(j.has("quiet.json"), false);
    await j.close();
  } finally {
    cleanup();
  }
});

test.run();

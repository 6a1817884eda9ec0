import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { stageHome } from "../../daemon/backup/stage.js";
import { noteChanged, watchChanges, writeFileAtomicSync } from "../../daemon/store/atomic-file.js";
import { Journal } from "../../daemon/store/journal.js";
import { tempHome } from "../helpers/cli.js";

test("a folder removed while the backup stages the home is skipped, and the actor files are still linked, not copied", async () => {
  const { home, cleanup } = tempHome("stage");
  try {
    const shard = join(home, "data", "actors", "ab");
    mkdirSync(join(shard, "gone.kv"), { recursive: true });
    writeFileSync(join(shard, "gone.kv", "default.json"), "{}");
    writeFileSync(join(shard, "kept.json"), '{"n":1}');
    const staging = join(home, "..", `${home.split("/").pop()}-staging`);
    // An actor destroyed mid-backup: its KV folder goes away between its parent's listing and its own.
    const skip = (rel: string) => {
      if (rel === join("data", "actors", "ab", "gone.kv")) rmSync(join(shard, "gone.kv"), { recursive: true, force: true });
      return false;
    };
    try {
      const files = await stageHome({ home, staging, skip });
      assert.is(files, 1);
      const staged = join(staging, "data", "actors", "ab", "kept.json");
      assert.is(statSync(staged).ino, statSync(join(shard, "kept.json")).ino, "the actor file is a link to the home's own");
      assert.is(statSync(join(staging, "data", "actors", "ab", "gone.kv"), { throwIfNoEntry: false }), undefined);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  } finally {
    cleanup();
  }
});

test("with the store kit's change watch, the shard folders changed while the home is staged are settled from it: replaced, new (in a new shard), removed and appended files as they are at the end", async () => {
  const { home, cleanup } = tempHome("stage");
  const watch = watchChanges();
  try {
    const actors = join(home, "data", "actors");
    const ab = join(actors, "ab");
    mkdirSync(ab, { recursive: true });
    for (const n of ["a1", "a2", "a3"]) writeFileSync(join(ab, `${n}.json`), `{"n":"${n}-old"}`);
    const wal = new Journal(join(ab, "a3.json.wal"));
    wal.append("step 1\n");
    const staging = join(home, "..", `${home.split("/").pop()}-staging`);
    let changed = false;
    // Mid-staging (once data/actors was listed), through the kit as the daemon writes.
    const skip = (rel: string) => {
      if (!changed && rel.startsWith(join("data", "actors", "ab") + "/")) {
        changed = true;
        writeFileAtomicSync(join(ab, "a1.json"), '{"n":"a1-new"}');
        rmSync(join(ab, "a2.json"));
        noteChanged(join(ab, "a2.json"));
        wal.append("step 2\n");
        mkdirSync(join(actors, "cd"));
        writeFileAtomicSync(join(actors, "cd", "c1.json"), '{"n":"c1"}');
      }
      return false;
    };
    try {
      const files = await stageHome({ home, staging, skip, watch });
      assert.ok(changed);
      const at = (...p: string[]) => join(staging, "data", "actors", ...p);
      assert.is(readFileSync(at("ab", "a1.json"), "utf8"), '{"n":"a1-new"}');
      assert.is(statSync(at("ab", "a1.json")).ino, statSync(join(ab, "a1.json")).ino, "linked, not copied");
      assert.not.ok(existsSync(at("ab", "a2.json")), "a removed file is not staged");
      assert.is(readFileSync(at("ab", "a3.json"), "utf8"), '{"n":"a3-old"}');
      assert.is(readFileSync(at("ab", "a3.json.wal"), "utf8"), "step 1\nstep 2\n");
      assert.is(readFileSync(at("cd", "c1.json"), "utf8"), '{"n":"c1"}');
      assert.is(files, 4, "a1, a3, its step journal and c1");
    } finally {
      wal.close();
      rmSync(staging, { recursive: true, force: true });
    }
  } finally {
    watch.close();
    cleanup();
  }
});

/**
 * A journal of `size` bytes (complete lines) at `data/actors/index/files.journal.0`, staged while
 * `change` runs once the copy ahead is done and before the final turn (the watch's first
 * `take`, which the catch-up rounds call then); resolves with the staged copy and the journal
 * as the final turn saw it.
 */
async function stageJournal(size: number, change: (journal: Journal, file: string) => void): Promise<{ staged: string; now: string; copiedAhead: boolean }> {
  const { home, cleanup } = tempHome("stage");
  const watch = watchChanges();
  const file = join(home, "data", "actors", "index", "files.journal.0");
  mkdirSync(join(home, "data", "actors", "index"), { recursive: true });
  const journal = new Journal(file);
  const line = `${"x".repeat(99)}\n`;
  journal.append(line.repeat(Math.ceil(size / line.length)));
  const staging = join(home, "..", `${home.split("/").pop()}-staging`);
  const take = watch.take.bind(watch);
  let copiedAhead = false;
  let done = false;
  watch.take = () => {
    if (!done) {
      done = true;
      copiedAhead = existsSync(join(staging, "data", "actors", "index", "files.journal.0"));
      change(journal, file);
    }
    return take();
  };
  try {
    await stageHome({ home, staging, skip: () => false, watch });
    // Nothing ran since the final turn (this continues in its microtask).
    const now = readFileSync(file, "utf8");
    return { staged: readFileSync(join(staging, "data", "actors", "index", "files.journal.0"), "utf8"), now, copiedAhead };
  } finally {
    journal.close();
    watch.close();
    rmSync(staging, { recursive: true, force: true });
    cleanup();
  }
}

test("a large journal is copied ahead of the final turn, which adds only the lines appended since: the staged copy is the journal whole", async () => {
  const r = await stageJournal(1 << 20, (journal) => journal.append("appended 1\nappended 2\n"));
  assert.ok(r.copiedAhead, "copied before the final turn");
  assert.ok(r.now.endsWith("appended 1\nappended 2\n"));
  assert.ok(r.staged === r.now, `the staged journal (${r.staged.length} bytes) is the journal (${r.now.length} bytes)`);
});

test("a journal folded (emptied) after its copy ahead, then appended to past its old length, is staged as it is now, not as the old prefix", async () => {
  const r = await stageJournal(512 * 1024, (journal) => {
    journal.truncate();
    journal.append(`${"y".repeat(1023)}\n`.repeat(700));
  });
  assert.ok(r.copiedAhead);
  assert.ok(r.now.startsWith("y") && r.now.length === 700 * 1024);
  assert.ok(r.staged === r.now, "the staged journal is the new one");
});

test("a journal emptied after its copy ahead is staged empty; one replaced by rename is staged as the new file", async () => {
  const emptied = await stageJournal(512 * 1024, (journal) => journal.truncate());
  assert.is(emptied.staged, "");
  assert.is(emptied.now, "");
  const replaced = await stageJournal(512 * 1024, (_journal, file) => writeFileAtomicSync(file, "rewritten\n"));
  assert.is(replaced.staged, "rewritten\n");
});

test("a large file written in place by a writer that does not report (not the kit) is copied whole in the final turn when it changed", async () => {
  const r = await stageJournal(512 * 1024, (_journal, file) => {
    const fd = openSync(file, "r+");
    writeSync(fd, "changed in place", 0);
    closeSync(fd);
  });
  assert.ok(r.copiedAhead);
  assert.ok(r.now.startsWith("changed in place"));
  assert.ok(r.staged === r.now, "the staged file is the changed one");
});

test.run();

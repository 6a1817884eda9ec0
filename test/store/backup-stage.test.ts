import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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

test.run();

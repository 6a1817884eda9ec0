import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { stageHome } from "../../daemon/backup/stage.js";
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

test.run();

// Start-up temp cleanup (daemon/store/temp-cleanup.ts) and the lock kit's temp files
// (file-lock.ts writes a lock aside, then links it): a kill -9 between the two leaves
// `<name>.lock[.takeover].<pid>.<rand>.tmp`. A dead pid's is removed at start; a live process's,
// which may be about to link it, is left alone; names that are not ours are never touched.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tryCreateLock } from "../../daemon/store/file-lock.js";
import { removeStaleTempFiles } from "../../daemon/store/temp-cleanup.js";

test("a dead process's lock temp is removed at start, a live one's and foreign names stay", async () => {
  const home = mkdtempSync(join(tmpdir(), "tmpclean-"));
  try {
    const gone = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((r) => gone.once("exit", r));
    const names = {
      dead: `auth.json.lock.${gone.pid}.0a1b2c3d4e5f.tmp`,
      deadGuard: `daemon.lock.takeover.${gone.pid}.0a1b2c3d4e5f.tmp`,
      live: `daemon.lock.${process.pid}.0a1b2c3d4e5f.tmp`,
      atomic: "config.json.tmp",
      foreign: "notes.tmp",
    };
    for (const n of Object.values(names)) writeFileSync(join(home, n), "x");
    // The kit's own temp names are of that shape: a lock taken and released leaves none.
    assert.ok(tryCreateLock(join(home, "kit.lock")));
    const removed = removeStaleTempFiles(home)
      .map((p) => p.slice(home.length + 1))
      .sort();
    assert.equal(removed, [names.dead, names.atomic, names.deadGuard].sort());
    assert.ok(existsSync(join(home, names.live)), "a live process's lock temp stays");
    assert.ok(existsSync(join(home, names.foreign)), "a name that is not ours stays");
    assert.ok(existsSync(join(home, "kit.lock")));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test.run();

// The batch writer (daemon/actors/storage/batch-writer.ts): a turn with many files goes to its
// thread (file-writer-thread.ts, the compiled module that uses the one atomic write). Every file
// is replaced whole, no temp file is left, and a file the disk refuses fails alone with the
// `storage.*` error the rest of the daemon gives (its code survives the thread boundary).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BatchFileWriter } from "../../daemon/actors/storage/batch-writer.js";
import { setDurability } from "../../daemon/store/durability.js";
import { AgentError } from "../../shared/errors.js";
import { tempHome } from "../helpers/cli.js";

test.after.each(() => setDurability("process"));

for (const mode of ["process", "power"] as const) {
  test(`a turn of many files is written whole by the writer thread (durability ${mode})`, async () => {
    const { home, cleanup } = tempHome("bw");
    try {
      setDurability(mode);
      const writer = new BatchFileWriter();
      const dirs = ["a", "b", "c"].map((d) => join(home, d));
      for (const d of dirs) mkdirSync(d);
      for (const d of dirs) writeFileSync(join(d, "f0"), "old");
      const writes = [];
      for (let i = 0; i < 30; i++) writes.push(writer.write(join(dirs[i % 3]!, `f${i}`), () => `contents ${i} ${"x".repeat(i * 100)}`));
      await Promise.all(writes);
      for (let i = 0; i < 30; i++) assert.is(readFileSync(join(dirs[i % 3]!, `f${i}`), "utf8"), `contents ${i} ${"x".repeat(i * 100)}`);
      for (const d of dirs) assert.ok(!readdirSync(d).some((f) => f.endsWith(".tmp")), `no temp file left in ${d}`);
    } finally {
      cleanup();
    }
  });
}

test("a file the disk refuses fails alone, with a storage error that names it", async () => {
  const { home, cleanup } = tempHome("bw");
  try {
    const writer = new BatchFileWriter();
    // A regular file where a folder should be: the write of a file inside it fails (ENOTDIR).
    writeFileSync(join(home, "not-a-dir"), "");
    const bad = join(home, "not-a-dir", "f");
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => writer.write(i === 5 ? bad : join(home, `ok${i}`), () => `n${i}`)));
    const failed = results.flatMap((r, i) => (r.status === "rejected" ? [[i, r.reason] as const] : []));
    assert.is(failed.length, 1);
    const [index, error] = failed[0]!;
    assert.is(index, 5);
    assert.instance(error, AgentError);
    assert.is((error as AgentError).code, "storage.write_failed");
    assert.match((error as AgentError).message, bad);
    for (let i = 0; i < 12; i++) if (i !== 5) assert.is(readFileSync(join(home, `ok${i}`), "utf8"), `n${i}`);
    assert.not.ok(existsSync(`${bad}.tmp`));
  } finally {
    cleanup();
  }
});

test.run();

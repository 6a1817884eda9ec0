import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { keepBackup, writeFileAtomic, writeFileAtomicSync } from "../../daemon/store/atomic-file.js";
import { DocStore } from "../../daemon/store/doc-store.js";
import { tempHome } from "../helpers/cli.js";

test("an atomic write replaces the file and leaves no temp file", async () => {
  const { home, cleanup } = tempHome();
  try {
    const file = join(home, "a.json");
    writeFileSync(file, "old");
    await writeFileAtomic(file, "new");
    writeFileAtomicSync(join(home, "b.json"), "sync");
    assert.is(readFileSync(file, "utf8"), "new");
    assert.is(readFileSync(join(home, "b.json"), "utf8"), "sync");
    assert.equal(readdirSync(home).sort(), ["a.json", "b.json"]);
  } finally {
    cleanup();
  }
});

test("a write whose rename fails leaves what was there and removes its temp file", async () => {
  const { home, cleanup } = tempHome();
  try {
    const file = join(home, "busy");
    mkdirSync(file);
    writeFileSync(join(file, "child"), "x");
    const asyncError = await writeFileAtomic(file, "new").then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(asyncError, "the async write reports the failure");
    let syncError: unknown = null;
    try {
      writeFileAtomicSync(file, "new");
    } catch (error) {
      syncError = error;
    }
    assert.ok(syncError, "the sync write reports the failure");
    assert.equal(readdirSync(home), ["busy"]);
    assert.is(readFileSync(join(file, "child"), "utf8"), "x");
  } finally {
    cleanup();
  }
});

test("a new file gets the requested mode and an existing file keeps its own", async () => {
  const { home, cleanup } = tempHome();
  try {
    const fresh = join(home, "fresh.yaml");
    await writeFileAtomic(fresh, "a: 1\n", { mode: 0o600, fsync: true });
    assert.is(statSync(fresh).mode & 0o777, 0o600);
    const existing = join(home, "existing.yaml");
    writeFileSync(existing, "a: 1\n", { mode: 0o640 });
    await writeFileAtomic(existing, "a: 2\n", { mode: 0o600, fsync: true });
    assert.is(statSync(existing).mode & 0o777, 0o640);
    assert.is(readFileSync(existing, "utf8"), "a: 2\n");
  } finally {
    cleanup();
  }
});

test("keepBackup keeps the contents an atomic write then replaces, and answers null without a file", async () => {
  const { home, cleanup } = tempHome();
  try {
    const file = join(home, "c.yaml");
    assert.is(await keepBackup(file), null);
    assert.not.ok(existsSync(`${file}.bak`));
    writeFileSync(file, "first");
    assert.is(await keepBackup(file), `${file}.bak`);
    await writeFileAtomic(file, "second");
    assert.is(readFileSync(`${file}.bak`, "utf8"), "first");
    assert.is(readFileSync(file, "utf8"), "second");
  } finally {
    cleanup();
  }
});

test("document writes asked for while one is on its way share the next write, which holds the latest data", async () => {
  const { home, cleanup } = tempHome();
  try {
    const file = join(home, "list.json");
    const doc = await DocStore.open<{ items: string[] }>({ file, kind: "list", version: 1, initial: () => ({ items: [] }) });
    const writes = ["a", "b", "c", "d"].map((item) => doc.update((d) => d.items.push(item)));
    await writes[0];
    assert.ok(
      (JSON.parse(readFileSync(file, "utf8")) as { data: { items: string[] } }).data.items.includes("a"),
      "the first write is on disk when it resolves",
    );
    await Promise.all(writes);
    assert.equal(JSON.parse(readFileSync(file, "utf8")), { kind: "list", schemaVersion: 1, data: { items: ["a", "b", "c", "d"] } });
    assert.equal(readdirSync(home), ["list.json"]);
  } finally {
    cleanup();
  }
});

test.run();

// A DocStore write that fails changes nothing: the data goes back to what is on disk, and a
// write queued behind the failed one (sharing its data) fails too instead of writing it later.
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DocStore } from "../../daemon/store/doc-store.js";

async function store(dir: string) {
  return DocStore.open<{ n: number }>({ file: join(dir, "doc.json"), kind: "test-doc", version: 1, initial: () => ({ n: 0 }), rollBack: true });
}

test("a failed DocStore write rolls the data back and fails the write that shared it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ds-"));
  try {
    const doc = await store(dir);
    doc.data.n = 1;
    await doc.write();
    // A directory where the temp file goes makes the next writes fail (root ignores chmod).
    mkdirSync(join(dir, "doc.json.tmp"));
    doc.data.n = 2;
    const first = doc.write();
    doc.data.n = 3;
    const second = doc.write();
    const [a, b] = await Promise.allSettled([first, second]);
    assert.is(a.status, "rejected");
    assert.is(b.status, "rejected");
    assert.is((a as PromiseRejectedResult).reason.code, "storage.write_failed");
    assert.match((a as PromiseRejectedResult).reason.message, /cannot write .*doc\.json: EISDIR/);
    assert.is(doc.data.n, 1);
    rmdirSync(join(dir, "doc.json.tmp"));
    doc.data.n += 10;
    await doc.write();
    assert.is((JSON.parse(readFileSync(join(dir, "doc.json"), "utf8")) as { data: { n: number } }).data.n, 11);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();

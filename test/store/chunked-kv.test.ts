// The one chunked KV store (daemon/store/chunked-kv.ts) over the real bucketed actor KV files,
// in a temp folder: chunk boundaries, ranges, update in place, the transactional write of
// several chunks and its recovery after a crash (injected failures, and a real SIGKILL of a
// child process in the middle of the write), dropping the oldest records.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BucketedKv } from "../../daemon/actors/storage/kv.js";
import { type ChunkKv, ChunkedKv, ChunkedList } from "../../daemon/store/chunked-kv.js";
import { TS_LOADER } from "../helpers/ts-loader.js";

interface Rec {
  n: number;
  v: string;
}
const rec = (n: number, v = "x"): Rec => ({ n, v });
const OPTIONS = { prefix: "item/", chunkSize: 4 };

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "chunked-kv-"));
  dirs.push(dir);
  return dir;
}
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The real KV, counting puts per key, optionally failing a put (`fail` returns true). */
function counting(real: BucketedKv, fail: (key: string, phase: "before" | "after") => boolean = () => false) {
  const puts: string[] = [];
  const kv: ChunkKv = {
    getJson: (k) => real.getJson(k),
    delete: (k) => real.delete(k),
    list: (p) => real.list(p),
    putJson: async (k, v) => {
      if (fail(k, "before")) throw new Error(`injected failure before ${k}`);
      puts.push(k);
      await real.putJson(k, v);
      if (fail(k, "after")) throw new Error(`injected failure after ${k}`);
    },
  };
  return { kv, puts };
}

const open = (kv: ChunkKv) => new ChunkedList<Rec>(kv, OPTIONS).open();

test("records are stored 4 to a chunk under zero-padded keys, and a reopened list finds its end at any length", async () => {
  for (const length of [0, 1, 3, 4, 5, 8, 17, 4 * 9 + 2]) {
    const dir = freshDir();
    const list = await open(new BucketedKv(dir));
    for (let i = 0; i < length; i++) await list.append([rec(i)]);
    const real = new BucketedKv(dir);
    const chunks = await new ChunkedKv<Rec>(real, OPTIONS).readChunks();
    assert.equal(
      chunks.map(([k, r]) => [k, r.length]),
      Array.from({ length: Math.ceil(length / 4) }, (_, k) => [k, Math.min(4, length - k * 4)]),
      `chunks of a list of ${length}`,
    );
    if (length > 0) assert.ok(await real.getJson("item/00000000"), "the first chunk's key");
    const again = await open(real);
    assert.equal([again.start, again.end], [0, length], `bounds of a list of ${length}`);
    assert.equal(
      (await again.readAll()).map((r) => r.n),
      Array.from({ length }, (_, i) => i),
    );
  }
});

test("a range read crossing chunk boundaries reads only its chunks and returns exactly the range", async () => {
  const dir = freshDir();
  const list = await open(new BucketedKv(dir));
  await list.append(Array.from({ length: 13 }, (_, i) => rec(i)));
  const real = new BucketedKv(dir);
  let reads: string[] = [];
  const spying: ChunkKv = { ...counting(real).kv, getJson: (k) => (reads.push(k), real.getJson(k)) };
  const chunks = new ChunkedKv<Rec>(spying, OPTIONS);
  reads = [];
  assert.equal(
    (await chunks.read(3, 9)).map((r) => r.n),
    [3, 4, 5, 6, 7, 8],
  );
  assert.equal(reads, ["item/00000000", "item/00000001", "item/00000002"]);
  reads = [];
  assert.equal(
    (await chunks.read(4, 8)).map((r) => r.n),
    [4, 5, 6, 7],
  );
  assert.equal(reads, ["item/00000001"], "a range that is one whole chunk reads that chunk only");
  assert.equal(await chunks.read(5, 5), []);
});

test("an append within a chunk is one put of that chunk; one crossing a boundary goes through the tx record", async () => {
  const dir = freshDir();
  const { kv, puts } = counting(new BucketedKv(dir));
  const list = await open(kv);
  await list.append([rec(0), rec(1)]);
  assert.equal(puts, ["item/00000000"]);
  puts.length = 0;
  await list.append([rec(2), rec(3), rec(4)]);
  assert.equal(puts.sort(), ["item/00000000", "item/00000001", "item/tx"]);
  assert.is(await new BucketedKv(dir).getJson("item/tx"), null, "the tx record is gone once the chunks are written");
  puts.length = 0;
  await list.append([rec(5)]);
  assert.equal(puts, ["item/00000001"], "the next append writes the last chunk only");
});

test("an update in place rewrites only the chunk of the record, and the list reads it back after a reopen", async () => {
  const dir = freshDir();
  const { kv, puts } = counting(new BucketedKv(dir));
  const list = await open(kv);
  await list.append(Array.from({ length: 10 }, (_, i) => rec(i)));
  puts.length = 0;
  await list.update(6, rec(6, "new"));
  assert.equal(puts, ["item/00000001"]);
  await list.update(9, rec(9, "tail"));
  await list.append([rec(10)]);
  const again = await open(new BucketedKv(dir));
  assert.equal(
    (await again.readAll()).map((r) => `${r.n}${r.v}`),
    ["0x", "1x", "2x", "3x", "4x", "5x", "6new", "7x", "8x", "9tail", "10x"],
  );
  const bad = await list.update(11, rec(11)).then(
    () => null,
    (e: Error) => e.message,
  );
  assert.match(bad ?? "", /no record at 11/);
});

test("a change of several chunks that fails before its commit record changes nothing; after it, the next open finishes it", async () => {
  const dir = freshDir();
  const list = await open(new BucketedKv(dir));
  await list.append(Array.from({ length: 12 }, (_, i) => rec(i)));
  const change: Array<[number, Rec]> = [
    [1, rec(1, "new")],
    [5, rec(5, "new")],
    [9, rec(9, "new")],
  ];
  // Dies as the commit record is put: nothing lands.
  const before = await open(counting(new BucketedKv(dir), (k, phase) => k === "item/tx" && phase === "before").kv);
  assert.ok(
    await before.updateMany(change).then(
      () => false,
      () => true,
    ),
  );
  assert.equal(
    (await (await open(new BucketedKv(dir))).readAll()).filter((r) => r.v === "new"),
    [],
  );
  // Dies after the commit record and the first chunk: the next open writes the rest.
  let chunkPuts = 0;
  const after = await open(counting(new BucketedKv(dir), (k, phase) => phase === "before" && k !== "item/tx" && ++chunkPuts > 1).kv);
  assert.ok(
    await after.updateMany(change).then(
      () => false,
      () => true,
    ),
  );
  const real = new BucketedKv(dir);
  assert.ok(await real.getJson("item/tx"), "the commit record is there");
  const recovered = await open(real);
  assert.equal(
    (await recovered.readAll()).filter((r) => r.v === "new").map((r) => r.n),
    [1, 5, 9],
  );
  assert.is(await real.getJson("item/tx"), null);
});

test("a write after one that failed past its commit finishes that one first, so a later open never puts old chunks over it", async () => {
  const dir = freshDir();
  let failing = true;
  // The chunk puts of the first change of two chunks fail (the tx record landed).
  const { kv } = counting(new BucketedKv(dir), (k, phase) => failing && phase === "before" && k !== "item/tx");
  const chunks = new ChunkedKv<Rec>(kv, OPTIONS);
  const first = chunks.writeChunks([
    [0, [rec(0, "first")]],
    [1, [rec(4, "first")]],
  ]);
  assert.ok(
    await first.then(
      () => false,
      () => true,
    ),
  );
  failing = false;
  await chunks.writeChunks([[0, [rec(0, "second")]]]);
  // The next start finishes whatever tx record it finds: chunk 0 must keep the newer write.
  const reopened = new ChunkedKv<Rec>(new BucketedKv(dir), OPTIONS);
  await reopened.recover();
  assert.equal(
    (await reopened.readAll()).map((r) => `${r.n}${r.v}`),
    ["0second", "4first"],
  );
});

test("an append that failed past its commit counts as made: the list's next append goes after it", async () => {
  const dir = freshDir();
  let failing = false;
  const { kv } = counting(new BucketedKv(dir), (k, phase) => failing && phase === "before" && k !== "item/tx");
  const list = await open(kv);
  await list.append([rec(0), rec(1), rec(2)]);
  failing = true;
  assert.ok(
    await list.append([rec(3), rec(4)]).then(
      () => false,
      () => true,
    ),
    "the append across the boundary failed after its commit",
  );
  failing = false;
  await list.append([rec(5)]);
  assert.equal(
    (await (await open(new BucketedKv(dir))).readAll()).map((r) => r.n),
    [0, 1, 2, 3, 4, 5],
  );
});

const fixture = fileURLToPath(new URL("../fixtures/chunked-kv-crash.ts", import.meta.url));

for (const when of ["before-commit", "after-commit"] as const) {
  test(`a process killed with SIGKILL ${when.replace("-", " the ")} of a change of three chunks leaves ${when === "before-commit" ? "none" : "all"} of it after the next open`, async () => {
    const dir = freshDir();
    const list = await open(new BucketedKv(dir));
    await list.append(Array.from({ length: 12 }, (_, i) => rec(i)));
    const r = spawnSync(process.execPath, [...TS_LOADER, fixture, dir, when], { encoding: "utf8", timeout: 30_000 });
    assert.is(r.signal, "SIGKILL", `the child was killed in the middle (${r.stdout}${r.stderr})`);
    const changed = (await (await open(new BucketedKv(dir))).readAll()).filter((x) => x.v === "changed").map((x) => x.n);
    assert.equal(changed, when === "before-commit" ? [] : [1, 5, 9]);
  });
}

test("dropping the oldest records moves the head, deletes whole chunks before it, and survives a reopen", async () => {
  const dir = freshDir();
  const list = await open(new BucketedKv(dir));
  await list.append(Array.from({ length: 11 }, (_, i) => rec(i)));
  const dropped = await list.dropBefore(6);
  assert.equal(
    dropped.map((r) => r.n),
    [0, 1, 2, 3, 4, 5],
  );
  const real = new BucketedKv(dir);
  assert.is(await real.getJson("item/00000000"), null, "the first chunk is gone");
  assert.ok(await real.getJson("item/00000001"), "the chunk holding the new first record stays");
  await list.append([rec(11)]);
  const again = await open(real);
  assert.equal([again.start, again.end, again.length], [6, 12, 6]);
  assert.equal(
    (await again.readAll()).map((r) => r.n),
    [6, 7, 8, 9, 10, 11],
  );
  assert.equal(await again.dropBefore(3), [], "dropping what is already gone does nothing");
  await again.remove();
  assert.equal(await real.list("item/"), []);
});

test("a staged record past what the chunk holds is refused (no silent gap)", async () => {
  const dir = freshDir();
  const chunks = new ChunkedKv<Rec>(new BucketedKv(dir), OPTIONS);
  await chunks.stage(0, rec(0));
  await chunks.writeTail();
  const fresh = new ChunkedKv<Rec>(new BucketedKv(dir), OPTIONS);
  const error = await fresh.stage(3, rec(3)).then(
    () => null,
    (e: Error) => e.message,
  );
  assert.match(error ?? "", /gap/);
});

test.run();

// The backup packs each folder as soon as its link thread has staged it (daemon/backup/
// tar-members.ts, pack-thread.ts) and, after the final turn, packs again only what the staging
// changed since: the archive must still be exactly the home at the staged instant. Files are
// changed between the first pass and the final turn (the watch's first `take`, as the catch-up
// rounds call it): a replaced actor file, a removed one, a new shard, a new KV folder, an
// appended journal, a new top-level folder; then the archive is extracted and compared with the
// home byte for byte. Also: `backup.compression_level` is checked (1–9) with a clear error.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { extract } from "tar";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createBackup } from "../../daemon/backup/backup.js";
import { type EarlyPacking, type StageMarks, stageHome } from "../../daemon/backup/stage.js";
import { ChangeWatch, noteChanged, watchChanges, writeFileAtomicSync } from "../../daemon/store/atomic-file.js";
import { Journal } from "../../daemon/store/journal.js";
import { checkValue, parseValueFor } from "../../shared/config/schema.js";
import { homePaths } from "../../shared/paths.js";

const dir = mkdtempSync(join(tmpdir(), "bkearly-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** Every file under `root` (relative) with its contents, and every folder (ending with `/`). */
function tree(root: string, skip: (rel: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const rel = relative(root, p);
      if (skip(rel)) continue;
      if (e.isDirectory()) {
        out.set(`${rel}/`, "");
        walk(p);
      } else out.set(rel, readFileSync(p, "latin1"));
    }
  };
  walk(root);
  return out;
}

test("files changed between the early packing and the final turn are in the archive as they are at the final turn, and nothing else moved", async () => {
  const home = join(dir, "home");
  const actors = join(home, "data", "actors");
  const ab = join(actors, "ab");
  mkdirSync(ab, { recursive: true });
  mkdirSync(join(actors, "cd"), { recursive: true });
  // 300 actor files in one shard: three groups of about 128 (GROUP_FILES), so a change touches one.
  for (let i = 0; i < 300; i++) writeFileSync(join(ab, `a${i}.json`), `{"n":${i},"pad":"${"x".repeat(i % 50)}"}`);
  for (let i = 0; i < 20; i++) writeFileSync(join(actors, "cd", `c${i}.json`), `{"c":${i}}`);
  mkdirSync(join(ab, "a7.kv"));
  writeFileSync(join(ab, "a7.kv", "default.json"), '{"kv":"old"}');
  const wal = new Journal(join(ab, "a9.json.wal"));
  wal.append("step 1\n");
  writeFileSync(join(home, "config.yaml"), "logs:\n  level: info\n");

  // The first take is the first catch-up round: after the first pass (and its early packs), before the final turn.
  const take = ChangeWatch.prototype.take;
  let changed = false;
  ChangeWatch.prototype.take = function (this: ChangeWatch) {
    if (!changed) {
      changed = true;
      writeFileAtomicSync(join(ab, "a1.json"), '{"n":"a1-new"}');
      rmSync(join(ab, "a2.json"));
      noteChanged(join(ab, "a2.json"));
      writeFileAtomicSync(join(ab, "a300.json"), '{"n":"a300-new"}');
      mkdirSync(join(actors, "cd", "c5.kv"));
      writeFileAtomicSync(join(actors, "cd", "c5.kv", "default.json"), '{"kv":"new"}');
      writeFileAtomicSync(join(ab, "a7.kv", "default.json"), '{"kv":"new"}');
      wal.append("step 2\n");
      mkdirSync(join(actors, "ef"));
      writeFileAtomicSync(join(actors, "ef", "e1.json"), '{"e":1}');
      mkdirSync(join(home, "notes"));
      writeFileSync(join(home, "notes", "n.md"), "new folder\n");
    }
    return take.call(this);
  };
  let account: Record<string, any> = {};
  try {
    const result = await createBackup(homePaths(home), { output: join(dir, "early.tar.gz"), account: (a) => (account = a) });
    assert.ok(changed, "the files changed mid-backup");
    const out = join(dir, "early-out");
    mkdirSync(out);
    await extract({ file: result.path, cwd: out });
    const want = tree(home, (rel) => rel === "backups");
    const got = tree(out, (rel) => rel === "agent-backup.json");
    assert.equal([...got.keys()].sort(), [...want.keys()].sort(), "the same files and folders");
    for (const [p, v] of want) assert.is(got.get(p), v, p);
    assert.is(got.get(join("data", "actors", "ab", "a1.json")), '{"n":"a1-new"}');
    assert.not.ok(got.has(join("data", "actors", "ab", "a2.json")), "a removed file is not in the archive");
    assert.is(got.get(join("data", "actors", "ab", "a9.json.wal")), "step 1\nstep 2\n");
    const early = account.pack.early as { folders: number; partly: number; whole: number };
    assert.ok(early.folders >= 2, `folders taken from their early pack: ${JSON.stringify(early)}`);
    // The big shard and a7.kv: some of their groups packed again, not the whole folder.
    assert.ok(early.partly >= 2, `groups of the changed shard packed again: ${JSON.stringify(early)}`);
  } finally {
    ChangeWatch.prototype.take = take;
    wal.close();
  }
});

test("an archive of many folders holds each entry once, each folder before its files and subfolders", async () => {
  const home = join(dir, "order");
  for (let d = 0; d < 6; d++) {
    mkdirSync(join(home, "data", "actors", `0${d}`, "x.kv"), { recursive: true });
    for (let i = 0; i < 200; i++) writeFileSync(join(home, "data", "actors", `0${d}`, `f${i}.json`), `${d}/${i}`);
    writeFileSync(join(home, "data", "actors", `0${d}`, "x.kv", "default.json"), "{}");
  }
  const result = await createBackup(homePaths(home), { output: join(dir, "order.tar.gz") });
  const { list } = await import("tar");
  const entries: string[] = [];
  await list({ file: result.path, onReadEntry: (e) => entries.push(e.path.replace(/\/$/, "")) });
  assert.is(new Set(entries).size, entries.length, "no entry twice");
  for (const [i, e] of entries.entries()) {
    const parent = e.split("/").slice(0, -1).join("/");
    if (parent) assert.ok(entries.indexOf(parent) < i, `${e} after its folder`);
  }
  assert.is(entries.filter((e) => e.startsWith("data/") && e.endsWith(".json")).length, 6 * 201);
  assert.ok(existsSync(result.path) && statSync(result.path).mode % 0o1000 === 0o600, "the archive is 0600");
});

test("a home being written to (many changed paths) is linked as before, not packed early, and still packed whole and exact", async () => {
  const home = join(dir, "busy");
  const ab = join(home, "data", "actors", "ab");
  mkdirSync(ab, { recursive: true });
  for (let i = 0; i < 200; i++) writeFileSync(join(ab, `a${i}.json`), `{"n":${i}}`);
  const staging = join(dir, "busy-staging");
  const watch = watchChanges();
  const ports: MessagePort[] = [];
  const port = () => {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1);
    return port2;
  };
  const early: EarlyPacking = { port, level: 3, packed: new Map(), touched: new Map(), dirsChanged: new Set() };
  const marks: StageMarks = {};
  try {
    // Writes to every shard: more changed paths than EARLY_PACK_MAX_CHANGES before the first folder.
    for (let i = 0; i < 300; i++) noteChanged(join(home, "data", "actors", "cd", `x${i}.json`));
    await stageHome({ home, staging, skip: () => false, watch, early, marks });
    assert.is(marks.busy, true);
    assert.is(early.packed.size, 0, "no folder packed early");
    for (let i = 0; i < 200; i++)
      assert.is(statSync(join(staging, "data", "actors", "ab", `a${i}.json`)).ino, statSync(join(ab, `a${i}.json`)).ino, `a${i} linked`);
  } finally {
    watch.close();
    for (const p of ports) p.close();
    rmSync(staging, { recursive: true, force: true });
  }
  // Through a whole backup: exact.
  const result = await createBackup(homePaths(home), { output: join(dir, "busy.tar.gz") });
  assert.is(result.files, 200);
});

test("backup.compression_level takes a whole number from 1 to 9, with an error naming the key otherwise", () => {
  for (const ok of ["1", "3", "9"]) checkValue("backup.compression_level", parseValueFor("backup.compression_level", ok), "config set");
  for (const bad of ["0", "10", "2.5", "-1"]) {
    let message = "";
    try {
      checkValue("backup.compression_level", parseValueFor("backup.compression_level", bad), "config set");
    } catch (error) {
      message = (error as Error).message;
    }
    assert.match(message, /backup\.compression_level must be an integer between 1 and 9/, `${bad}: ${message}`);
  }
  assert.throws(() => parseValueFor("backup.compression_level", "fast"), /number/);
});

test("a smaller level writes a larger archive that restores the same files (levels 1 and 9)", async () => {
  const home = join(dir, "levels");
  mkdirSync(join(home, "data", "actors", "ab"), { recursive: true });
  for (let i = 0; i < 400; i++)
    writeFileSync(join(home, "data", "actors", "ab", `a${i}.json`), JSON.stringify({ i, text: "lorem ipsum dolor ".repeat(i % 20) }));
  const fast = await createBackup(homePaths(home), { output: join(dir, "l1.tar.gz"), compressionLevel: 1 });
  const small = await createBackup(homePaths(home), { output: join(dir, "l9.tar.gz"), compressionLevel: 9 });
  assert.ok(fast.bytes > small.bytes, `level 1 ${fast.bytes} bytes, level 9 ${small.bytes}`);
  for (const [name, file] of [
    ["l1", fast.path],
    ["l9", small.path],
  ]) {
    const out = join(dir, `${name}-out`);
    mkdirSync(out);
    await extract({ file: file!, cwd: out });
    const a = tree(join(home, "data"));
    const b = tree(join(out, "data"));
    assert.equal([...b.keys()].sort(), [...a.keys()].sort());
    for (const [p, v] of a) assert.is(b.get(p), v, `${name}: ${p}`);
  }
});

test.run();

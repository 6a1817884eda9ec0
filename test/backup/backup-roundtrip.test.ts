// The backup's own packer (daemon/backup/pack-thread.ts, a worker thread) and the import's own
// writer for a fresh staging (import.ts extractFresh): a home with long paths (pax headers), an
// empty file, a file larger than the packer's 1 MiB batch, nested folders and modes goes through
// `createBackup` and back through `stageImport` + apply unchanged; node-tar reads the archive
// as the same entries; the staged tree is gone after the backup (removed by the packing thread);
// and an archive that holds one path twice restores the later one, as tar does.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { extract, list } from "tar";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createBackup } from "../../daemon/backup/backup.js";
import { stageImport } from "../../daemon/backup/import.js";
import { homePaths } from "../../shared/paths.js";
import { writeArchive } from "../fixtures/archives.mjs";
import { testUnless } from "../helpers/skip.js";
import { waitFor } from "../helpers/wait.js";

const dir = mkdtempSync(join(tmpdir(), "bkround-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** Every file and folder under `root` (relative), with its mode and, for files, its contents. */
function tree(root: string): Map<string, { mode: number; data?: Buffer }> {
  const out = new Map<string, { mode: number; data?: Buffer }>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const rel = relative(root, p);
      if (e.isDirectory()) {
        out.set(`${rel}/`, { mode: statSync(p).mode & 0o777 });
        walk(p);
      } else out.set(rel, { mode: statSync(p).mode & 0o777, data: readFileSync(p) });
    }
  };
  walk(root);
  return out;
}

test("a home goes through backup and import unchanged: long paths, an empty file, a file over 1 MiB, folders and modes", async () => {
  const home = join(dir, "home");
  const deep = join(home, "skills", "a".repeat(60), "b".repeat(60), "c".repeat(40));
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, `${"long-name-".repeat(12)}.md`), "a path well over 100 bytes\n");
  writeFileSync(join(home, "empty.txt"), "");
  const big = randomBytes(1536 * 1024 + 123);
  mkdirSync(join(home, "data", "actors", "ab"), { recursive: true });
  writeFileSync(join(home, "data", "actors", "ab", "x1.json"), '{"n":1}');
  writeFileSync(join(home, "data", "big.bin"), big);
  writeFileSync(join(home, ".env"), "OPENAI_API_KEY=\n", { mode: 0o600 });
  mkdirSync(join(home, "logs"), { mode: 0o700 });
  writeFileSync(join(home, "logs", "daemon.log"), "line\n", { mode: 0o600 });

  const result = await createBackup(homePaths(home), { output: join(dir, "out.tar.gz") });
  assert.is(result.files, 6);
  // The staged tree is removed by the packing thread once the archive is written.
  await waitFor("the staging folder removed", () => readdirSync(join(home, "backups")).length === 0);

  // node-tar reads the archive as the home's entries, the manifest added (a folder's path split
  // into the header's prefix is read without its slash, with node-tar's own packer too).
  const entries: string[] = [];
  const bare = (p: string) => p.replace(/\/$/, "");
  await list({ file: result.path, onReadEntry: (e) => entries.push(bare(e.path)) });
  const expected = [...tree(home).keys()].filter((p) => !p.startsWith("backups")).map(bare);
  assert.equal(entries.filter((p) => p !== "agent-backup.json").sort(), expected.sort());

  const target = join(dir, "restored");
  const staged = await stageImport(result.path, target);
  await staged.apply({ keepCron: true, keepNetwork: true });
  const before = tree(home);
  const after = tree(target);
  for (const [p, v] of before) {
    if (p.startsWith("backups")) continue;
    const got = after.get(p);
    assert.ok(got, `${p} restored`);
    assert.is(got!.mode, v.mode, `${p}: mode`);
    if (v.data) assert.ok(got!.data!.equals(v.data), `${p}: contents`);
  }
  // Kept to the second (a tar header's resolution).
  const drift = Math.abs(statSync(join(target, "data", "big.bin")).mtimeMs - statSync(join(home, "data", "big.bin")).mtimeMs);
  assert.ok(drift <= 1000, `the file's time is kept (off by ${drift} ms)`);
});

test("a home of more than 2,000 entries, packed folder by folder by several threads, comes back whole, each folder before its files", async () => {
  const home = join(dir, "many");
  const names: string[] = [];
  for (let d = 0; d < 5; d++) {
    mkdirSync(join(home, "data", `f${d}`), { recursive: true });
    for (let i = 0; i < 500; i++) {
      const rel = join("data", `f${d}`, `n${i}.txt`);
      writeFileSync(join(home, rel), `${rel}\n`.repeat(i % 7));
      names.push(rel);
    }
  }
  const result = await createBackup(homePaths(home), { output: join(dir, "many.tar.gz") });
  assert.is(result.files, 2500);
  const entries: string[] = [];
  await list({ file: result.path, onReadEntry: (e) => entries.push(e.path.replace(/\/$/, "")) });
  // Every entry once; each folder before its files (the folders' members appended in order).
  assert.is(new Set(entries).size, entries.length, "no entry twice");
  for (const n of names) assert.ok(entries.indexOf(n) > entries.indexOf(join("data", n.split("/")[1]!)), `${n} after its folder`);
  const out = join(dir, "many-out");
  mkdirSync(out);
  await extract({ file: result.path, cwd: out });
  for (const n of names) assert.is(readFileSync(join(out, n), "utf8"), readFileSync(join(home, n), "utf8"), n);
});

test("an archive with one path twice restores the later copy, as tar does", async () => {
  const archive = join(dir, "twice.tar.gz");
  await writeArchive(archive, [
    { path: "notes/", type: "Directory" },
    { path: "notes/a.md", content: "first\n" },
    { path: "notes/a.md", content: "second\n" },
  ]);
  const target = join(dir, "twice");
  const staged = await stageImport(archive, target);
  await staged.apply({});
  assert.is(readFileSync(join(target, "notes", "a.md"), "utf8"), "second\n");
  assert.not.ok(existsSync(join(target, "agent-backup.json")), "the manifest is not restored");
});

const linux = existsSync("/proc/thread-self/stat") ? null : "no /proc/thread-self (not Linux)";
testUnless(linux)("a backup's threads lower their own priority (nice 10), not the daemon's: the event loop goes first", async () => {
  // The same call the link and packing threads make first, in a thread of this process.
  const script = fileURLToPath(new URL("../../dist/daemon/thread-script.js", import.meta.url));
  const nice = () => Number(readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1]!.split(" ")[16]);
  const before = nice();
  const code = `import { lowerThreadPriority } from ${JSON.stringify(pathToFileURL(script).href)};
import { readFileSync } from "node:fs";
import { parentPort } from "node:worker_threads";
lowerThreadPriority();
parentPort.postMessage(Number(readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1].split(" ")[16]));`;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`));
  const inThread = await new Promise<number>((resolve, reject) => worker.once("message", resolve).once("error", reject));
  await worker.terminate();
  assert.is(inThread, Math.min(19, before + 10), "the thread's nice value");
  assert.is(nice(), before, "the calling thread's is unchanged");
});

test.run();

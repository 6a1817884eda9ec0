// A failed `agent import` leaves the target as it was: a full disk (a 6 MB tmpfs), a kill -9
// midway, a symbolic link in the way; the error is a product error without a stack, what a
// killed import left is removed by the next import or daemon start, and a retry works. Owners
// and setuid/setgid bits from the archive are never restored.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { bombEntries, writeArchive } from "../fixtures/archives.mjs";
import { CLI, runCli, stopDaemon, tempHome } from "../helpers/cli.js";
import { needsRoot, skip, testUnless } from "../helpers/skip.js";

const MiB = 1024 ** 2;
const dir = mkdtempSync(join(tmpdir(), "impfail-"));
const big = join(dir, "big.tar.gz");
const small = join(dir, "small.tar.gz");
const bomb = join(dir, "bomb.tar.gz");
const leftovers = (home: string) => readdirSync(dirname(home)).filter((n) => n.startsWith(`.${basename(home)}.import-`));

test.before(async () => {
  await writeArchive(big, [
    { path: "notes/", type: "Directory" },
    { path: "notes/a.bin", random: 4 * MiB },
    { path: "notes/b.bin", random: 4 * MiB },
  ]);
  await writeArchive(small, [
    { path: "notes/", type: "Directory" },
    { path: "notes/hello.md", content: "hello\n" },
    { path: "skills/", type: "Directory" },
    { path: "skills/mine/", type: "Directory" },
    { path: "skills/mine/SKILL.md", content: "# mine\n" },
  ]);
  await writeArchive(bomb, bombEntries({ inflated: 2000 * MiB, random: 2 * MiB, files: 4 }));
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

testUnless(needsRoot("mounting a tmpfs"))("out of disk (a 6 MB tmpfs): a clear error, no stack, the target unchanged, and a retry works", async () => {
  const mnt = mkdtempSync(join(tmpdir(), "impfs-"));
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=6m", "tmpfs", mnt]);
  if (mount.status !== 0) {
    skip(`mount not permitted here (${String(mount.stderr).trim()})`);
    rmSync(mnt, { recursive: true, force: true });
    return;
  }
  try {
    const home = join(mnt, "home");
    mkdirSync(home);
    const r = await runCli(["import", big, "-y"], { home });
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /^agent: the import failed: the disk is full; .*home is unchanged\n$/);
    assert.equal(readdirSync(home), []);
    assert.equal(leftovers(home), []);
    const debug = await runCli(["import", big, "-y", "--debug"], { home });
    assert.is(debug.code, 1);
    assert.match(debug.stderr, /ENOSPC|\n\s+at /, "--debug shows the cause");
    // Into a home that has data (--force): the same failure leaves it as it was.
    writeFileSync(join(home, "keep.md"), "mine\n");
    const forced = await runCli(["import", big, "-y", "--force"], { home });
    assert.is(forced.code, 1, forced.stderr);
    assert.match(forced.stderr, /the disk is full/);
    assert.equal(readdirSync(home), ["keep.md"]);
    assert.equal(leftovers(home), []);
    rmSync(join(home, "keep.md"));
    const retry = await runCli(["import", small, "-y"], { home });
    assert.is(retry.code, 0, retry.stderr);
    assert.is(readFileSync(join(home, "notes", "hello.md"), "utf8"), "hello\n");
  } finally {
    spawnSync("umount", [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
});

/** Start `agent import bomb` and kill -9 it once its staging folder holds data. */
async function killMidway(home: string): Promise<void> {
  const child = spawn(process.execPath, [CLI, "import", bomb, "-y"], { env: { ...process.env, AGENT_HOME: home }, stdio: "ignore" });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const staging = leftovers(home)[0];
    const data = staging ? join(dirname(home), staging, "data") : null;
    if (data && existsSync(data) && readdirSync(data).length > 1) break;
    if (Date.now() > deadline) throw new Error("the import never got going");
    await new Promise((r) => setTimeout(r, 20));
  }
  // The process doing the work (its pid names the staging folder) dies mid-write; the CLI then ends too.
  const worker = Number(/\.import-(\d+)-/.exec(leftovers(home)[0]!)![1]);
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(worker, "SIGKILL");
  await exited;
}

test("the CLI killed with -9 mid-import: the import process drops its staging folder and the home stays empty", async () => {
  const t = tempHome("impcli");
  try {
    const child = spawn(process.execPath, [CLI, "import", bomb, "-y"], { env: { ...process.env, AGENT_HOME: t.home }, stdio: "ignore" });
    const deadline = Date.now() + 30_000;
    while (leftovers(t.home).length === 0) {
      if (Date.now() > deadline) throw new Error("the import never got going");
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill("SIGKILL");
    const gone = Date.now() + 30_000;
    while (leftovers(t.home).length > 0) {
      if (Date.now() > gone) throw new Error(`the staging folder stayed: ${leftovers(t.home)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(readdirSync(t.home), []);
  } finally {
    t.cleanup();
  }
});

test("kill -9 midway: the target is unchanged; the next import removes the leftover and works", async () => {
  const t = tempHome("impkill");
  try {
    await killMidway(t.home);
    assert.equal(readdirSync(t.home), []);
    assert.is(leftovers(t.home).length, 1);
    const retry = await runCli(["import", small, "-y"], { home: t.home });
    assert.is(retry.code, 0, retry.stderr);
    assert.equal(leftovers(t.home), []);
    assert.equal(readdirSync(t.home).sort(), ["data", "notes", "skills"]);
  } finally {
    t.cleanup();
  }
});

test("kill -9 midway: a daemon start removes the leftover", async () => {
  const t = tempHome("impkill");
  try {
    await killMidway(t.home);
    assert.is(leftovers(t.home).length, 1);
    const start = await runCli(["daemon", "start"], { home: t.home });
    assert.is(start.code, 0, start.stderr);
    assert.equal(leftovers(t.home), []);
    await stopDaemon(t.home);
  } finally {
    t.cleanup();
  }
});

test("a home a killed --force import moved aside (between its two renames) is put back by the next import", async () => {
  const t = tempHome("impold");
  try {
    const aside = join(dirname(t.home), `.${basename(t.home)}.import-old-999999999-1`);
    rmSync(t.home, { recursive: true });
    mkdirSync(aside);
    writeFileSync(join(aside, "mine.md"), "mine\n");
    const r = await runCli(["import", small, "-y"], { home: t.home });
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /is not empty \(1 entries\)/);
    assert.is(readFileSync(join(t.home, "mine.md"), "utf8"), "mine\n");
    assert.not.ok(existsSync(aside));
  } finally {
    t.cleanup();
  }
});

test("--force over a home whose skills/ is a symbolic link: the archive's folder replaces the link, never written through, and import says so", async () => {
  const t = tempHome("impsym");
  const elsewhere = mkdtempSync(join(tmpdir(), "impsym-target-"));
  try {
    symlinkSync(elsewhere, join(t.home, "skills"));
    writeFileSync(join(t.home, "config.yaml"), "# mine\n");
    const r = await runCli(["import", small, "-y", "--force"], { home: t.home });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`the link skills -> ${elsewhere} was replaced by the archive's folder`));
    assert.equal(readdirSync(t.home).sort(), ["config.yaml", "data", "notes", "skills"]);
    assert.is(readFileSync(join(t.home, "skills", "mine", "SKILL.md"), "utf8"), "# mine\n");
    assert.equal(readdirSync(elsewhere), [], "nothing written outside the home");
    assert.equal(leftovers(t.home), []);
  } finally {
    t.cleanup();
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test("--force keeps the home's other files and replaces those the archive has", async () => {
  const t = tempHome("impforce");
  try {
    mkdirSync(join(t.home, "notes"));
    writeFileSync(join(t.home, "notes", "hello.md"), "old\n");
    writeFileSync(join(t.home, "mine.md"), "mine\n");
    const r = await runCli(["import", small, "-y", "--force"], { home: t.home });
    assert.is(r.code, 0, r.stderr);
    assert.is(readFileSync(join(t.home, "notes", "hello.md"), "utf8"), "hello\n");
    assert.is(readFileSync(join(t.home, "mine.md"), "utf8"), "mine\n");
    assert.equal(leftovers(t.home), []);
  } finally {
    t.cleanup();
  }
});

testUnless(needsRoot("restoring an archive's owners"))("owners and setuid/setgid bits of the archive are never restored", async () => {
  const archive = join(dir, "suid.tar.gz");
  await writeArchive(archive, [
    { path: "bin/", type: "Directory", mode: 0o2775, uid: 12345, gid: 12345 },
    { path: "bin/tool", content: "#!/bin/sh\necho hi\n", mode: 0o6755, uid: 12345, gid: 12345 },
    { path: "notes.md", content: "x\n", mode: 0o1644, uid: 12345, gid: 54321 },
  ]);
  const t = tempHome("impown");
  try {
    const r = await runCli(["import", archive, "-y"], { home: t.home });
    assert.is(r.code, 0, r.stderr);
    for (const p of ["bin", "bin/tool", "notes.md"]) {
      const st = statSync(join(t.home, p));
      assert.is(st.uid, process.getuid!(), `${p} owner`);
      assert.is(st.gid, process.getgid!(), `${p} group`);
      assert.is(st.mode & 0o7000, 0, `${p} mode ${st.mode.toString(8)}`);
    }
    assert.is(statSync(join(t.home, "bin/tool")).mode & 0o777, 0o755);
  } finally {
    t.cleanup();
  }
});

test.run();

// Review (rev4) of the lock kit (daemon/store/file-lock.ts) in two exact interleavings of real
// processes (test/fixtures/lock-race-driver.ts stops each at a chosen point): at most one
// process may hold a lock.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { waitFor } from "../helpers/wait.js";

const driver = fileURLToPath(new URL("../fixtures/lock-race-driver.ts", import.meta.url));

interface Run {
  child: ChildProcess;
  result: Promise<{ holds: boolean | string }>;
}

function run(mode: string, lock: string, dir: string): Run {
  const child = spawn(process.execPath, ["--import", "tsx", driver, mode, lock, dir], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d));
  child.stderr!.on("data", (d: Buffer) => (err += d));
  const result = new Promise<{ holds: boolean | string }>((resolve) =>
    child.on("close", () => {
      try {
        resolve(JSON.parse(out));
      } catch {
        resolve({ holds: `no answer: ${out} ${err}` });
      }
    }),
  );
  return { child, result };
}

const at = (dir: string, name: string) => waitFor(name, () => existsSync(join(dir, name)), 20_000);
const go = (dir: string, name: string) => writeFileSync(join(dir, name), "");
/** A pid no process has now (a child that has exited). */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid;

test("a stale takeover guard removed by two processes at once: one lock holder", async () => {
  // A process killed -9 inside the guard (removeStaleLock) left `<lock>.takeover`; the lock it
  // was judging is stale too. Process E judges the guard stale and checks its inode; before E
  // unlinks it, process L removes the stale guard, takes a guard of its own and, inside it,
  // judges the lock stale. E's unlink then removes L's live guard (the inode check came before),
  // E takes the guard, removes the stale lock and takes the lock. L resumes: its own inode
  // check of the lock also came before, and its unlink removes E's live lock.
  const dir = mkdtempSync(join(tmpdir(), "flock-review-"));
  const lock = join(dir, "daemon.lock");
  writeFileSync(lock, `${deadPid()}\n`);
  writeFileSync(`${lock}.takeover`, `${deadPid()}\n`);
  const runs: Run[] = [];
  try {
    runs.push(run("guard-early", lock, dir));
    await at(dir, "guard-early-paused");
    runs.push(run("guard-late", lock, dir));
    // Stopped inside the guard (or, with a kit that does not go on after removing a stale guard, done).
    await waitFor("guard-late stopped or done", () => existsSync(join(dir, "guard-late-paused")) || existsSync(join(dir, "guard-late-done")), 20_000);
    go(dir, "guard-early-go");
    await at(dir, "guard-early-done");
    go(dir, "guard-late-go");
    await at(dir, "guard-late-done");
    go(dir, "end");
    const [early, late] = await Promise.all(runs.map((r) => r.result));
    assert.ok(!(early!.holds === true && late!.holds === true), `both processes hold the lock: ${JSON.stringify([early, late])}`);
  } finally {
    go(dir, "end");
    for (const r of runs) r.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

test("without hard links, two daemons starting at the same instant: one runs", async () => {
  // link(2) fails (EPERM: vfat, exFAT, some network/FUSE mounts): tryCreateLock falls back to
  // O_EXCL and writes the owner just after, so the lock is empty for a moment; the daemon lock
  // counts an empty lock as a crash's at once (emptyGraceMs 0) and removes it.
  const dir = mkdtempSync(join(tmpdir(), "flock-review-"));
  const lock = join(dir, "daemon.lock");
  const runs: Run[] = [];
  try {
    runs.push(run("nolink-early", lock, dir));
    await at(dir, "nolink-early-paused");
    runs.push(run("nolink", lock, dir));
    await at(dir, "nolink-done");
    go(dir, "nolink-early-go");
    await at(dir, "nolink-early-done");
    go(dir, "end");
    const [first, second] = await Promise.all(runs.map((r) => r.result));
    assert.ok(!(first!.holds === true && second!.holds === true), `both daemons hold the daemon lock: ${JSON.stringify([first, second])}`);
  } finally {
    go(dir, "end");
    for (const r of runs) r.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();

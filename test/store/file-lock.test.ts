// The one cross-process lock (daemon/store/file-lock.ts): callers of one process take turns; a
// lock whose owner died is taken over; a live owner is waited for, then a clear timeout error.
// (Two real processes racing writes under it: test/proxy/credential-writes.test.ts.)
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { removeStaleLock, withFileLock } from "../../daemon/store/file-lock.js";
import { processStartTime } from "../../shared/process.js";
import { testUnless } from "../helpers/skip.js";
import { TS_LOADER } from "../helpers/ts-loader.js";

const onLinux = testUnless(process.platform === "linux" ? null : "needs /proc (Linux)");
let dir: string;

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), "flock-"));
});

test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

test("callers of one process run one at a time, in order; the lock file is gone after", async () => {
  const file = join(dir, "counter");
  writeFileSync(file, "0");
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      withFileLock(file, async () => {
        const n = Number(readFileSync(file, "utf8"));
        await new Promise((r) => setImmediate(r));
        writeFileSync(file, String(n + 1));
        order.push(i);
      }),
    ),
  );
  assert.is(readFileSync(file, "utf8"), "20");
  assert.equal(
    order,
    [...order].sort((a, b) => a - b),
  );
  assert.not.ok(existsSync(`${file}.lock`));
});

test("a waiter that finds the lock free never removes a lock another process creates meanwhile", async () => {
  // The waiter's takeover check (removeStaleLock) used to unlink the lock file when it found
  // none: a lock another process created between that check and the unlink was removed, and
  // two processes held the lock (a lost sign-out in auth.json); and a lock read between its
  // creation and its owner line counted as a crash's for the daemon lock. Here a second process takes and
  // releases the lock as fast as it can while this one runs the takeover check in a loop.
  const lock = join(dir, "race.lock");
  const holder = fileURLToPath(new URL("../fixtures/lock-holder.ts", import.meta.url));
  const child = spawn(process.execPath, [...TS_LOADER, holder, lock, "1500"], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d));
  child.stderr.on("data", (d: Buffer) => (err += d));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  // Wait until the holder runs (the lock appears), then check for 1 s.
  const start = Date.now();
  while (!existsSync(lock) && Date.now() - start < 20_000) await new Promise((r) => setTimeout(r, 5));
  const end = Date.now() + 1_000;
  let checks = 0;
  while (Date.now() < end) {
    // Half the checks with the daemon lock's rule: a lock without an owner line is a crash's.
    removeStaleLock(lock, checks % 2 ? { emptyGraceMs: 0 } : {});
    checks++;
  }
  assert.is(await closed, 0, err);
  const { taken, stolen } = JSON.parse(out) as { taken: number; stolen: number };
  assert.ok(taken > 100 && checks > 100, `the race ran (${taken} takes, ${checks} checks)`);
  assert.is(stolen, 0, `a live lock was removed ${stolen} times in ${taken} takes`);
});

test("a failing caller releases the lock", async () => {
  const file = join(dir, "fails");
  await withFileLock(file, async () => {
    throw new Error("boom");
  }).catch(() => undefined);
  assert.not.ok(existsSync(`${file}.lock`));
  assert.is(await withFileLock(file, async () => 7), 7);
});

onLinux("a lock left by a dead process is taken over; one of a live process is waited for, then refused clearly", async () => {
  const file = join(dir, "held");
  // Dead: a process that has exited.
  const gone = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((r) => gone.once("exit", r));
  writeFileSync(`${file}.lock`, `${gone.pid}\n1\n`);
  assert.is(await withFileLock(file, async () => "taken over"), "taken over");
  // Live: a sleeping process, its real start time recorded.
  const live = spawn("sleep", ["30"], { stdio: "ignore" });
  try {
    await new Promise((r) => live.once("spawn", r));
    writeFileSync(`${file}.lock`, `${live.pid}\n${processStartTime(live.pid!)}\n`);
    assert.not.ok(removeStaleLock(`${file}.lock`), "a live owner's lock stays");
    const error = await withFileLock(file, async () => "ran", { timeoutMs: 150, what: "auth.json" }).catch((e: Error & { code?: string }) => e);
    assert.instance(error, Error);
    assert.is((error as { code?: string }).code, "storage.lock_timeout");
    assert.match((error as Error).message, new RegExp(`auth\\.json stayed locked by another process \\(pid ${live.pid}\\)`));
    assert.ok(existsSync(`${file}.lock`), "the holder's lock is left alone");
  } finally {
    live.kill();
  }
  // The owner gone: taken over.
  await new Promise((r) => live.once("exit", r));
  assert.is(await withFileLock(file, async () => "after"), "after");
});

test.run();

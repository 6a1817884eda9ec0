// The test harness (scripts/run-tests.mjs) says what the tests proved: a test that reports itself
// skipped (test/helpers/skip.ts) is counted as skipped, not passed, and its reason is listed; a
// file past its time limit is killed with what it started and counted as failed; the closing
// line is `N passed, M skipped, K failed`. Driven on the fixture files in test/fixtures/runner*.
// Its TypeScript loader has its own test (test-loader.test.ts).
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT, tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

function runTests(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "scripts", "run-tests.mjs"), ...args], {
      cwd: ROOT,
      env: { ...process.env, TEST_CONCURRENCY: "2", TEST_BUDGET_S: "300", TEST_FILE_TIMEOUT_S: "120", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

const lastLine = (out: string) => out.trimEnd().split("\n").at(-1);

test("skipped tests are counted as skipped with their reasons, and the closing line counts all three", async () => {
  const r = await runTests({ TEST_DIR: "test/fixtures/runner", TEST_BUDGET_S: "0.001" });
  assert.is(r.code, 1, r.out);
  assert.is(lastLine(r.out), "5 passed, 3 skipped, 1 failed", r.out);
  assert.match(r.out, /✔ test\/fixtures\/runner\/skips\.test\.ts \(2 passed, 3 skipped, [\d.]+ s\)/);
  assert.match(r.out, /✔ test\/fixtures\/runner\/passes\.test\.ts \(2 passed, [\d.]+ s\)/);
  assert.match(r.out, /✘ test\/fixtures\/runner\/fails\.test\.ts \(1 passed, 1 failed, [\d.]+ s\)/);
  assert.match(r.out, /one is not two/);
  // Under the suite's loader (scripts/test-loader.mjs) uvu's stack names the .ts file and line.
  assert.match(r.out, /at Object\.handler \(\S*test\/fixtures\/runner\/fails\.test\.ts:6:\d+\)/);
  const listed = r.out.slice(r.out.indexOf("\nskipped:\n"));
  assert.match(listed, /test\/fixtures\/runner\/skips\.test\.ts: needs a frobnicator: the frobnicator is not installed/);
  assert.match(listed, /test\/fixtures\/runner\/skips\.test\.ts: no mount here \(EPERM\)/);
  assert.match(listed, /test\/fixtures\/runner\/skips\.test\.ts: 1 test\.skip without a reason/);
  assert.match(r.out, /failed files:\n {2}test\/fixtures\/runner\/fails\.test\.ts\n/);
  // Per-file durations, slowest first, and the run measured against the budget.
  const slowest = /slowest 3 files:\n((?: +[\d.]+ s {2}\S+\n){3})/.exec(r.out);
  assert.ok(slowest, r.out);
  const secs = slowest[1]!
    .trim()
    .split("\n")
    .map((l) => Number.parseFloat(l));
  assert.equal(
    [...secs].sort((a, b) => b - a),
    secs,
  );
  assert.match(r.out, /3 test files in [\d.]+ s with 2 at a time\nOVER the 0\.001 s budget by [\d.]+ s/);
});

test("a filter narrows the run, and a run without failures exits 0", async () => {
  const r = await runTests({ TEST_DIR: "test/fixtures/runner" }, ["runner/passes", "runner/skips"]);
  assert.is(r.code, 0, r.out);
  assert.is(lastLine(r.out), "4 passed, 3 skipped, 0 failed", r.out);
  assert.not.match(r.out, /fails\.test\.ts/);
});

test("a file past TEST_FILE_TIMEOUT_S is killed with the processes it started, and counted failed", async () => {
  const { home, cleanup } = tempHome("rt");
  const pidFile = join(home, "child.pid");
  try {
    const r = await runTests({ TEST_DIR: "test/fixtures/runner-hang", TEST_FILE_TIMEOUT_S: "2", HANG_PID_FILE: pidFile });
    assert.is(r.code, 1, r.out);
    assert.is(lastLine(r.out), "0 passed, 0 skipped, 1 failed", r.out);
    assert.match(r.out, /hangs\.test\.ts timed out after 2 s/);
    assert.match(r.out, /within the 300 s budget/);
    assert.ok(existsSync(pidFile), r.out);
    const pid = Number(readFileSync(pidFile, "utf8"));
    // Gone, or a zombie waiting for an init that may not reap here.
    await waitFor(`the hung file's child ${pid} to be gone`, () => {
      try {
        return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return true;
      }
    });
  } finally {
    cleanup();
  }
});

test("by default more files run at once while the cores sit idle, up to twice the cores; a fixed TEST_CONCURRENCY holds", async () => {
  const { home, cleanup } = tempHome("rt");
  const overlap = (log: string) => {
    const spans = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" ").map(Number) as [number, number]);
    return Math.max(...spans.map(([s]) => spans.filter(([a, b]) => a <= s && s < b).length));
  };
  try {
    const auto = join(home, "auto.log");
    // TEST_IDLE_SHARE 0: the cores count as idle whatever else this machine runs, so the test
    // sees the mechanism, not the machine's load.
    const r = await runTests({ TEST_DIR: "test/fixtures/runner-idle", TEST_CONCURRENCY: "", TEST_IDLE_SHARE: "0", RUNNER_IDLE_LOG: auto });
    assert.is(r.code, 0, r.out);
    assert.is(lastLine(r.out), "4 passed, 0 skipped, 0 failed", r.out);
    const cores = availableParallelism();
    assert.match(r.out, new RegExp(`with 2 to ${Math.max(2, cores * 2)} \\(at most \\d+\\) at a time`));
    assert.ok(overlap(auto) >= 3, `${overlap(auto)} files overlapped\n${r.out}`);
    const fixed = join(home, "fixed.log");
    const f = await runTests({ TEST_DIR: "test/fixtures/runner-idle", TEST_CONCURRENCY: "2", TEST_IDLE_SHARE: "0", RUNNER_IDLE_LOG: fixed });
    assert.is(f.code, 0, f.out);
    assert.is(overlap(fixed), 2, f.out);
    assert.match(f.out, /4 test files in [\d.]+ s with 2 at a time/);
  } finally {
    cleanup();
  }
});

test.run();

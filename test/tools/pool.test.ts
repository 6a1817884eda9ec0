import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { POOL_DEFAULTS, PoolError, ToolPool, defaultWorkerPath } from "../../daemon/pool/pool.js";
import type { PoolTask } from "../../daemon/pool/messages.js";
import { tempTree } from "./helpers.js";

test("the pool is sized for two cores and starts no thread before the first task", async () => {
  const pool = new ToolPool();
  assert.is(pool.options.minThreads, 1);
  assert.is(pool.options.maxThreads, 2);
  assert.ok(pool.options.idleTimeoutMs > 0);
  assert.is(pool.started, false);
  assert.ok(Object.isFrozen(POOL_DEFAULTS));
  await pool.close();
});

test("the pool runs the compiled worker from dist", async () => {
  assert.ok(defaultWorkerPath().endsWith(join("dist", "daemon", "pool", "pool-thread.js")));
  const pool = new ToolPool();
  try {
    const outcome = await pool.run({ kind: "lint", path: "x.json", content: "{}" });
    assert.equal(outcome, { ok: true, value: { status: "ok", output: "" } });
    assert.is(pool.started, true);
    assert.ok(pool.threadCount >= 1 && pool.threadCount <= 2);
  } finally {
    await pool.close();
  }
});

test("a task that throws in the worker becomes a PoolError with its message", async () => {
  const pool = new ToolPool();
  try {
    const error = await pool.run({ kind: "no_such_task" } as unknown as PoolTask).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(error, PoolError);
    assert.is((error as PoolError).code, "pool.task_failed");
    assert.match((error as PoolError).message, /unknown task kind "no_such_task"/);
    // The pool still works after a failed task.
    const again = await pool.run({ kind: "lint", path: "x.txt", content: "" });
    assert.is(again.ok, true);
  } finally {
    await pool.close();
  }
});

test("an expected failure comes back as a value, not a rejection", async () => {
  const pool = new ToolPool();
  try {
    const outcome = await pool.run({ kind: "read_file", path: "/nonexistent/file.txt", offset: 1, limit: 10 });
    assert.equal(outcome, { ok: false, error: { code: "not_found", message: "file not found: /nonexistent/file.txt" } });
  } finally {
    await pool.close();
  }
});

test("a closed pool refuses new tasks with pool.closed", async () => {
  const pool = new ToolPool();
  await pool.run({ kind: "lint", path: "a.txt", content: "" });
  await pool.close();
  await pool.close(); // twice is fine
  const error = await pool.run({ kind: "lint", path: "a.txt", content: "" }).catch((e: unknown) => e);
  assert.instance(error, PoolError);
  assert.is((error as PoolError).code, "pool.closed");
});

test("a missing worker build is reported with how to fix it", async () => {
  const pool = new ToolPool({ workerPath: "/nonexistent/worker.js" });
  const error = await pool.run({ kind: "lint", path: "a.txt", content: "" }).catch((e: unknown) => e);
  assert.is((error as PoolError).code, "pool.worker_missing");
  assert.match((error as Error).message, /npm run build/);
  await pool.close();
});

test("a task past its timeout is stopped with a clear error", async () => {
  const pool = new ToolPool();
  const tree = tempTree({ "evil.txt": `${"a".repeat(40)}!\n` });
  try {
    // Catastrophic backtracking: runs for hours unless the worker is stopped.
    const started = Date.now();
    const error = await pool.run({ kind: "search_files", path: tree.dir, pattern: "(a+)+$", maxResults: 1 }, { timeoutMs: 300 }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(error, PoolError);
    assert.is((error as PoolError).code, "pool.timeout");
    assert.ok(Date.now() - started < 5000);
    // The stuck thread was replaced: the pool still answers.
    const again = await pool.run({ kind: "lint", path: "a.json", content: "[]" });
    assert.is(again.ok, true);
  } finally {
    await pool.close();
    tree.cleanup();
  }
});

test.run();

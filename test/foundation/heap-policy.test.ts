import { execFile } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../helpers/cli.js";

const POLICY = pathToFileURL(join(ROOT, "dist", "daemon", "heap-policy.js")).href;

/**
 * A process under the daemon's heap policy makes a burst that leaves its old space fragmented
 * (a third of 600k objects kept), then idles; it prints its heap sizes (MB) as JSON: right
 * after the burst, then as soon as the heap shrank (the event awaited), or once WAIT_MS passed.
 * The policy's idle checks run every CHECK_MS (AGENT_HEAP_IDLE_CHECK_MS; 2 s in the daemon).
 */
const SCRIPT = `
import { getHeapStatistics, getHeapSpaceStatistics } from "node:v8";
const { applyHeapPolicy } = await import(${JSON.stringify(POLICY)});
applyHeapPolicy(process.env);
const mb = (n) => Math.round(n / 1048576);
let kept = [];
for (let i = 0; i < 600000; i++) kept.push({ i, s: "x" + i, a: [i] });
kept = kept.filter((_, i) => i % 3 === 0);
await new Promise((r) => setTimeout(r, 100));
const burst = mb(getHeapStatistics().total_heap_size);
const young = mb(getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size);
const end = Date.now() + Number(process.env.WAIT_MS);
while (Date.now() < end && mb(getHeapStatistics().total_heap_size) > burst * 0.7) await new Promise((r) => setTimeout(r, 25));
console.log(JSON.stringify({ burst, idle: mb(getHeapStatistics().total_heap_size), young, kept: kept.length }));
`;

const CHECK_MS = 100;

function run(env: Record<string, string>): Promise<{ burst: number; idle: number; young: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", SCRIPT],
      { env: { ...process.env, AGENT_HEAP_IDLE_CHECK_MS: String(CHECK_MS), ...env }, timeout: 60_000 },
      (error, stdout) => {
        if (error) reject(error);
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

test("with AGENT_HEAP_IDLE_COMPACT=1, a quiet process compacts its heap back near its live data after a burst; its young generation stays at 16 MB", async () => {
  // Waits for the shrink itself; 30 s is only the bound past which the test fails.
  const r = await run({ AGENT_HEAP_IDLE_COMPACT: "1", WAIT_MS: "30000" });
  assert.ok(r.idle <= r.burst * 0.7, `heap ${r.burst} MB after the burst, ${r.idle} MB once quiet`);
  assert.ok(r.young <= 16, `young generation ${r.young} MB`);
});

test("by default no idle compaction runs (its pause was 0.5 s at 100k actors); AGENT_HEAP_YOUNG_MB=0 lifts the young generation's cap", async () => {
  // Nothing to wait for when nothing happens: the process idles for 15 check intervals, where
  // the first test's 3 quiet checks compact the heap.
  const r = await run({ AGENT_HEAP_YOUNG_MB: "0", WAIT_MS: String(15 * CHECK_MS) });
  assert.ok(r.idle > r.burst * 0.7, `heap ${r.burst} MB after the burst, ${r.idle} MB once quiet`);
  assert.ok(r.young > 16, `young generation ${r.young} MB`);
});

test.run();

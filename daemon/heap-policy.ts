/**
 * The daemon's heap policy (README "Design notes", "Daemon memory").
 *
 * Old generation: by default V8 lets the old space grow to up to 4x the live data before its
 * next full collection, so a burst that makes short-lived garbage which outlives a few young
 * collections (actors awake for their idle timeout, requests in flight) leaves the heap, and the
 * RSS, at several times the live data for as long as the daemon then stays quiet. A growing
 * factor of 1.5 keeps the heap near the live data for a few more full collections (each is
 * short: most of the heap is garbage). `AGENT_HEAP_GROWING_PERCENT` overrides it (0: V8's
 * default).
 *
 * Young generation: V8 doubles it (up to 16 MB per semi-space, 32 MB in all, per thread) while
 * many objects survive, which a burst of creates or 10k actors falling asleep always does. It
 * never gives that back while the daemon runs, and a young collection copies up to a semi-space
 * of survivors while the event loop waits. It grows only up to YOUNG_GENERATION_MB (the growth
 * factor is read at each young collection, the maximum size only at start-up), so young
 * collections stay short and the RSS after a burst stays near the live data.
 * `AGENT_HEAP_YOUNG_MB` overrides it (0: V8's default).
 *
 * After a burst: a full collection frees the burst's garbage but moves few objects, so the old
 * space keeps its pages, each with a few live objects among the freed ones (at 100k actors:
 * 150+ MB of heap for 75 MB of live data, for as long as the daemon stays up). Once the daemon
 * has been quiet for IDLE_CHECKS checks in a row (its event loop busy less than IDLE_BUSY of the
 * time) while its heap is SLACK_MB and half larger than after the last one, one full collection that
 * compacts every page runs, when `AGENT_HEAP_IDLE_COMPACT=1`. Off by default (issue 31): it
 * stops the event loop for as long as a full collection that moves every live object, 0.5 s at
 * 100k actors (75+ MB live), and it gave back only about 20 MB of RSS there while the copy
 * itself made the run's RSS peak. The daemon's worker threads have their young generation
 * capped too (THREAD_YOUNG_GENERATION_MB). `AGENT_HEAP_IDLE_CHECK_MS` sets the time between
 * checks (tests shorten it).
 *
 * The variables are named in shared/config/env.ts (ENV_VARS).
 */
import { PerformanceObserver, performance } from "node:perf_hooks";
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { envValue } from "../shared/config/env.js";

export const HEAP_GROWING_PERCENT = 50;
/** Both semi-spaces together. */
export const YOUNG_GENERATION_MB = 16;
/**
 * The young generation of the daemon's own worker threads (the actor runner, the file writer):
 * V8's default lets each grow to 48 MB, which a burst of creations fills and never gives back.
 */
export const THREAD_YOUNG_GENERATION_MB = 8;
const IDLE_CHECK_MS = 2000;
const IDLE_CHECKS = 3;
const IDLE_BUSY = 0.03;
const SLACK_MB = 64;

export function applyHeapPolicy(env: NodeJS.ProcessEnv = process.env): void {
  const percent = setting(envValue("AGENT_HEAP_GROWING_PERCENT", env), HEAP_GROWING_PERCENT);
  // Read by V8 at each full collection, so setting it at start-up takes effect.
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
  const young = setting(envValue("AGENT_HEAP_YOUNG_MB", env), YOUNG_GENERATION_MB);
  if (young > 0) capYoungGeneration(young * 1024 * 1024);
  if (envValue("AGENT_HEAP_IDLE_COMPACT", env) === "1") compactWhenIdle(setting(envValue("AGENT_HEAP_IDLE_CHECK_MS", env), IDLE_CHECK_MS) || IDLE_CHECK_MS);
}

/** A positive integer setting; 0 (off) for anything else. */
function setting(raw: string | undefined, fallback: number): number {
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/**
 * Let the young generation grow only while it is below `bytes`: growth is off (factor 1) except
 * between a collection that found it smaller and the next one that finds it large enough (a
 * growth needs a full young generation's worth of survivors, so it stops within a step). Off
 * from the start: a long synchronous start-up (parsing the actor index) does not grow it.
 */
function capYoungGeneration(bytes: number): void {
  let growing = false;
  const check = () => {
    const size = getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? bytes;
    if (size < bytes === growing) return;
    growing = !growing;
    setFlagsFromString(`--semi-space-growth-factor=${growing ? 2 : 1}`);
  };
  setFlagsFromString("--semi-space-growth-factor=1");
  new PerformanceObserver(check).observe({ entryTypes: ["gc"] });
}

/** One compacting full collection once the daemon is quiet after its heap grew (see above). */
function compactWhenIdle(checkMs: number): void {
  setFlagsFromString("--expose-gc");
  // The flag exposes gc() in contexts made after it: this one's, never the daemon's global.
  const gc = runInNewContext("gc") as (() => void) | undefined;
  if (typeof gc !== "function") return;
  const slack = SLACK_MB * 1024 * 1024;
  let floor = 0;
  let quiet = 0;
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    quiet = busy < IDLE_BUSY ? quiet + 1 : 0;
    if (quiet < IDLE_CHECKS) return;
    const total = getHeapStatistics().total_heap_size;
    if (total < floor + slack || total < floor * 1.5) return;
    setFlagsFromString("--compact-on-every-full-gc");
    try {
      gc();
    } finally {
      setFlagsFromString("--no-compact-on-every-full-gc");
    }
    floor = getHeapStatistics().total_heap_size;
    quiet = 0;
  }, checkMs);
  timer.unref();
}

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
 * of survivors while the event loop waits. Once it reached YOUNG_GENERATION_MB it stops growing
 * (the growth factor is read at each young collection, the maximum size only at start-up), so
 * young collections stay short and the RSS after a burst stays near the live data.
 * `AGENT_HEAP_YOUNG_MB` overrides it (0: V8's default).
 */
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";

export const HEAP_GROWING_PERCENT = 50;
/** Both semi-spaces together. */
export const YOUNG_GENERATION_MB = 16;

export function applyHeapPolicy(env: NodeJS.ProcessEnv = process.env): void {
  const percent = setting(env.AGENT_HEAP_GROWING_PERCENT, HEAP_GROWING_PERCENT);
  // Read by V8 at each full collection, so setting it at start-up takes effect.
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
  const young = setting(env.AGENT_HEAP_YOUNG_MB, YOUNG_GENERATION_MB);
  if (young > 0) capYoungGeneration(young * 1024 * 1024);
}

/** A positive integer setting; 0 (off) for anything else. */
function setting(raw: string | undefined, fallback: number): number {
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** Stop the young generation's growth once it reached `bytes` (checked after collections until then). */
function capYoungGeneration(bytes: number): void {
  const reached = () => (getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0) >= bytes;
  const stop = () => setFlagsFromString("--semi-space-growth-factor=1");
  if (reached()) {
    stop();
    return;
  }
  const observer = new PerformanceObserver(() => {
    if (!reached()) return;
    stop();
    observer.disconnect();
  });
  observer.observe({ entryTypes: ["gc"] });
}

/**
 * The daemon's heap policy (README "Design notes", "Daemon memory"). By default V8 lets the old
 * space grow to up to 4x the live data before its next full collection, so a burst that makes
 * short-lived garbage which outlives a few young collections (actors awake for their idle
 * timeout, requests in flight) leaves the heap, and the RSS, at several times the live data for
 * as long as the daemon then stays quiet. A growing factor of 1.5 keeps the heap near the live
 * data for a few more full collections (each is short: most of the heap is garbage).
 * `AGENT_HEAP_GROWING_PERCENT` overrides it (0: V8's default).
 */
import { setFlagsFromString } from "node:v8";

export const HEAP_GROWING_PERCENT = 50;

export function applyHeapPolicy(env: NodeJS.ProcessEnv = process.env): void {
  const raw = env.AGENT_HEAP_GROWING_PERCENT;
  const percent = raw === undefined || raw === "" ? HEAP_GROWING_PERCENT : Number(raw);
  if (!Number.isInteger(percent) || percent <= 0) return;
  // Read by V8 at each full collection, so setting it at start-up takes effect.
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

// Preloaded with `node --import` (NODE_OPTIONS) by a benchmark into the daemon it starts (the
// variable reaches it through the CLI that spawns it): the daemon's own event-loop stalls, as
// the gaps between the turns of a 2 ms timer. Every gap over 15 ms is appended to
// $BENCH_LOOP_GAPS_FILE as a line `<wall-clock ms at its start> <length ms>` when it ends, so the
// benchmark reads the longest during its own window. Only in the daemon (dist/daemon/main.js):
// the CLI processes that load it too do nothing. Unlike a call's latency, this leaves out the
// client, the actor runner thread and the wait for a core on a loaded machine... except the
// main thread's own wait for one, which is part of any stall the daemon's callers see.
import { appendFileSync } from "node:fs";

const out = process.env.BENCH_LOOP_GAPS_FILE;
if (out && /daemon[\\/]main\.js$/.test(process.argv[1] ?? "")) {
  let last = Date.now();
  const tick = () => {
    const now = Date.now();
    if (now - last > 15) appendFileSync(out, `${last} ${now - last}\n`);
    last = now;
    setTimeout(tick, 2).unref();
  };
  setTimeout(tick, 2).unref();
}

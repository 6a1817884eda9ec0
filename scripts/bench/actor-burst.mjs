#!/usr/bin/env node
// Benchmark: the daemon's peak memory through a burst of actor creations, and the pause of its
// idle heap compaction afterwards (docs/benchmarks.md, "Actor burst").
//
// Starts a daemon on a temp home, creates N actors over HTTP (16 concurrent `PUT /actors`)
// while sampling the daemon's RSS every 100 ms (/proc/<pid>/status), then leaves it alone for
// --idle seconds while probing `GET /health` every 20 ms: the longest probe in the quiet time
// is the longest stall of the event loop (the idle compaction is one). With --before <dir>
// (the dist/ of another build), that build is measured the same way first, in the same run,
// and the throughput and peak are printed as ratios to it; --rounds R alternates the two builds
// R times (medians; the load of a shared machine moves between runs).
//
// Usage (after `npm run build`):
//   node scripts/bench/actor-burst.mjs [--actors 100000] [--idle 20] [--sleep-timeout 1500 (the module's, ms)] [--before <dist of another build>] [--rounds 1]
// (--before needs a folder where node finds this checkout's node_modules, e.g. <checkout>/.bench-before/dist)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { agentCli, jsonClient, ROOT } from "./lib/daemon-client.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const N = Number(opt("actors", 100_000));
const IDLE_S = Number(opt("idle", 20));
const BEFORE = opt("before", null);
const ROUNDS = Number(opt("rounds", 1));
const SLEEP_MS = Number(opt("sleep-timeout", 1500));
const CONCURRENCY = 16;
const MODULE = `export const scale = {
  state: { n: 0 },
  options: { sleepTimeout: ${SLEEP_MS} },
  actions: { inc: (c) => ++c.state.n, get: (c) => c.state.n },
};
`;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");
const sleepMs = (ms) => new Promise((r) => setTimeout(r, ms));
const fmt = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

function procMb(pid, field) {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

async function measure(label, cliPath) {
  const cli = (home, argv) => agentCli(home, argv, 600_000, cliPath);
  const home = mkdtempSync(join(tmpdir(), "agent-burst-"));
  mkdirSync(join(home, "actors"), { recursive: true });
  writeFileSync(join(home, "actors", "scale.js"), MODULE);
  const request = jsonClient(64);
  try {
    await cli(home, ["daemon", "start", "--json"]);
    const s = JSON.parse(await cli(home, ["daemon", "status", "--json"]));
    const { pid, gateway_url: base } = s;
    let peak = procMb(pid, "VmRSS");
    let peakAt = 0;
    const t0 = performance.now();
    const sampler = setInterval(() => {
      const r = procMb(pid, "VmRSS");
      if (r > peak) {
        peak = r;
        peakAt = performance.now() - t0;
      }
    }, 100);
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < N) {
          const i = next++;
          await request(base, "PUT", "/actors", { name: "scale", key: `s${i}`, runner_name_selector: "default", crash_policy: "sleep" });
        }
      }),
    );
    const burstS = (performance.now() - t0) / 1000;
    const rate = N / burstS;
    // The quiet time: probes every 20 ms; the sampler keeps running (a peak after the burst
    // counts too: the actors fall asleep and their state is written then).
    const probes = [];
    const tq = performance.now();
    while (performance.now() - tq < IDLE_S * 1000) {
      const t = performance.now();
      await request(base, "GET", "/health");
      probes.push({ at: t - tq, ms: performance.now() - t });
      await sleepMs(20);
    }
    clearInterval(sampler);
    const rest = procMb(pid, "VmRSS");
    const longest = probes.reduce((a, b) => (b.ms > a.ms ? b : a), { at: 0, ms: 0 });
    const late = probes.filter((p) => p.at > 5000);
    const longestLate = late.reduce((a, b) => (b.ms > a.ms ? b : a), { at: 0, ms: 0 });
    const r = { label, rate, burstS, peak, peakAt: peakAt / 1000, rest, longest, longestLate };
    console.log(
      `${label}: ${N} creates in ${fmt(burstS, 1)} s (${fmt(rate)}/s); peak RSS ${fmt(peak)} MB (at ${fmt(r.peakAt, 1)} s); ` +
        `RSS after ${IDLE_S} s quiet ${fmt(rest)} MB; longest stall in the quiet time ${fmt(longest.ms, 1)} ms at +${fmt(longest.at / 1000, 1)} s ` +
        `(after the first 5 s: ${fmt(longestLate.ms, 1)} ms); load average ${load()}`,
    );
    return r;
  } finally {
    await cli(home, ["daemon", "stop"]).catch(() => undefined);
    request.close();
    rmSync(home, { recursive: true, force: true });
  }
}

console.log(`actor-burst: ${N} actors, node ${process.version}, load average ${load()}`);
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const runs = { before: [], after: [] };
for (let r = 0; r < ROUNDS; r++) {
  if (BEFORE) runs.before.push(await measure(`before, round ${r + 1}`, join(BEFORE, "cli", "main.js")));
  runs.after.push(await measure(`this build, round ${r + 1}`, join(ROOT, "dist", "cli", "main.js")));
}
const summary = (xs) => ({
  rate: med(xs.map((x) => x.rate)),
  peak: med(xs.map((x) => x.peak)),
  stall: med(xs.map((x) => x.longestLate.ms)),
  rest: med(xs.map((x) => x.rest)),
});
const after = summary(runs.after);
const before = BEFORE ? summary(runs.before) : null;
const ok = (b) => (b ? "✓" : "✗");
const of = ROUNDS > 1 ? ` (medians of ${ROUNDS})` : "";
console.log(
  `${ok(after.peak < 300)} peak RSS through the burst${of}: ${fmt(after.peak)} MB (target < 300 MB)${before ? `; before ${fmt(before.peak)} MB` : ""}`,
);
if (before) {
  const ratio = after.rate / before.rate;
  console.log(`${ok(ratio >= 0.9)} creation rate${of}: ${fmt(after.rate)}/s vs ${fmt(before.rate)}/s before: ${fmt(ratio, 2)}x (target ≥ 0.9x)`);
}
console.log(`  RSS after ${IDLE_S} s quiet${of}: ${fmt(after.rest)} MB${before ? `; before ${fmt(before.rest)} MB` : ""}`);
console.log(
  `${ok(after.stall < 50)} longest stall while idle after the burst (5 s on; the idle compaction ran there)${of}: ${fmt(after.stall, 1)} ms (target < 50 ms)${before ? `; before ${fmt(before.stall, 1)} ms` : ""}`,
);
console.log(`load average now ${load()}`);

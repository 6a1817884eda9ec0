#!/usr/bin/env node
// Benchmark: session search at scale (README "Sessions"). A real daemon on a temp home gets
// 2,000 sessions with 200,000 generated messages through the same RPC a kanban worker uses
// (chat.sessions.create, chat.sessions.append: transcripts in the session actors, the listing,
// the search index), then reports:
//   - discovery latency p50/p95 of `sessions.search` (limit 3, window 5: the index query plus
//     each hit's window and bookends read from its session actor), target p95 <= 25 ms;
//   - daemon start-up time with the persisted index (until `agent daemon start` returns), against
//     an empty home, target < 1.5 s; and the first search right after a start (target < 200 ms, it
//     answers during the index's load) against the same search once the index has loaded;
//   - the index's size on disk.
// Usage: npm run build && node scripts/bench/session-search.mjs [--sessions 2000] [--messages 200000] [--queries 200]
//   [--home DIR]: fill DIR once (when it holds no sessions yet) and keep it, so later runs skip the fill.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { SearchIndex } from "../../dist/daemon/agent/search/search-index.js";
import { connectDaemon } from "../../dist/shared/client/index.js";
import { queries, sessions } from "./session-search-data.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist", "cli", "main.js");
const { values } = parseArgs({
  options: { sessions: { type: "string" }, messages: { type: "string" }, queries: { type: "string" }, home: { type: "string" } },
});
const N = Number(values.sessions ?? 2000);
const TOTAL = Number(values.messages ?? 200_000);
const Q = Number(values.queries ?? 200);

const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const fmt = (x, d = 1) => x.toFixed(d);

function cli(home, argv) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, ...argv],
      { env: { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0" }, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => (error ? reject(new Error(`agent ${argv.join(" ")}: ${error.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
}

async function timedStart(home) {
  const t0 = performance.now();
  await cli(home, ["daemon", "start", "--json"]);
  return performance.now() - t0;
}

function du(dir) {
  let n = 0;
  for (const d of readdirSync(dir, { withFileTypes: true })) n += d.isDirectory() ? du(join(dir, d.name)) : statSync(join(dir, d.name)).size;
  return n;
}

const rows = [];
const report = (what, value, target = "", ok = null) => {
  rows.push({ what, value, target, ok });
  console.log(`${what.padEnd(58)} ${String(value).padStart(16)}  ${target}${ok === null ? "" : ok ? "  ok" : "  MISSED"}`);
};

const empty = mkdtempSync(join(tmpdir(), "agent-ss-empty-"));
const keep = values.home;
if (keep) mkdirSync(keep, { recursive: true });
const home = keep ?? mkdtempSync(join(tmpdir(), "agent-ss-"));
const filled = keep && existsSync(join(home, "data", "agent", "sessions.json"));
try {
  // Empty home: the baseline start-up.
  const emptyStarts = [];
  for (let i = 0; i < 3; i++) {
    emptyStarts.push(await timedStart(empty));
    await cli(empty, ["daemon", "stop"]);
  }
  const emptyStart = pct(emptyStarts, 50);

  // Fill: one create and one append of 100 messages per session (skipped for a kept home already filled).
  let client;
  if (!filled) {
    await cli(home, ["daemon", "start"]);
    client = await connectDaemon({ home });
    const t0 = performance.now();
    let count = 0;
    for (const s of sessions({ sessions: N, total: TOTAL })) {
      const { session } = await client.call("chat.sessions.create", { title: s.title });
      for (let i = 0; i < s.messages.length; i += 1000) {
        await client.call("chat.sessions.append", { sessionId: session.id, messages: s.messages.slice(i, i + 1000) });
      }
      count += s.messages.length;
    }
    report(`fill: ${N} sessions, ${count} messages (create + append)`, `${fmt((performance.now() - t0) / 1000)} s`);
    client.close();
    const stopT = performance.now();
    await cli(home, ["daemon", "stop"]);
    report("graceful stop", `${fmt((performance.now() - stopT) / 1000, 2)} s`);
  }
  report("index size on disk (data/agent/search)", `${fmt(du(join(home, "data", "agent", "search")) / 1048576)} MB`);
  report("session listing on disk (data/agent/sessions.*)", `${fmt(statSync(join(home, "data", "agent", "sessions.json")).size / 1024)} KiB`);

  // Start-up with the persisted index, and the first search right after it (issue 31: under
  // 200 ms at 200,000 messages; it answers during the index's load). The baseline, in the same
  // start: the same search again once the index has loaded (the first one's hits' session
  // actors are awake by then, as a later search finds them).
  const searchStatus = async (c) => (await c.call("daemon.status", {})).components.search?.detail ?? "";
  const starts = [];
  const firsts = [];
  const warms = [];
  let duringLoad = 0;
  let sameHits = 0;
  for (let i = 0; i < 3; i++) {
    starts.push(await timedStart(home));
    client = await connectDaemon({ home });
    const q0 = performance.now();
    const first = await client.call("sessions.search", { query: "deploy" });
    firsts.push(performance.now() - q0);
    if (/loading/.test(await searchStatus(client))) duringLoad++;
    while (!/indexed/.test(await searchStatus(client))) await new Promise((resolve) => setTimeout(resolve, 50));
    const w0 = performance.now();
    const again = await client.call("sessions.search", { query: "deploy" });
    warms.push(performance.now() - w0);
    if (JSON.stringify(again) === JSON.stringify(first)) sameHits++;
    client.close();
    if (i < 2) await cli(home, ["daemon", "stop"]);
  }
  const start = pct(starts, 50);
  report("daemon start-up, empty home (median of 3)", `${fmt(emptyStart, 0)} ms`);
  report("daemon start-up with the persisted index (median of 3)", `${fmt(start, 0)} ms`, "< 1500 ms", start < 1500);
  report("start-up ratio against the empty home", `${fmt(start / emptyStart, 2)}x`);
  const firstMax = Math.max(...firsts);
  report(`first search after a start (max of 3; ${duringLoad} of 3 during the load)`, `${fmt(firstMax, 0)} ms`, "< 200 ms", firstMax < 200);
  report("  each start's first search", firsts.map((x) => fmt(x, 0)).join(" / ") + " ms");
  report("  the same search once loaded (baseline), each start", warms.map((x) => fmt(x, 1)).join(" / ") + " ms");
  report(
    "  first search against the loaded search (median ratio)",
    `${fmt(
      pct(
        firsts.map((x, i) => x / warms[i]),
        50,
      ),
      1,
    )}x`,
  );
  report("  the same hits during the load and after it", `${sameHits} of 3`, "3 of 3", sameHits === 3);

  // Discovery latency (the daemon warm, the session actors asleep or awake as the queries go).
  client = await connectDaemon({ home });
  const qs = queries(Q);
  const times = [];
  let hits = 0;
  for (const q of qs.slice(0, 20)) await client.call("sessions.search", { query: q });
  for (const q of qs) {
    const t = performance.now();
    const r = await client.call("sessions.search", { query: q, limit: 3, window: 5 });
    times.push(performance.now() - t);
    hits += r.results.length;
  }
  client.close();
  report(`discovery p50 (${Q} queries, limit 3, window 5; ${hits} hits)`, `${fmt(pct(times, 50), 2)} ms`);
  report("discovery p95", `${fmt(pct(times, 95), 2)} ms`, "<= 25 ms", pct(times, 95) <= 25);
  await cli(home, ["daemon", "stop"]);

  // The index alone, in this process: its load, and queries without reading any session.
  const index = new SearchIndex(join(home, "data", "agent", "search"));
  const l0 = performance.now();
  void index.ready();
  await index.search("deploy", () => true, 3);
  const firstInProcess = performance.now() - l0;
  await index.loaded();
  const whole = performance.now() - l0;
  report(`index load in-process (${index.documents} messages)`, `${fmt(whole, 0)} ms`);
  report("  first search in-process during the load (from the load's start)", `${fmt(firstInProcess, 0)} ms (${fmt(firstInProcess / whole, 2)}x the load)`);
  const only = [];
  for (const q of qs) {
    const t = performance.now();
    await index.search(q, () => true);
    only.push(performance.now() - t);
  }
  report("index query alone p50 / p95", `${fmt(pct(only, 50), 2)} / ${fmt(pct(only, 95), 2)} ms`);
  await index.close();
} finally {
  await cli(home, ["daemon", "stop"]).catch(() => undefined);
  await cli(empty, ["daemon", "stop"]).catch(() => undefined);
  if (!keep) rmSync(home, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
}

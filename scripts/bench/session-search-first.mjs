#!/usr/bin/env node
// Benchmark: the first session search after a daemon start (issue 31), for one build on one home,
// so two builds can be alternated on copies of the same home. It starts the daemon of `--dist`
// on `--home` (a copy: the start may change it), times `sessions.search` sent as soon as
// `agent daemon start` returns, then the same search again once the index has loaded (the
// baseline), prints both and the hits, and stops the daemon.
//   --cpu-prof DIR: the daemon runs under `node --cpu-prof` (its profile is written at its stop).
// Usage: node scripts/bench/session-search-first.mjs --home <filled home, e.g. from session-search.mjs --home>
//          [--dist dist] [--query deploy] [--cpu-prof DIR]
import { execFileSync, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { home: { type: "string" }, dist: { type: "string" }, query: { type: "string" }, "cpu-prof": { type: "string" } } });
if (!values.home) throw new Error("--home is required");
const home = resolve(values.home);
const dist = resolve(values.dist ?? "dist");
const query = values.query ?? "deploy";
const { connectDaemon } = await import(join(dist, "shared/client/index.js"));
const env = { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0" };
const cli = (...args) => execFileSync(process.execPath, [join(dist, "cli/main.js"), ...args], { env }).toString();

const t0 = performance.now();
if (values["cpu-prof"]) {
  // The daemon started directly (as the CLI does: detached, ready reported over IPC), under the profiler.
  const child = spawn(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${resolve(values["cpu-prof"])}`, join(dist, "daemon/main.js")], {
    detached: true,
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env,
  });
  await new Promise((ready) => child.once("message", ready));
  child.disconnect();
  child.unref();
} else cli("daemon", "start");
const started = performance.now() - t0;
const client = await connectDaemon({ home });
try {
  const q0 = performance.now();
  const first = await client.call("sessions.search", { query });
  const firstMs = performance.now() - q0;
  const status = async () => (await client.call("daemon.status", {})).components.search?.detail ?? "";
  const during = /loading/.test(await status());
  // Builds before issue 31 have no "search" status: their first search waited for the whole load.
  for (let i = 0; i < 600 && /loading/.test(await status()); i++) await new Promise((r) => setTimeout(r, 50));
  const w0 = performance.now();
  const again = await client.call("sessions.search", { query });
  const warmMs = performance.now() - w0;
  console.log(
    JSON.stringify({
      start_ms: Math.round(started),
      first_ms: Math.round(firstMs),
      loaded_ms: Math.round(warmMs * 10) / 10,
      ratio: Math.round((firstMs / warmMs) * 10) / 10,
      during_load: during,
      same_hits: JSON.stringify(first) === JSON.stringify(again),
      hits: first.results.map((r) => `${r.session_id}:${r.message_id}`),
    }),
  );
} finally {
  client.close();
  cli("daemon", "stop");
}

#!/usr/bin/env node
// Daemon start-up benchmark. Needs a build (npm run build).
// Each run starts a daemon on a fresh temp home with `agent daemon start --json`, records
//  - the wall time until the CLI returns (the daemon answered its ready handshake), and
//  - the daemon's CPU time (user + system, from /proc/<pid>/stat) at that moment,
// then stops it. `node -e 0` is timed between runs as the baseline, so the figures read as a
// ratio that holds across machine loads. With `--before <dist/cli/main.js of another build>`
// (e.g. a copy of an older commit's dist/) both builds are measured interleaved in the same run,
// and the after/before ratios are printed.
// Usage: node scripts/bench/daemon-start.mjs [--runs N] [--before path/to/dist/cli/main.js]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const runs = Number(option("--runs") ?? 15);
const builds = [["after", join(root, "dist", "cli", "main.js")]];
if (option("--before")) builds.unshift(["before", option("--before")]);
const TICK_MS = 1000 / 100; // USER_HZ on Linux

function run(args, env) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout.toString() };
}

/** user + system CPU of a live process, in ms (fields 14 and 15 of /proc/<pid>/stat). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

function startOnce(cli) {
  const home = mkdtempSync(join(tmpdir(), "ahd-"));
  const env = { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", AGENT_ACTORS_WATCH: "0" };
  try {
    const r = run([cli, "daemon", "start", "--json"], env);
    const { pid } = JSON.parse(r.stdout);
    const cpu = cpuMs(pid);
    return { wall: r.ms, cpu };
  } finally {
    spawnSync(process.execPath, [cli, "daemon", "stop"], { env, stdio: "ignore" });
    rmSync(home, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

if (process.platform !== "linux") {
  console.log("skipped: the daemon's CPU time is read from /proc (Linux only)");
  process.exit(0);
}
// Warm the page cache.
for (const [, cli] of builds) startOnce(cli);
const base = [];
const results = Object.fromEntries(builds.map(([name]) => [name, { wall: [], cpu: [] }]));
for (let i = 0; i < runs; i++) {
  for (const [name, cli] of builds) {
    base.push(run(["-e", "0"], process.env).ms);
    const r = startOnce(cli);
    results[name].wall.push(r.wall);
    results[name].cpu.push(r.cpu);
  }
}
const mb = median(base);
console.log(`node -e 0                       median ${mb.toFixed(1)} ms wall (${base.length} runs)`);
const summary = {};
for (const [name] of builds) {
  const wall = median(results[name].wall);
  const cpu = median(results[name].cpu);
  summary[name] = { wall, cpu };
  console.log(
    `daemon start (${name.padEnd(6)})           median ${wall.toFixed(0)} ms wall (${(wall / mb).toFixed(1)}x node -e 0), daemon CPU at ready ${cpu.toFixed(0)} ms (${(cpu / mb).toFixed(1)}x) (${runs} runs)`,
  );
}
if (summary.before) {
  console.log(
    `after / before                  wall ${(summary.after.wall / summary.before.wall).toFixed(2)}x, daemon CPU ${(summary.after.cpu / summary.before.cpu).toFixed(2)}x`,
  );
}

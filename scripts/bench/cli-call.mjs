#!/usr/bin/env node
// The CPU of one CLI call (user + system of the `node` process, start to exit). Needs a build
// (npm run build). The test suite makes about 1,200 CLI calls per run, so this is what each of
// them costs the machine (docs/benchmarks.md "Where the suite's CPU goes").
//
// Each round runs, interleaved, `--calls` of each of:
//  - `node -e 0` (bare Node: the baseline, measured in the same run),
//  - `agent --version` (the CLI's own start, no daemon),
//  - `agent kanban list --json` against a running daemon on a temp home (a call over the socket),
// for the build under dist/ and, with `--before <dist/cli/main.js of another build>` (e.g. a copy
// of an older commit's dist/ kept inside the repository, say .tmp/before/dist, so that its
// packages resolve from node_modules), for that build too: each build gets its own home and daemon.
// CPU is read as the children's CPU this process has reaped (/proc/self/stat, cutime + cstime),
// before and after each batch, so it counts the CLI process only (the daemon is not our child).
// Prints the median per call over the rounds, and each figure over `node -e 0`; with --before,
// also after over before.
// Usage: node scripts/bench/cli-call.mjs [--rounds N] [--calls K] [--before path/to/dist/cli/main.js]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "./lib/measure.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const rounds = Number(option("--rounds") ?? 5);
const calls = Number(option("--calls") ?? 10);
const TICK_MS = 1000 / 100; // USER_HZ on Linux

/** CPU (ms) of the children this process has waited for: fields 16 and 17 of /proc/self/stat. */
function childCpuMs() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

function run(args, env) {
  const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout.toString();
}

/** The CPU per call (ms) of `calls` runs of `node <args>`. */
function batch(args, env) {
  const before = childCpuMs();
  for (let i = 0; i < calls; i++) run(args, env);
  return (childCpuMs() - before) / calls;
}

const builds = [{ name: "after", cli: join(root, "dist", "cli", "main.js") }];
if (option("--before")) builds.unshift({ name: "before", cli: option("--before") });
for (const b of builds) {
  b.home = mkdtempSync(join(tmpdir(), "ahc-"));
  b.env = { ...process.env, AGENT_HOME: b.home, AGENT_GATEWAY_PORT: "0", NO_COLOR: "1" };
  b.version = [];
  b.list = [];
}
const bare = [];
try {
  for (const b of builds) {
    run([b.cli, "daemon", "start", "--json"], b.env);
    JSON.parse(run([b.cli, "kanban", "list", "--json"], b.env)); // warm-up, and the answer parses
  }
  for (let r = 0; r < rounds; r++) {
    bare.push(batch(["-e", "0"], process.env));
    for (const b of builds) {
      b.version.push(batch([b.cli, "--version"], b.env));
      b.list.push(batch([b.cli, "kanban", "list", "--json"], b.env));
    }
  }
  const base = median(bare);
  const line = (label, ms, extra = "") => console.log(`${label.padEnd(36)} ${ms.toFixed(1).padStart(6)} ms CPU  ${(ms / base).toFixed(2)}x node -e 0${extra}`);
  console.log(
    `${rounds} rounds of ${calls} calls each, median per call; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
  );
  line("node -e 0", base);
  const after = builds.at(-1);
  const before = builds.length > 1 ? builds[0] : null;
  for (const [what, key] of [
    ["agent --version", "version"],
    ["agent kanban list --json", "list"],
  ]) {
    if (before) line(`${what} (before)`, median(before[key]));
    const ratio = before ? `  ${(median(after[key]) / median(before[key])).toFixed(2)}x before` : "";
    line(`${what}${before ? " (after)" : ""}`, median(after[key]), ratio);
  }
} finally {
  for (const b of builds) {
    spawnSync(process.execPath, [b.cli, "daemon", "stop"], { env: b.env, stdio: "ignore" });
    rmSync(b.home, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }
}

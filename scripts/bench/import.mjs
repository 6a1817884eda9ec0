#!/usr/bin/env node
// Benchmark: the memory of `agent import` on a "bomb" (docs/benchmarks.md "Import"). Writes a
// small archive that inflates to --inflated MB (default: about 4 MB inflating to 800 MB), imports
// it into a new home with the import process's peak RSS read from /proc (VmHWM, through the
// test/fixtures/peak-rss.mjs preload), and prints it against the RSS of an idle daemon measured
// in the same run, as a ratio.
//
// Usage (after `npm run build`): node scripts/bench/import.mjs [--inflated 800] [--random 3.5]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bombEntries, writeArchive } from "../../test/fixtures/archives.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const MiB = 1024 ** 2;
const inflated = opt("inflated", 800) * MiB;
const random = opt("random", 3.5) * MiB;
const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const PRELOAD = fileURLToPath(new URL("../../test/fixtures/peak-rss.mjs", import.meta.url));

const agent = (home, argv, env = {}) => {
  const r = spawnSync(process.execPath, [CLI, ...argv], { env: { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", ...env }, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`agent ${argv.join(" ")} failed: ${r.stderr}`);
  return r.stdout;
};
const statusKiB = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);

const dir = mkdtempSync(join(tmpdir(), "agent-import-bench-"));
try {
  console.log(
    `import bench: node ${process.version}, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  const archive = join(dir, "bomb.tar.gz");
  await writeArchive(archive, bombEntries({ inflated, random }));
  const size = statSync(archive).size;

  // An idle daemon on a fresh home, measured after it settled.
  const idleHome = join(dir, "idle");
  const started = JSON.parse(agent(idleHome, ["daemon", "start", "--json"]));
  await new Promise((r) => setTimeout(r, 1000));
  const idle = { rss: statusKiB(started.pid, "VmRSS"), hwm: statusKiB(started.pid, "VmHWM") };
  agent(idleHome, ["daemon", "stop"]);

  const home = join(dir, "home");
  const rssFile = join(dir, "rss");
  const t = performance.now();
  agent(home, ["import", archive, "-y"], { NODE_OPTIONS: `--import ${PRELOAD}`, PEAK_RSS_FILE: rssFile });
  const ms = performance.now() - t;
  const peak = Number(readFileSync(rssFile, "utf8"));
  const mb = (kib) => `${(kib / 1024).toFixed(0)} MB`;
  console.log(`archive ${(size / MiB).toFixed(1)} MB inflating to ${(inflated / MiB).toFixed(0)} MB (ratio ${(inflated / size).toFixed(0)})`);
  console.log(`import: ${(ms / 1000).toFixed(1)} s, peak RSS ${mb(peak)}`);
  console.log(`idle daemon: RSS ${mb(idle.rss)} (peak ${mb(idle.hwm)})`);
  console.log(`import peak / idle daemon RSS: ${(peak / idle.rss).toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

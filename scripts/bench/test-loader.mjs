#!/usr/bin/env node
// The tests' TypeScript loader (scripts/test-loader.mjs) against tsx, which the suite used before:
// the CPU (user + system, of the process and the children it waited for) of running one test
// file under each, alternating in the same run, median of --runs; with plain `node -e 0` as the
// floor. Also the cold compile of the whole cache (a fresh clone's first run) and an up-to-date
// check (every later run), both into a temp directory.
// Usage: node scripts/bench/test-loader.mjs [--runs 7] [test files...]
//   (default files: a tiny one, one that loads the RPC table and zod, one that loads a daemon store)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { precompile } from "../test-compile.mjs";
import { median } from "./lib/measure.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 7;
const files = args.length ? args : ["test/foundation/json-keys.test.ts", "test/foundation/rpc-schemas.test.ts", "test/store/doc-store.test.ts"];
const loader = pathToFileURL(join(root, "scripts", "test-loader.mjs")).href;
const env = { ...process.env, FORCE_COLOR: "0", NODE_ENV: "test", AGENT_GATEWAY_PORT: "0", AGENT_DEFAULT_WORKSPACE: "dir" };

/** CPU seconds of `node ...argv` (sh's `times`: the children's user and system time). */
function cpu(argv) {
  const quoted = argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const r = spawnSync("/bin/sh", ["-c", `${quoted} >/dev/null 2>&1; echo "rc=$?"; times`], { cwd: root, env, encoding: "utf8" });
  if (!/rc=0/.test(r.stdout)) throw new Error(`${argv.join(" ")} failed:\n${r.stdout}${r.stderr}`);
  const lines = r.stdout.trim().split("\n");
  const secs = (t) => {
    const m = /(\d+)m([\d.]+)s/.exec(t);
    return Number(m[1]) * 60 + Number(m[2]);
  };
  const [user, sys] = lines.at(-1).trim().split(/\s+/);
  return secs(user) + secs(sys);
}

const load0 = loadavg()[0];
// The cold compile (a fresh clone) and the check that finds nothing to do (every later run).
const tmp = mkdtempSync(join(tmpdir(), "test-js-"));
const cold = await precompile(root, tmp);
const warm = await precompile(root, tmp);
rmSync(tmp, { recursive: true, force: true });
await precompile(root); // the loader's own cache, for the runs below

const floor = [];
const rows = files.map((file) => ({ file, tsx: [], ours: [] }));
for (let i = 0; i < runs; i++) {
  floor.push(cpu([process.execPath, "-e", "0"]));
  for (const row of rows) {
    // Alternating, the order swapped every round.
    const pair = [
      () => row.tsx.push(cpu([process.execPath, "--import", "tsx", row.file])),
      () => row.ours.push(cpu([process.execPath, "--import", loader, row.file])),
    ];
    if (i % 2) pair.reverse();
    for (const run of pair) run();
  }
}

const ms = (s) => `${(s * 1000).toFixed(0)} ms`;
process.stdout.write(
  `test loader vs tsx, CPU per test file (median of ${runs}; load average ${load0.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end)\n`,
);
process.stdout.write(`  node -e 0 (floor): ${ms(median(floor))}\n`);
for (const { file, tsx, ours } of rows) {
  const t = median(tsx);
  const o = median(ours);
  process.stdout.write(`  ${file}: tsx ${ms(t)}, loader ${ms(o)}: ${(o / t).toFixed(2)}x (saves ${ms(t - o)} a file)\n`);
}
process.stdout.write(
  `cache: cold compile of ${cold.total} .ts files ${(cold.ms / 1000).toFixed(2)} s (one esbuild call); up-to-date check ${ms(warm.ms / 1000)}\n`,
);

#!/usr/bin/env node
// Runs every test/**/*.test.ts file with uvu, each in its own process (a few at a time, the
// longest files of the last run first), and ends with the line `N passed, M skipped, K failed`.
// Exit code 1 on any failure.
//
// The files run under the suite's own TypeScript loader (scripts/test-loader.mjs), not tsx: at
// the start of a run every .ts file tsconfig.json includes is compiled, those changed since the
// last run only, in one esbuild call (scripts/test-compile.mjs, into .tmp/test-js/), and each
// test process reads that JavaScript. A test that starts a TypeScript child of its own gives it
// the same loader (test/helpers/ts-loader.ts).
//
// A test that cannot run here reports itself skipped through test/helpers/skip.ts: a marker line
// ("[test skipped] <reason>") on its stdout, counted here as a skip rather than a pass, with its reason listed.
// Each file has a time limit; the whole run is measured against the budget stated in README.md.
//
// Usage: npm test [-- <path filter>...]
// env: TEST_CONCURRENCY (default "auto": at least 2 files at a time, and more, up to twice the
//      cores, while the cores sit idle; a number fixes it), TEST_FILE_TIMEOUT_S (default 300),
//      TEST_IDLE_SHARE (default 1/3: how idle the cores must be for one more file),
//      TEST_BUDGET_S (default 300: the README's budget for the whole suite; a run over it says so),
//      TEST_DIR (default test/: where the *.test.ts files are; the harness's own test points it at fixtures),
//      TEST_LOADER (default: the suite's loader; "tsx" runs the files under tsx, to compare)
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { precompile } from "./test-compile.mjs";

const root = new URL("..", import.meta.url).pathname;
const filters = process.argv.slice(2);
// Most files spend much of their time waiting (a daemon starting, a worker answering, a
// follower's poll), so a fixed 2 on 2 cores leaves them idle about half the time.
const fixedConcurrency = /^\d+$/.test(process.env.TEST_CONCURRENCY ?? "") ? Math.max(1, Number(process.env.TEST_CONCURRENCY)) : undefined;
const cores = availableParallelism();
const minConcurrency = fixedConcurrency ?? 2;
const maxConcurrency = fixedConcurrency ?? Math.max(2, cores * 2);
// The idle share of the cores above which one more file starts (a test of the harness sets 0).
const idleToStart = Number(process.env.TEST_IDLE_SHARE ?? 1 / 3);
const timeoutMs = Number(process.env.TEST_FILE_TIMEOUT_S ?? 300) * 1000;
const budgetS = Number(process.env.TEST_BUDGET_S ?? 300);
const testDir = process.env.TEST_DIR ? join(root, process.env.TEST_DIR) : join(root, "test");
// Durations of the last runs, to start the longest files first (a cache: absent on a fresh clone;
// in the checkout itself, not node_modules, which a worktree may share with another checkout).
const timesFile = join(root, ".tmp", "test-durations.json");

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (name === "fixtures" || name === "node_modules") continue;
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    else if (name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

function readTimes() {
  try {
    return JSON.parse(readFileSync(timesFile, "utf8"));
  } catch {
    return {};
  }
}

function writeTimes(times) {
  try {
    mkdirSync(dirname(timesFile), { recursive: true });
    const tmp = `${timesFile}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(times, null, 1)}\n`);
    renameSync(tmp, timesFile);
  } catch {
    // Only an ordering hint: a run without it is as correct, just scheduled by file size.
  }
}

const loader = process.env.TEST_LOADER === "tsx" ? "tsx" : pathToFileURL(join(root, "scripts", "test-loader.mjs")).href;

const files = findTests(testDir).filter((f) => filters.length === 0 || filters.some((x) => relative(root, f).includes(x.replace(/^\.\//, ""))));
const lastTimes = readTimes();
// Longest first, so the slowest files do not start last and leave one slot idle at the end; a
// file without a recorded time is estimated by its size (bigger files hold more tests).
const estimate = (f) => lastTimes[relative(root, f)] ?? statSync(f).size / 1000;
const ordered = [...files].sort((a, b) => estimate(b) - estimate(a));

// Before any file starts, so that no test process compiles TypeScript itself.
if (loader !== "tsx" && files.length > 0) {
  try {
    const c = await precompile(root);
    if (c.compiled > 0 || c.failed.length > 0)
      process.stdout.write(
        `compiled ${c.compiled} of ${c.total} .ts files in ${(c.ms / 1000).toFixed(1)} s (.tmp/test-js)${c.failed.length ? `; esbuild could not compile ${c.failed.join(", ")}` : ""}\n`,
      );
  } catch (e) {
    // The loader compiles what is not in the cache itself: slower, but the run is as correct.
    process.stdout.write(`the tests' .ts files could not be precompiled (each process compiles its own): ${e.message}\n`);
  }
}

const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
const skipReasons = [];
const durations = [];
const started = Date.now();
const live = new Set();
// The files run in their own process groups: an interrupted run takes them down with it.
for (const signal of ["SIGINT", "SIGTERM"])
  process.on(signal, () => {
    for (const pid of live)
      try {
        process.kill(-pid, "SIGKILL");
      } catch {}
    process.exit(130);
  });

function runFile(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const name = relative(root, file);
    const child = spawn(process.execPath, ["--import", loader, file], {
      cwd: root,
      // Daemons started by tests bind a free gateway port so parallel files never fight over 6420.
      // AGENT_DEFAULT_WORKSPACE: a test's kanban tasks never make git worktrees of the
      // repository the suite runs in (test/kanban/worktrees.test.ts uses repositories of its own).
      env: {
        ...process.env,
        FORCE_COLOR: "0",
        NODE_ENV: "test",
        AGENT_GATEWAY_PORT: process.env.AGENT_GATEWAY_PORT ?? "0",
        AGENT_DEFAULT_WORKSPACE: process.env.AGENT_DEFAULT_WORKSPACE ?? "dir",
      },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so a timeout kills what the file started in it too.
      detached: true,
    });
    live.add(child.pid);
    let output = "";
    let timedOut = false;
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      timedOut = true;
      output += `\n[run-tests] ${name} timed out after ${timeoutMs / 1000} s (TEST_FILE_TIMEOUT_S)\n`;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      live.delete(child.pid);
      const text = strip(output);
      // uvu's summary: Total counts the tests that ran (a bare test.skip is not among them),
      // Passed those that did not throw, Skipped the bare test.skip calls.
      const total = Number(/Total:\s+(\d+)/.exec(text)?.[1] ?? Number.NaN);
      const ok = Number(/Passed:\s+(\d+)/.exec(text)?.[1] ?? Number.NaN);
      const bare = Number(/Skipped:\s+(\d+)/.exec(text)?.[1] ?? 0);
      // The marker of test/helpers/skip.ts (SKIP_MARKER): one line per skipped test.
      const marked = [...text.matchAll(/^\[test skipped\] (.*)$/gm)].map((m) => m[1]);
      let p = 0;
      let f = 0;
      let s = 0;
      if (Number.isFinite(total) && Number.isFinite(ok) && !timedOut) {
        // A test that reported itself skipped returned without failing, so uvu counted it passed.
        s = Math.min(marked.length, ok) + bare;
        p = ok - Math.min(marked.length, ok);
        f = total - ok;
        if (code !== 0 && f === 0) f = 1;
      } else {
        f = 1; // crashed or timed out before uvu could report
      }
      passed += p;
      failed += f;
      skipped += s;
      for (const reason of marked) skipReasons.push(`${name}: ${reason}`);
      if (bare > 0) skipReasons.push(`${name}: ${bare} test.skip without a reason (use test/helpers/skip.ts)`);
      const ms = Date.now() - t0;
      durations.push([name, ms]);
      const secs = (ms / 1000).toFixed(1);
      const skipNote = s ? `, ${s} skipped` : "";
      if (f > 0) {
        failures.push(name);
        process.stdout.write(`\n✘ ${name} (${p} passed${skipNote}, ${f} failed, ${secs} s)\n${text.trimEnd()}\n\n`);
      } else {
        process.stdout.write(`✔ ${name} (${p} passed${skipNote}, ${secs} s)\n`);
      }
      resolve();
    });
  });
}

/** The share of the last interval the cores spent idle (from /proc/stat; 0 where it cannot be read). */
function idleSampler() {
  const read = () => {
    try {
      const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
      return { idle: cpu[3] + (cpu[4] ?? 0), total: cpu.reduce((a, b) => a + b, 0) };
    } catch {
      return undefined;
    }
  };
  let last = read();
  return () => {
    const now = read();
    if (!now || !last || now.total === last.total) return 0;
    const share = (now.idle - last.idle) / (now.total - last.total);
    last = now;
    return share;
  };
}

// Starts the next file whenever fewer than the minimum run, or, below the maximum, when the
// cores were at least a third idle over the last half second and no file started in it.
const queue = [...ordered];
let running = 0;
let peak = 0;
const idle = idleSampler();
await new Promise((done) => {
  if (queue.length === 0) return done();
  let lastStart = 0;
  const launch = () => {
    const file = queue.shift();
    running++;
    peak = Math.max(peak, running);
    lastStart = Date.now();
    runFile(file).then(() => {
      running--;
      if (queue.length === 0 && running === 0) {
        clearInterval(timer);
        done();
      } else fill(0);
    });
  };
  const fill = (idleShare) => {
    while (queue.length && running < minConcurrency) launch();
    if (idleShare >= idleToStart && queue.length && running < maxConcurrency && Date.now() - lastStart >= 500) launch();
  };
  const timer = setInterval(() => fill(idle()), 500);
  fill(0);
});
const concurrency = minConcurrency === maxConcurrency ? `${minConcurrency}` : `${minConcurrency} to ${maxConcurrency} (at most ${peak})`;

const elapsed = (Date.now() - started) / 1000;
if (files.length > 0 && !process.env.TEST_DIR) writeTimes({ ...lastTimes, ...Object.fromEntries(durations.map(([n, ms]) => [n, Math.round(ms / 100) / 10])) });

const slowest = [...durations].sort((a, b) => b[1] - a[1]).slice(0, 15);
if (slowest.length > 1) {
  process.stdout.write(`\nslowest ${slowest.length} files:\n`);
  for (const [n, ms] of slowest) process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${n}\n`);
}
if (skipReasons.length) process.stdout.write(`\nskipped:\n${skipReasons.map((r) => `  ${r}`).join("\n")}\n`);
process.stdout.write(`\n${files.length} test files in ${elapsed.toFixed(1)} s with ${concurrency} at a time\n`);
// The budget is for the whole suite; a filtered run is not measured against it.
if (filters.length === 0 && files.length > 0)
  process.stdout.write(
    elapsed <= budgetS
      ? `within the ${budgetS} s budget (${((elapsed / budgetS) * 100).toFixed(0)} %)\n`
      : `OVER the ${budgetS} s budget by ${(elapsed - budgetS).toFixed(1)} s (README "Tests")\n`,
  );
if (failures.length) process.stdout.write(`failed files:\n${failures.map((f) => `  ${f}`).join("\n")}\n`);
if (files.length === 0) process.stdout.write("no test files matched\n");
process.stdout.write(`${passed} passed, ${skipped} skipped, ${failed} failed\n`);
process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;

#!/usr/bin/env node
// Runs every test/**/*.test.ts file with uvu through tsx, each in its own process (a few at a
// time), and ends with the line `N passed, N failed`. Exit code 1 on any failure.
// Usage: npm test [-- <path filter>...]   env TEST_CONCURRENCY (default 2), TEST_FILE_TIMEOUT_S (300)
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const filters = process.argv.slice(2);
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 2);
const timeoutMs = Number(process.env.TEST_FILE_TIMEOUT_S ?? 300) * 1000;

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

const files = findTests(join(root, "test")).filter((f) => filters.length === 0 || filters.some((x) => relative(root, f).includes(x.replace(/^\.\//, ""))));
const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
const started = Date.now();

function runFile(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, ["--import", "tsx", file], {
      cwd: root,
      // Daemons started by tests bind a free gateway port so parallel files never fight over 6420.
      env: { ...process.env, FORCE_COLOR: "0", NODE_ENV: "test", AGENT_GATEWAY_PORT: process.env.AGENT_GATEWAY_PORT ?? "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n[run-tests] ${relative(root, file)} timed out after ${timeoutMs / 1000} s\n`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      const text = strip(output);
      const total = Number(/Total:\s+(\d+)/.exec(text)?.[1] ?? NaN);
      const ok = Number(/Passed:\s+(\d+)/.exec(text)?.[1] ?? NaN);
      const skip = Number(/Skipped:\s+(\d+)/.exec(text)?.[1] ?? 0);
      let p = 0;
      let f = 0;
      if (Number.isFinite(total) && Number.isFinite(ok)) {
        p = ok;
        f = total - ok - skip;
        if (code !== 0 && f === 0) f = 1;
      } else {
        f = 1; // crashed before uvu could report
      }
      passed += p;
      failed += f;
      skipped += skip;
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      const name = relative(root, file);
      if (f > 0) {
        failures.push(name);
        process.stdout.write(`\n✘ ${name} (${p} passed, ${f} failed, ${secs} s)\n${text.trimEnd()}\n\n`);
      } else {
        process.stdout.write(`✔ ${name} (${p} passed, ${secs} s)\n`);
      }
      resolve();
    });
  });
}

const queue = [...files];
await Promise.all(
  Array.from({ length: Math.max(1, concurrency) }, async () => {
    while (queue.length) await runFile(queue.shift());
  }),
);

process.stdout.write(`\n${files.length} test files in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
if (failures.length) process.stdout.write(`failed files:\n${failures.map((f) => `  ${f}`).join("\n")}\n`);
if (files.length === 0) process.stdout.write("no test files matched\n");
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;

#!/usr/bin/env node
// Benchmark: the cost of the boundary a user actor's call crosses, for the two ways of isolating
// user code: a worker thread (postMessage, structured clone) and a child process (IPC channel,
// JSON over a pipe). Each side answers an action-sized message; prints sequential round-trip
// p50/p99, throughput with 64 calls in flight, start-up time and the RSS each adds.
// Usage: node scripts/bench/runner-boundary.mjs [--calls 20000]
import { fork } from "node:child_process";
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

const args = process.argv.slice(2);
const i = args.indexOf("--calls");
const CALLS = i >= 0 ? Number(args[i + 1]) : 20_000;
const dir = mkdtempSync(join(tmpdir(), "rb-"));
const msg = { t: "call", id: 0, a: "3kq0z8xyf1m2wq", op: "action", p: { name: "increment", args: [1] } };
writeFileSync(
  join(dir, "w.mjs"),
  `import { parentPort } from "node:worker_threads";
let n = 0; parentPort.on("message", (m) => parentPort.postMessage({ t: "done", id: m.id, ok: true, v: ++n, s: '{"count":' + n + '}' }));`,
);
writeFileSync(
  join(dir, "c.mjs"),
  `let n = 0; process.on("message", (m) => process.send({ t: "done", id: m.id, ok: true, v: ++n, s: '{"count":' + n + '}' }));`,
);

function endpoint(kind) {
  const started = performance.now();
  const rssBefore = process.memoryUsage().rss;
  const w = kind === "worker" ? new Worker(join(dir, "w.mjs")) : fork(join(dir, "c.mjs"), { stdio: ["ignore", "ignore", "ignore", "ipc"] });
  const pending = new Map();
  w.on("message", (m) => {
    pending.get(m.id)?.();
    pending.delete(m.id);
  });
  let seq = 0;
  const send = kind === "worker" ? (m) => w.postMessage(m) : (m) => w.send(m);
  const call = () =>
    new Promise((resolve) => {
      const id = ++seq;
      pending.set(id, resolve);
      send({ ...msg, id });
    });
  return { call, started, rssBefore, kill: () => (kind === "worker" ? w.terminate() : w.kill()) };
}

for (const kind of ["worker", "child process"]) {
  const e = endpoint(kind === "worker" ? "worker" : "child");
  await e.call();
  const startMs = performance.now() - e.started;
  const rss = (process.memoryUsage().rss - e.rssBefore) / 1e6;
  for (let n = 0; n < 2000; n++) await e.call();
  const xs = [];
  for (let n = 0; n < CALLS; n++) {
    const s = performance.now();
    await e.call();
    xs.push(performance.now() - s);
  }
  xs.sort((a, b) => a - b);
  const t0 = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (done < CALLS) {
        done++;
        await e.call();
      }
    }),
  );
  const rate = CALLS / ((performance.now() - t0) / 1000);
  console.log(
    `${kind.padEnd(14)} round trip p50 ${(xs[xs.length >> 1] * 1000).toFixed(0)} µs p99 ${(xs[Math.floor(xs.length * 0.99)] * 1000).toFixed(0)} µs; 64 in flight ${rate.toFixed(0)} calls/s; first answer after ${startMs.toFixed(0)} ms; RSS in this process +${rss.toFixed(0)} MB`,
  );
  await e.kill();
}
rmSync(dir, { recursive: true, force: true });

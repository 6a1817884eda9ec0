#!/usr/bin/env node
// Benchmark: the cost of the boundary a user actor's call crosses, for the two ways of isolating
// user code: a worker thread (postMessage, structured clone) and a child process (IPC channel,
// JSON over a pipe). Each side answers an action-sized message; prints sequential round-trip
// p50/p99, throughput with 64 calls in flight, start-up time and the RSS each adds.
//
// Then (after `npm run build`) the whole runtime in this process, without HTTP: a counter
// actor's action with 1 and with 64 calls in flight, its code behind the runner boundary
// (a worker thread, as the daemon runs user actors) and in this thread (AGENT_ACTORS_RUNNER=inline),
// each in a child process of its own: actions/s and CPU (all threads) per action. With one call
// in flight every action pays a whole round trip to the worker; with 64 the round trip is shared.
// Usage: node scripts/bench/runner-boundary.mjs [--calls 20000] [--seconds 3]
import { execFileSync, fork } from "node:child_process";
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

const args = process.argv.slice(2);
const i = args.indexOf("--calls");
const CALLS = i >= 0 ? Number(args[i + 1]) : 20_000;
const si = args.indexOf("--seconds");
const SECONDS = si >= 0 ? Number(args[si + 1]) : 3;
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

// ---------- the runtime, runner vs inline ----------

const RUNTIME = fileURLToPath(new URL("../../dist/daemon/actors", import.meta.url));
writeFileSync(join(dir, "counter.mjs"), "export const counter = { state: { count: 0 }, actions: { increment: (c, n = 1) => (c.state.count += n) } };");
writeFileSync(
  join(dir, "runtime.mjs"),
  `import { join } from "node:path";
import { pathToFileURL } from "node:url";
const [mode, concurrency, seconds, dataDir, mod] = process.argv.slice(2);
const { ActorRuntimeImpl } = await import(${JSON.stringify(pathToFileURL(join(RUNTIME, "runtime", "runtime.js")).href)});
const { UserRunner } = await import(${JSON.stringify(pathToFileURL(join(RUNTIME, "runner", "user-runner.js")).href)});
const rt = new ActorRuntimeImpl({ dataDir });
let runner = null;
if (mode === "runner") {
  runner = new UserRunner();
  runner.bind(rt.runnerHost());
  rt.registerDefinition("counter", (await runner.load(mod, pathToFileURL(mod).href)).counter, "user");
} else rt.registerDefinition("counter", (await import(pathToFileURL(mod).href)).counter, "user");
await rt.start();
const { actor_id: id } = await rt.create({ namespace: "default", name: "counter", key: "k", runner_name_selector: "default", crash_policy: "sleep" });
const run = async (s) => {
  const end = performance.now() + s * 1000;
  let n = 0;
  await Promise.all(Array.from({ length: Number(concurrency) }, async () => {
    while (performance.now() < end) { await rt.action(id, "increment", [1], { source: "gateway" }); n++; }
  }));
  return n;
};
await run(1);
const cpu = process.cpuUsage();
const t0 = performance.now();
const n = await run(Number(seconds));
const used = process.cpuUsage(cpu);
console.log(JSON.stringify({ rate: n / ((performance.now() - t0) / 1000), cpuUs: (used.user + used.system) / n }));
await rt.stop();
await runner?.stop();
process.exit(0);`,
);
for (const concurrency of [1, 64]) {
  const row = [];
  for (const mode of ["runner", "inline"]) {
    const data = join(dir, `data-${mode}-${concurrency}`);
    const out = execFileSync(process.execPath, [join(dir, "runtime.mjs"), mode, String(concurrency), String(SECONDS), data, join(dir, "counter.mjs")], {
      encoding: "utf8",
    });
    const r = JSON.parse(out.trim().split("\n").pop());
    row.push(`${mode} ${r.rate.toFixed(0)} actions/s, ${r.cpuUs.toFixed(1)} µs CPU/action`);
  }
  console.log(`runtime, ${String(concurrency).padStart(2)} in flight: ${row.join("; ")}`);
}
rmSync(dir, { recursive: true, force: true });

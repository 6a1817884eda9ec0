#!/usr/bin/env node
// Benchmark: a counter actor's `increment` action over HTTP with 64 concurrent keep-alive
// clients, against (a) a bare node:http server answering a fixed JSON body, (b) RivetKit
// 2.2.1's own local server hosting the same counter, (c) this project's daemon. Prints
// requests/s and p99 latency per target and the ratios.
//
// (d) is our gateway alone in this process's child over an in-memory counter (no disk): it
// separates the HTTP layer's cost from the runtime's durable write per action.
//
// (e) is (c) with `storage.durability: power` (every acknowledged write fsynced first), measured
// in the same rounds. `--durability power` (or AGENT_STORAGE_DURABILITY=power in the
// environment) runs (c) itself in that mode.
//
// (c) runs the counter as a user actor, so its code runs behind the runner boundary (a worker
// thread); (f) is the same daemon with AGENT_ACTORS_RUNNER=inline (the user code in the daemon's
// own thread), to show what the boundary costs.
//
// (g) is connections, on a daemon of its own: events/s delivered to 64 connected clients
// (WebSocket, json, each subscribed to the event one actor broadcasts), and the latency of one
// action over a connection against the same action over HTTP (one client, sequential calls).
//
// Usage (after `npm run build`): node scripts/bench/gateway.mjs [--seconds 5] [--concurrency 64] [--only a,b,c,d,e,f,g] [--durability process|power] [--rounds 3] [--cpu-prof DIR] [--setup-rivetkit]
// RivetKit's local driver needs SQLite (node:sqlite is Node 22+; on Node 20 it loads
// better-sqlite3, not a dependency of this project): if it is missing, (b) is skipped with the
// reason. `--setup-rivetkit` installs better-sqlite3 (pinned, from the npm registry only,
// compiled against the local node headers) into <tmpdir>/agent-bench-sqlite once and puts it
// on NODE_PATH; or set NODE_PATH yourself. It never changes the project's files.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist", "cli", "main.js");
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const SECONDS = Number(opt("seconds", 5));
const WARMUP_SECONDS = Number(opt("warmup", 1));
const CONCURRENCY = Number(opt("concurrency", 64));
const MAX_REQUESTS = Number(opt("max-requests", 2_000_000));
const ONLY = new Set(String(opt("only", "a,b,c,d,f,g")).split(","));
const DURABILITY = String(opt("durability", process.env.AGENT_STORAGE_DURABILITY || "process"));
// `--cpu-prof DIR`: the daemons run with --cpu-prof, their profiles (and their runner workers') go to DIR.
const CPU_PROF = opt("cpu-prof", "");
const SQLITE_PREFIX = join(tmpdir(), "agent-bench-sqlite");
const SQLITE_VERSION = "12.11.1";
if (args.includes("--setup-rivetkit")) {
  const { existsSync } = await import("node:fs");
  if (!existsSync(join(SQLITE_PREFIX, "node_modules", "better-sqlite3"))) {
    console.log(`installing better-sqlite3 into ${SQLITE_PREFIX} (one time, builds from source)...`);
    const { execFileSync } = await import("node:child_process");
    mkdirSync(SQLITE_PREFIX, { recursive: true });
    // Only the npm registry: build_from_source stops prebuild-install from fetching a binary
    // from GitHub, and node-gyp compiles against this node's own headers (nodedir), so it
    // downloads no headers either. Pinned, into a temp prefix: the project is not touched.
    const nodedir = join(process.execPath, "..", "..");
    execFileSync(
      "npm",
      ["install", "--no-save", "--no-audit", "--no-fund", "--no-package-lock", "--prefix", SQLITE_PREFIX, `better-sqlite3@${SQLITE_VERSION}`],
      // Passed to the install script (prebuild-install, node-gyp) as npm_config_* variables.
      { stdio: "inherit", cwd: SQLITE_PREFIX, env: { ...process.env, npm_config_build_from_source: "true", npm_config_nodedir: nodedir } },
    );
  }
  process.env.NODE_PATH = [join(SQLITE_PREFIX, "node_modules"), process.env.NODE_PATH].filter(Boolean).join(":");
}

const COUNTER_MODULE = `export const counter = {
  state: { count: 0 },
  actions: {
    increment: (c, n = 1) => (c.state.count += n),
    get: (c) => c.state.count,
    fire: (c, n) => {
      for (let i = 0; i < n; i++) c.broadcast("tick", i);
      return n;
    },
  },
};
`;

// ---------- load generator ----------

/** Runs `concurrency` keep-alive clients for `seconds` (or `maxRequests`), loopback only. */
async function load({ port, path, body, headers, seconds, concurrency = CONCURRENCY, maxRequests = MAX_REQUESTS }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const payload = Buffer.from(body);
  const reqHeaders = { "content-type": "application/json", "content-length": payload.length, ...headers };
  const latencies = [];
  let ok = 0;
  let failed = 0;
  let sent = 0;
  const deadline = performance.now() + seconds * 1000;
  const one = () =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const req = http.request({ host: "127.0.0.1", port, path, method: "POST", agent, headers: reqHeaders }, (res) => {
        res.on("data", () => {});
        res.on("end", () => {
          latencies.push(performance.now() - t0);
          if (res.statusCode === 200) ok++;
          else failed++;
          resolve();
        });
      });
      req.on("error", () => {
        failed++;
        resolve();
      });
      req.end(payload);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline && sent < maxRequests) {
        sent++;
        await one();
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((x, y) => x - y);
  const pct = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] : NaN);
  return { rps: ok / elapsed, ok, failed, p50: pct(0.5), p99: pct(0.99), elapsed };
}

/** CPU time (user + system, all threads) a process has used so far, in ms; NaN when unknown (not Linux). */
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}
const CLK_TCK = 100;

async function measure(target) {
  await load({ ...target, seconds: WARMUP_SECONDS });
  const before = target.pid ? cpuMs(target.pid) : Number.NaN;
  const r = await load({ ...target, seconds: SECONDS });
  // The server's CPU per answered request: unlike req/s, it hardly moves with the machine's load.
  r.cpuUs = ((cpuMs(target.pid) - before) * 1000) / Math.max(1, r.ok);
  return r;
}

// ---------- helpers ----------

function waitForLine(child, pattern, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output:\n${out.slice(-2000)}`)), timeoutMs);
    const onData = (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}; output:\n${out.slice(-2000)}`));
    });
  });
}

async function json(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  if (!r.ok) throw new Error(`${init?.method ?? "GET"} ${url}: ${r.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/** The request every target is measured with: one `increment` action on the counter actor `id`. */
function incrementRequest(id) {
  return { path: `/gateway/${id}/action/increment`, body: '{"args":[1]}', headers: { "x-rivet-encoding": "json" } };
}

async function createCounter(base) {
  const { actor } = await json(`${base}/actors`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "counter", key: "bench", runner_name_selector: "default", crash_policy: "sleep" }),
  });
  // One call through to be sure the actor is awake and answers.
  await json(`${base}/gateway/${actor.actor_id}/action/increment`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[1]}' });
  return actor.actor_id;
}

// ---------- targets ----------

async function bareTarget() {
  const code = `const http = require("node:http");
const body = Buffer.from(JSON.stringify({ output: 1 }));
const s = http.createServer({ keepAlive: true }, (req, res) => {
  req.on("data", () => {});
  req.on("end", () => { res.writeHead(200, { "content-type": "application/json", "content-length": body.length }); res.end(body); });
});
s.keepAliveTimeout = 65000;
s.listen(0, "127.0.0.1", () => console.log("PORT " + s.address().port));`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "pipe"] });
  const [, port] = await waitForLine(child, /PORT (\d+)/);
  return { name: "bare node:http", pid: child.pid, port: Number(port), path: "/", body: '{"args":[1]}', stop: async () => child.kill("SIGKILL") };
}

async function rivetkitTarget() {
  const storage = mkdtempSync(join(tmpdir(), "rk-bench-"));
  const code = `import { setup, actor } from "rivetkit";
import { createServer } from "node:net";
const counter = actor({ state: { count: 0 }, actions: { increment: (c, n = 1) => (c.state.count += n), get: (c) => c.state.count } });
const port = await new Promise((resolve) => { const s = createServer(); s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); }); });
const registry = setup({ use: { counter }, managerPort: port, storagePath: ${JSON.stringify(storage)}, noWelcome: true, logging: { level: "error" } });
process.on("unhandledRejection", (e) => { console.error("FAILED " + (e?.stack ?? e)); process.exit(1); });
registry.start();
for (let i = 0; i < 300; i++) {
  try { const r = await fetch("http://127.0.0.1:" + port + "/metadata"); if (r.ok) break; } catch {}
  await new Promise((r) => setTimeout(r, 100));
}
console.log("PORT " + port);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_ENV: "production", RIVET_LOG_LEVEL: "error" },
  });
  const stop = async () => {
    child.kill("SIGKILL");
    rmSync(storage, { recursive: true, force: true });
  };
  try {
    const [, port] = await waitForLine(child, /PORT (\d+)/, 60_000);
    const base = `http://127.0.0.1:${port}`;
    const id = await createCounter(base);
    return {
      name: "RivetKit 2.2.1 local server",
      pid: child.pid,
      port: Number(port),
      ...incrementRequest(id),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function cli(cliArgs, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...cliArgs], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`agent ${cliArgs.join(" ")} exited ${code}: ${err}`))));
  });
}

/** The daemon under --cpu-prof (not allowed in NODE_OPTIONS): started here, ready over IPC as `agent daemon start` does. */
async function startProfiled(env) {
  const child = spawn(process.execPath, ["--cpu-prof", "--cpu-prof-dir", CPU_PROF, join(ROOT, "dist", "daemon", "main.js")], {
    detached: true,
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    env: { ...process.env, ...env },
  });
  await new Promise((resolve, reject) => {
    child.once("message", (m) => (m?.type === "ready" ? resolve() : reject(new Error(JSON.stringify(m)))));
    child.once("exit", (code) => reject(new Error(`the profiled daemon exited with ${code}`)));
  });
  child.disconnect();
  child.unref();
}

async function daemonTarget(durability = DURABILITY, extraEnv = {}) {
  const home = mkdtempSync(join(tmpdir(), "ab-"));
  mkdirSync(join(home, "actors"), { recursive: true });
  writeFileSync(join(home, "actors", "counter.mjs"), COUNTER_MODULE);
  const env = { AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", AGENT_LOG_LEVEL: "warn", AGENT_STORAGE_DURABILITY: durability, ...extraEnv };
  const stop = async () => {
    await cli(["daemon", "stop"], env).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    if (CPU_PROF) await startProfiled(env);
    else await cli(["daemon", "start", "--json"], env);
    const status = JSON.parse(await cli(["daemon", "status", "--json"], env));
    const base = status.gateway_url;
    let id;
    for (let i = 0; ; i++) {
      try {
        id = await createCounter(base);
        break;
      } catch (error) {
        if (i > 50) throw error; // the user module may still be loading
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const port = Number(new URL(base).port);
    return {
      name: extraEnv.AGENT_ACTORS_RUNNER === "inline" ? "agent daemon, user code in-process" : `agent daemon (durability ${durability})`,
      port,
      base,
      id,
      pid: status.pid,
      ...incrementRequest(id),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function gatewayOnlyTarget() {
  const code = `import { GatewayServer } from ${JSON.stringify(join(ROOT, "dist", "daemon", "gateway", "server.js"))};
const state = { count: 0 };
const record = { actor_id: "mem1", name: "counter", key: "bench", namespace_id: "default", runner_name_selector: "default", crash_policy: "sleep", create_ts: Date.now(), connectable_ts: Date.now(), destroy_ts: null, sleep_ts: null, start_ts: Date.now(), error: null };
const runtime = {
  definitionNames: () => ["counter"], hasDefinition: (n) => n === "counter",
  get: (id) => (id === "mem1" ? record : undefined),
  action: async (id, name, args) => (state.count += args[0] ?? 1),
};
const log = { debug() {}, info() {}, warn() {}, error: (m, f) => console.error(m, f), component() { return log; } };
const s = new GatewayServer({ settings: { host: "127.0.0.1", port: 0, maxBodyBytes: 1 << 20, inspector: { token: "", production: false } }, runtime: () => runtime, log });
const url = await s.start();
console.log("PORT " + new URL(url).port);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const [, port] = await waitForLine(child, /PORT (\d+)/);
  return {
    name: "our gateway, in-memory actor",
    pid: child.pid,
    port: Number(port),
    ...incrementRequest("mem1"),
    stop: async () => child.kill("SIGKILL"),
  };
}

// ---------- connections (g) ----------

/** A json connection (raw `ws`, the RivetKit wire protocol) that resolves once Init arrived. */
async function openConn(base, id, onMessage) {
  const { WebSocket } = await import("ws");
  const ws = new WebSocket(`${base.replace("http", "ws")}/gateway/${id}/connect`, ["rivet", "rivet_encoding.json"]);
  await new Promise((resolve, reject) => {
    ws.once("message", resolve);
    ws.once("error", reject);
  });
  ws.on("message", onMessage);
  return ws;
}

async function connectionFigures() {
  const target = await daemonTarget();
  const clients = [];
  try {
    // Events/s: 64 subscribed connections, one actor broadcasting batches of events.
    let received = 0;
    for (let i = 0; i < CONCURRENCY; i++) {
      const ws = await openConn(target.base, target.id, () => received++);
      ws.send(JSON.stringify({ body: { tag: "SubscriptionRequest", val: { eventName: "tick", subscribe: true } } }));
      clients.push(ws);
    }
    const fire = (n) =>
      json(`${target.base}/gateway/${target.id}/action/fire`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ args: [n] }),
      });
    await fire(10);
    const BATCH = 200;
    const deadline = performance.now() + SECONDS * 1000;
    received = 0;
    let sent = 0;
    const t0 = performance.now();
    while (performance.now() < deadline) {
      await fire(BATCH);
      sent += BATCH * clients.length;
      // Keep at most two batches in flight to the clients.
      while (received < sent - 2 * BATCH * clients.length) await new Promise((r) => setImmediate(r));
    }
    while (received < sent && performance.now() < deadline + 10_000) await new Promise((r) => setTimeout(r, 5));
    const events = received / ((performance.now() - t0) / 1000);
    // Latency: the same action over HTTP and over one connection, sequentially.
    const N = 2000;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const port = Number(new URL(target.base).port);
    const httpOnce = () =>
      new Promise((resolve, reject) => {
        const body = '{"args":[1]}';
        const req = http.request(
          {
            host: "127.0.0.1",
            port,
            path: `/gateway/${target.id}/action/increment`,
            method: "POST",
            agent,
            headers: { "content-type": "application/json", "content-length": body.length },
          },
          (res) => {
            res.on("data", () => {});
            res.on("end", resolve);
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    let waiting = null;
    const conn = await openConn(target.base, target.id, () => waiting?.());
    let seq = 0;
    const connOnce = () =>
      new Promise((resolve) => {
        waiting = resolve;
        conn.send(JSON.stringify({ body: { tag: "ActionRequest", val: { id: ["$BigInt", String(++seq)], name: "increment", args: [1] } } }));
      });
    const timeIt = async (fn) => {
      for (let i = 0; i < 200; i++) await fn();
      const xs = [];
      for (let i = 0; i < N; i++) {
        const s = performance.now();
        await fn();
        xs.push(performance.now() - s);
      }
      xs.sort((x, y) => x - y);
      return { p50: xs[Math.floor(N / 2)], p99: xs[Math.floor(N * 0.99)] };
    };
    const overHttp = await timeIt(httpOnce);
    const overConn = await timeIt(connOnce);
    conn.close();
    agent.destroy();
    return { events, overHttp, overConn };
  } finally {
    for (const ws of clients) ws.close();
    await target.stop();
  }
}

// ---------- main ----------

const ROUNDS = Number(opt("rounds", 3));
const fmt = (r) =>
  `${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   cpu ${r.cpuUs.toFixed(0).padStart(4)} µs/req   (${r.ok} ok, ${r.failed} failed)`;
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const results = {};
const targets = [
  ["a", bareTarget],
  ["b", rivetkitTarget],
  ["c", daemonTarget],
  ["d", gatewayOnlyTarget],
  ["e", () => daemonTarget("power")],
  ["f", () => daemonTarget(DURABILITY, { AGENT_ACTORS_RUNNER: "inline" })],
];
console.log(
  `gateway benchmark: ${CONCURRENCY} keep-alive clients, ${SECONDS} s per target and round after ${WARMUP_SECONDS} s warm-up, ${ROUNDS} interleaved rounds (medians), node ${process.version}`,
);
// All targets run side by side (idle ones cost nothing) and are measured in turn, round after
// round, so a burst of load from elsewhere on the machine does not favour one of them.
const running = [];
try {
  for (const [letter, make] of targets) {
    if (!ONLY.has(letter)) continue;
    try {
      running.push([letter, await make()]);
    } catch (error) {
      console.log(
        `(${letter}) skipped: ${String(error?.message ?? error)
          .split("\n")
          .slice(0, 3)
          .join(" | ")}`,
      );
    }
  }
  const rounds = new Map(running.map(([letter]) => [letter, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [letter, target] of running) {
      const r = await measure(target);
      rounds.get(letter).push(r);
      if (process.env.BENCH_VERBOSE) console.log(`  round ${round + 1} (${letter}) ${fmt(r)}`);
    }
  }
  for (const [letter, target] of running) {
    const rs = rounds.get(letter);
    const r = {
      rps: median(rs.map((x) => x.rps)),
      p50: median(rs.map((x) => x.p50)),
      p99: median(rs.map((x) => x.p99)),
      cpuUs: median(rs.map((x) => x.cpuUs)),
      ok: rs.reduce((n, x) => n + x.ok, 0),
      failed: rs.reduce((n, x) => n + x.failed, 0),
    };
    results[letter] = r;
    console.log(`(${letter}) ${target.name.padEnd(36)} ${fmt(r)}`);
  }
} finally {
  for (const [, target] of running) await target.stop().catch(() => undefined);
}
if (results.a && results.c) {
  const x = results.c.rps / results.a.rps;
  console.log(
    `ours / bare     = ${x.toFixed(2)}x  (a user actor behind the runner boundary; target >= 0.6x) ${x >= 0.6 ? "OK" : "BELOW TARGET"}, p99 ${(results.c.p99 / results.a.p99).toFixed(2)}x, bare / ours in server CPU per request ${(results.a.cpuUs / results.c.cpuUs).toFixed(2)}x`,
  );
}
if (results.a && results.f) console.log(`in-process / bare = ${(results.f.rps / results.a.rps).toFixed(2)}x  (the same user actor without the runner)`);
if (results.c && results.f)
  console.log(
    `runner / in-process = ${(results.c.rps / results.f.rps).toFixed(2)}x req/s, p99 ${(results.c.p99 / results.f.p99).toFixed(2)}x, CPU per request ${(results.c.cpuUs / results.f.cpuUs).toFixed(2)}x`,
  );
if (results.a && results.e) {
  console.log(
    `power / bare    = ${(results.e.rps / results.a.rps).toFixed(2)}x req/s, p99 ${(results.e.p99 / results.a.p99).toFixed(2)}x  (every acknowledged write fsynced)`,
  );
}
if (results.c && results.e)
  console.log(`power / (c)     = ${(results.e.rps / results.c.rps).toFixed(2)}x req/s, p99 ${(results.e.p99 / results.c.p99).toFixed(2)}x`);
if (results.a && results.d) {
  console.log(`gateway alone / bare = ${(results.d.rps / results.a.rps).toFixed(2)}x  (the HTTP layer alone; (c) below (d) is the durable write per action)`);
}
if (results.b && results.c) {
  const x = results.c.rps / results.b.rps;
  console.log(`ours / RivetKit = ${x.toFixed(2)}x  (target >= 1.5x) ${x >= 1.5 ? "OK" : "BELOW TARGET"}`);
}
if (ONLY.has("g")) {
  const g = await connectionFigures();
  console.log(`(g) events delivered to ${CONCURRENCY} connected clients: ${g.events.toFixed(0)} events/s`);
  console.log(
    `(g) one action, sequential: HTTP p50 ${g.overHttp.p50.toFixed(3)} ms p99 ${g.overHttp.p99.toFixed(3)} ms; connection p50 ${g.overConn.p50.toFixed(3)} ms p99 ${g.overConn.p99.toFixed(3)} ms; added by the connection: p50 ${(g.overConn.p50 - g.overHttp.p50).toFixed(3)} ms`,
  );
}

#!/usr/bin/env node
// Benchmark: the local proxy (docs/proxy.md) against calling its upstream directly, in the same
// run. The upstream is a minimal OpenAI-compatible server in its own process; the proxy runs in
// a real daemon on a temp home (`agent proxy start`, API-key provider); the client is this
// process over keep-alive sockets. Direct and proxied requests alternate, so load hits both.
//
//   added latency   p50 of a non-streamed chat completion via the proxy minus direct (target < 1 ms)
//   throughput      MB/s of a large SSE stream (16 KiB events) via the proxy / direct (target ≥ 0.9x)
//   event rate      events/s of a model-like stream via the proxy / direct (target ≥ 0.9x): OpenAI
//                   `chat.completion.chunk` events of about 270 bytes, each its own `res.write` and
//                   its own send, unpaced (as fast as the upstream makes them; once the socket is
//                   full, what waits goes out together, as for a real server)
//   TTFB            p50 time to the first body byte of a stream, via the proxy minus direct (target ≤ 2 ms)
//   CPU per GB      CPU seconds (user+sys, /proc) the daemon spends per GB it relays, the upstream per
//                   GB it sends and this process per GB it reads directly: what the stream costs each
//                   process, which decides the throughput when the three share fewer cores than they
//                   need (and does not depend on the load the way MB/s does)
//   CPU per million events   the same for the model-like stream, with the caller's CPU reading via the proxy
//                   and the HTTP chunks it parsed per stream (via the proxy and direct)
//
// Usage (after `npm run build`): node scripts/bench/proxy.mjs [--requests 2000] [--stream-mb 64] [--rounds 5] [--ttfb 300] [--events 100000]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { agentCli } from "./lib/daemon-client.mjs";
import { median } from "./lib/measure.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const REQUESTS = opt("requests", 2000);
const STREAM_MB = opt("stream-mb", 64);
const ROUNDS = opt("rounds", 5);
const TTFB_RUNS = opt("ttfb", 300);
const EVENTS = opt("events", 100_000);

// The upstream: small JSON for a plain completion; for a stream, `bytes` of SSE in 16 KiB events,
// or `events` model-like chunks (each written on its own, as a model server does per token).
const UPSTREAM = `
const http = require("node:http");
const reply = JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] });
const event = "data: " + JSON.stringify({ choices: [{ index: 0, delta: { content: "x".repeat(16300) } }] }) + "\\n\\n";
const words = [" the", " proxy", " relays", " each", " token", " as", " it", " comes,", " one", " small", " event", " at", " a", " time", " over", " loopback"];
const chunks = words.map((w, i) => "data: " + JSON.stringify({ id: "chatcmpl-9x2bQ7hK3mVn8pLr4tYw6sZc1dFe", object: "chat.completion.chunk", created: 1764300000, model: "gpt-4o-mini-2024-07-18", system_fingerprint: "fp_0aa8d3e20b", choices: [{ index: 0, delta: { content: i % 4 ? w : w.repeat(1 + (i % 3)) }, logprobs: null, finish_reason: null }] }) + "\\n\\n");
http.createServer({ noDelay: true }, (req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    const p = JSON.parse(body || "{}");
    if (!p.stream) { res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(reply) }); res.end(reply); return; }
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (p.events) {
      let i = 0;
      // node:http corks a response's socket for the rest of the tick on its first write; each
      // event is sent on its own (one send per event, as a model server's per-token writes are).
      const pump = () => { while (i < p.events) { const more = res.write(chunks[i++ % chunks.length]); res.socket?.uncork(); if (!more) return res.once("drain", pump); } res.end("data: [DONE]\\n\\n"); };
      return pump();
    }
    let left = p.bytes || event.length;
    const pump = () => { while (left > 0) { left -= event.length; if (!res.write(event)) return res.once("drain", pump); } res.end("data: [DONE]\\n\\n"); };
    pump();
  });
}).listen(0, "127.0.0.1", function () { console.log(this.address().port); });
`;

const upstream = spawn(process.execPath, ["-e", UPSTREAM], { stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise((resolve, reject) => {
  upstream.stdout.once("data", (d) => resolve(Number(String(d).trim())));
  upstream.once("exit", (c) => reject(new Error(`upstream exited ${c}`)));
});
const direct = `http://127.0.0.1:${port}/v1`;

const home = mkdtempSync(join(tmpdir(), "pxb-"));
writeFileSync(
  join(home, "config.yaml"),
  `_config_version: 13\nmodel:\n  provider: up\nproviders:\n  up:\n    base_url: ${direct}\n    model: m\n    api_key_env: UP_KEY\nlogs:\n  level: warn\n`,
);
writeFileSync(join(home, ".env"), "UP_KEY=sk-bench\n", { mode: 0o600 });

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
/** POST `body` to `<base>/chat/completions`; resolves { ttfb, total, bytes } in ms. */
function call(base, body) {
  const url = new URL(`${base}/chat/completions`);
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": payload.length, authorization: "Bearer caller" },
      },
      (res) => {
        let ttfb = null;
        let bytes = 0;
        let chunks = 0;
        res.on("data", (d) => {
          ttfb ??= performance.now() - t0;
          bytes += d.length;
          chunks++;
        });
        res.on("end", () =>
          res.statusCode === 200 ? resolve({ ttfb, total: performance.now() - t0, bytes, chunks }) : reject(new Error(`HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** CPU seconds (user+sys) of `pid` so far, from /proc (null where there is none). */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const results = [];
const report = (figure, value, target, ok) => {
  results.push({ figure, value, target, ok });
  console.log(`${ok ? "✓" : "✗"} ${figure}: ${value}  (target ${target})`);
};

try {
  const daemonPid = JSON.parse(await agentCli(home, ["daemon", "start", "--json"])).pid;
  const status = JSON.parse(await agentCli(home, ["proxy", "start", "--port", "0", "--json"]));
  const proxy = status.url;
  console.log(`proxy ${proxy} -> ${direct}; load average ${loadavg()[0].toFixed(2)}`);

  const small = { model: "m", messages: [{ role: "user", content: "hello" }] };
  // Warm-up: connections, JIT, and the daemon's own start-up work (features' ready hooks) done.
  for (let i = 0; i < 500; i++) {
    await call(direct, small);
    await call(proxy, small);
  }
  const d = [];
  const p = [];
  for (let i = 0; i < REQUESTS; i++) {
    d.push((await call(direct, small)).total);
    p.push((await call(proxy, small)).total);
  }
  const added = median(p) - median(d);
  report(
    "added latency p50 (non-streamed)",
    `${added.toFixed(3)} ms (direct ${median(d).toFixed(3)} ms, proxy ${median(p).toFixed(3)} ms, ${(median(p) / median(d)).toFixed(2)}x)`,
    "< 1 ms",
    added < 1,
  );

  const bulk = { ...small, stream: true, bytes: STREAM_MB * 1024 * 1024 };
  const rate = (r) => r.bytes / 1024 / 1024 / (r.total / 1000);
  const dRates = [];
  const pRates = [];
  const cpu = { daemon: 0, upstream: 0, directClient: 0 };
  for (let i = 0; i < ROUNDS; i++) {
    const u0 = cpuSeconds(upstream.pid);
    const c0 = ownCpu();
    dRates.push(rate(await call(direct, bulk)));
    cpu.directClient += ownCpu() - c0;
    const u1 = cpuSeconds(upstream.pid);
    const d0 = cpuSeconds(daemonPid);
    pRates.push(rate(await call(proxy, bulk)));
    cpu.daemon += cpuSeconds(daemonPid) - d0;
    cpu.upstream += u1 - u0;
  }
  const ratio = median(pRates) / median(dRates);
  report(
    "streamed throughput",
    `${ratio.toFixed(2)}x direct (direct ${median(dRates).toFixed(0)} MB/s, proxy ${median(pRates).toFixed(0)} MB/s)`,
    "≥ 0.9x",
    ratio >= 0.9,
  );

  if (cpuSeconds(daemonPid) !== null) {
    const gb = (ROUNDS * STREAM_MB) / 1024;
    const perGb = (x) => x / gb;
    console.log(
      `  CPU per streamed GB: daemon (relaying) ${perGb(cpu.daemon).toFixed(2)} s, ${(cpu.daemon / cpu.directClient).toFixed(2)}x the caller reading directly ` +
        `(${perGb(cpu.directClient).toFixed(2)} s; the upstream sending: ${perGb(cpu.upstream).toFixed(2)} s)`,
    );
  }

  // Model-like events: many small writes, where the per-write and per-read costs decide.
  const evented = { ...small, stream: true, events: EVENTS };
  const dEvents = [];
  const pEvents = [];
  const ecpu = { daemon: 0, upstream: 0, directClient: 0, proxyClient: 0 };
  const chunks = { direct: [], proxy: [] };
  await call(direct, evented);
  await call(proxy, evented);
  for (let i = 0; i < ROUNDS; i++) {
    const u0 = cpuSeconds(upstream.pid);
    const c0 = ownCpu();
    const dr = await call(direct, evented);
    ecpu.directClient += ownCpu() - c0;
    const u1 = cpuSeconds(upstream.pid);
    const d0 = cpuSeconds(daemonPid);
    const c1 = ownCpu();
    const pr = await call(proxy, evented);
    ecpu.proxyClient += ownCpu() - c1;
    ecpu.daemon += cpuSeconds(daemonPid) - d0;
    chunks.direct.push(dr.chunks);
    chunks.proxy.push(pr.chunks);
    ecpu.upstream += u1 - u0;
    if (pr.bytes !== dr.bytes) throw new Error(`the proxied event stream had ${pr.bytes} bytes, the direct one ${dr.bytes}`);
    dEvents.push(EVENTS / (dr.total / 1000));
    pEvents.push(EVENTS / (pr.total / 1000));
  }
  const eRatio = median(pEvents) / median(dEvents);
  report(
    "streamed event rate (model-like chunks)",
    `${eRatio.toFixed(2)}x direct (direct ${Math.round(median(dEvents)).toLocaleString("en")} events/s, proxy ${Math.round(median(pEvents)).toLocaleString("en")} events/s)`,
    "≥ 0.9x",
    eRatio >= 0.9,
  );
  if (cpuSeconds(daemonPid) !== null) {
    const per = (x) => (x / ((ROUNDS * EVENTS) / 1e6)).toFixed(2);
    console.log(
      `  CPU per million events: daemon (relaying) ${per(ecpu.daemon)} s, ${(ecpu.daemon / ecpu.directClient).toFixed(2)}x the caller reading directly ` +
        `(${per(ecpu.directClient)} s; the upstream sending: ${per(ecpu.upstream)} s); the caller reading via the proxy ${per(ecpu.proxyClient)} s ` +
        `(${Math.round(median(chunks.proxy)).toLocaleString("en")} HTTP chunks per stream, direct ${Math.round(median(chunks.direct)).toLocaleString("en")})`,
    );
  }

  const one = { ...small, stream: true };
  const dT = [];
  const pT = [];
  for (let i = 0; i < TTFB_RUNS; i++) {
    dT.push((await call(direct, one)).ttfb);
    pT.push((await call(proxy, one)).ttfb);
  }
  const extra = median(pT) - median(dT);
  report(
    "stream TTFB p50",
    `direct + ${extra.toFixed(3)} ms (direct ${median(dT).toFixed(3)} ms, proxy ${median(pT).toFixed(3)} ms)`,
    "≤ direct + 2 ms",
    extra <= 2,
  );
  console.log(`load average after ${loadavg()[0].toFixed(2)}`);
} finally {
  agent.destroy();
  await agentCli(home, ["daemon", "stop"]).catch(() => undefined);
  upstream.kill();
  rmSync(home, { recursive: true, force: true });
}
process.exitCode = results.every((r) => r.ok) ? 0 : 1;

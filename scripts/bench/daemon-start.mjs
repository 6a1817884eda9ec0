#!/usr/bin/env node
// Daemon start-up benchmark. Needs a build (npm run build).
// Each run starts the built daemon (`node dist/daemon/main.js`, as the CLI starts it) on a fresh
// temp home and records
//  - the wall time from exec until the daemon's socket answers `initialize`,
//  - the daemon's CPU (user + system of the process and all its threads, /proc/<pid>/stat) at
//    that moment, and again 2 s later (what the start costs just after ready: threads still
//    booting, actors waking, first timers),
// then stops it (SIGTERM). Two homes: a fresh empty one, and one with a config and a profile
// (made once by the CLI, copied for each run). `node -e 0` is timed between runs as the
// baseline, so each figure also reads as a ratio that holds across machine loads. With
// `--dist <another build's dist/>` (e.g. .tmp/dist-before, a copy of main's) both builds run
// alternately in the same run and the ratios this build / that one are printed.
// Usage: node scripts/bench/daemon-start.mjs [--runs N] [--dist path/to/other/dist] [--this path/to/dist (default dist/)] [--idle-ms 2000]
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const runs = Number(option("--runs") ?? 15);
const idleMs = Number(option("--idle-ms") ?? 2000);
const builds = [["this", option("--this") ? resolve(option("--this")) : join(root, "dist")]];
if (option("--dist")) builds.unshift(["other", resolve(option("--dist"))]);
const TICK_MS = 1000 / 100; // USER_HZ on Linux

/** user + system CPU of a live process and all its threads, in ms (fields 14 and 15 of /proc/<pid>/stat). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** Sends `initialize` over the home's socket (LSP framing, as the CLI does); resolves when answered, rejects if not listening yet. */
function initialize(home) {
  return new Promise((resolvePromise, reject) => {
    const socket = connect(join(home, "daemon.sock"));
    let buf = "";
    socket.once("error", (e) => (socket.destroy(), reject(e)));
    socket.once("connect", () => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientVersion: "bench" } });
      socket.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    socket.on("data", (d) => {
      buf += d.toString();
      if (buf.includes('"id":1')) {
        socket.destroy();
        resolvePromise();
      }
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startOnce(dist, template) {
  const home = mkdtempSync(join(tmpdir(), "ahd-"));
  if (template) cpSync(template, home, { recursive: true });
  const env = { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", AGENT_DEFAULT_WORKSPACE: "dir" };
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, [join(dist, "daemon", "main.js")], { env, stdio: "ignore" });
  let exited = false;
  child.once("exit", () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`the daemon of ${dist} exited before it was ready`);
      try {
        await initialize(home);
        break;
      } catch {
        await sleep(5);
      }
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    const cpu = cpuMs(child.pid);
    await sleep(idleMs);
    const after = cpuMs(child.pid);
    return { wall, cpu, idle: after - cpu };
  } finally {
    if (!exited) {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    }
    rmSync(home, { recursive: true, force: true });
  }
}

function timeNodeE0() {
  const t0 = process.hrtime.bigint();
  spawnSync(process.execPath, ["-e", "0"], { stdio: "ignore" });
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

if (process.platform !== "linux") {
  console.log("skipped: the daemon's CPU time is read from /proc (Linux only)");
  process.exit(0);
}

// The home with a config and a profile, made once by this build's CLI.
const template = mkdtempSync(join(tmpdir(), "aht-"));
{
  const cli = join(root, "dist", "cli", "main.js");
  const env = { ...process.env, AGENT_HOME: template, AGENT_GATEWAY_PORT: "0", AGENT_DEFAULT_WORKSPACE: "dir" };
  const run = (args) => execFileSync(process.execPath, [cli, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  run(["config", "set", "logs.level", "debug"]);
  run(["profile", "create", "writer", "--description", "drafts prose", "--no-alias"]);
  run(["daemon", "stop"]);
}
const homes = [
  ["empty home", null],
  ["config+profile", template],
];

const load0 = loadavg();
// Warm the page cache.
for (const [, dist] of builds) await startOnce(dist, null);
const base = [];
const results = {};
for (let i = 0; i < runs; i++) {
  for (const [homeName, tpl] of homes) {
    for (const [name, dist] of builds) {
      base.push(timeNodeE0());
      const r = await startOnce(dist, tpl);
      const key = `${homeName}|${name}`;
      results[key] ??= { wall: [], cpu: [], idle: [] };
      for (const k of ["wall", "cpu", "idle"]) results[key][k].push(r[k]);
    }
  }
}
rmSync(template, { recursive: true, force: true });
const load1 = loadavg();
const mb = median(base);
console.log(`load average at start ${load0.map((l) => l.toFixed(2)).join(" ")}, at end ${load1.map((l) => l.toFixed(2)).join(" ")}`);
console.log(`node -e 0 median ${mb.toFixed(1)} ms wall (${base.length} runs)`);
for (const [homeName] of homes) {
  const m = {};
  for (const [name, dist] of builds) {
    const r = results[`${homeName}|${name}`];
    m[name] = { wall: median(r.wall), cpu: median(r.cpu), idle: median(r.idle) };
    console.log(
      `${homeName.padEnd(15)} ${name.padEnd(5)} (${dist}): to ready ${m[name].wall.toFixed(0)} ms wall (${(m[name].wall / mb).toFixed(1)}x node -e 0), ` +
        `CPU at ready ${m[name].cpu.toFixed(0)} ms (${(m[name].cpu / mb).toFixed(1)}x), CPU in the ${idleMs} ms after ${m[name].idle.toFixed(0)} ms — medians of ${runs}`,
    );
  }
  if (m.other) {
    console.log(
      `${homeName.padEnd(15)} this / other: wall to ready ${(m.this.wall / m.other.wall).toFixed(2)}x, CPU at ready ${(m.this.cpu / m.other.cpu).toFixed(2)}x, ` +
        `CPU at ready + ${idleMs} ms ${((m.this.cpu + m.this.idle) / (m.other.cpu + m.other.idle)).toFixed(2)}x`,
    );
  }
}

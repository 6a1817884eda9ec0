#!/usr/bin/env node
// CLI round-trip benchmark. Needs a build (npm run build).
//  1. median wall time of `agent daemon status --json` against a running daemon on a temp home,
//     as a ratio to `node -e 0` measured in the same run, interleaved (target: ratio <= 2.5);
//  2. JSON-RPC `ping` round trips per second over the socket, sequential and pipelined.
// Usage: node scripts/bench/cli-roundtrip.mjs [--runs N] [--seconds S] [--cli path/to/dist/cli/main.js]
//   (--cli measures another build, e.g. an older commit's, against the same baseline)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, rpcClient, timeNode } from "./lib/measure.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const arg = (name, fallback) => (option(name) === undefined ? fallback : Number(option(name)));
const cli = option("--cli") ?? join(root, "dist", "cli", "main.js");
const runs = arg("--runs", 30);
const seconds = arg("--seconds", 2);
const home = mkdtempSync(join(tmpdir(), "ahb-"));
const env = { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0" };

const time = (args) => timeNode(env, args);

async function rpcRates() {
  const { rpc, close } = await rpcClient(home);
  for (let i = 0; i < 200; i++) await rpc.sendRequest("ping", {}); // warm-up
  let n = 0;
  let t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    await rpc.sendRequest("ping", {});
    n++;
  }
  const sequential = n / ((performance.now() - t0) / 1000);
  const window = 64;
  n = 0;
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (performance.now() - t0 < seconds * 1000) {
        await rpc.sendRequest("ping", {});
        n++;
      }
    }),
  );
  const pipelined = n / ((performance.now() - t0) / 1000);
  close();
  return { sequential, pipelined, window };
}

try {
  const start = time([cli, "daemon", "start", "--json"]);
  const { pid } = JSON.parse(start.stdout);
  // Warm the page cache and the daemon.
  for (let i = 0; i < 3; i++) {
    time(["-e", "0"]);
    time([cli, "daemon", "status", "--json"]);
  }
  const base = [];
  const status = [];
  for (let i = 0; i < runs; i++) {
    base.push(time(["-e", "0"]).ms);
    const r = time([cli, "daemon", "status", "--json"]);
    if (JSON.parse(r.stdout).pid !== pid) throw new Error("status answered for another daemon");
    status.push(r.ms);
  }
  const mb = median(base);
  const ms = median(status);
  const rates = await rpcRates();
  const ratio = ms / mb;
  console.log(`node -e 0                     median ${mb.toFixed(1)} ms (${runs} runs)`);
  console.log(`agent daemon status --json    median ${ms.toFixed(1)} ms (${runs} runs)`);
  console.log(`ratio                         ${ratio.toFixed(2)}x (target <= 2.5x) ${ratio <= 2.5 ? "OK" : "OVER"}`);
  console.log(`ping round trips, sequential  ${Math.round(rates.sequential)}/s`);
  console.log(`ping round trips, pipelined   ${Math.round(rates.pipelined)}/s (${rates.window} in flight)`);
} finally {
  spawnSync(process.execPath, [cli, "daemon", "stop"], { env, stdio: "ignore" });
  rmSync(home, { recursive: true, force: true });
}

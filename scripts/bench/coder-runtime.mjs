#!/usr/bin/env node
// Coder runtime benchmark (run `npm run build` first):
//   node scripts/bench/coder-runtime.mjs [--turns 40]
// Overhead per turn of the coder runtime: a text turn through the daemon (`chat.send` on one
// session whose turns go to the app-server: the session workflow, the approval and projection
// code, transcript writes, the search index) against driving the same app-server directly
// (turn/start → turn/completed on a warm thread), measured in the same run. The app-server is
// test/fixtures/fake-app-server.mjs, so the figure is ours, not a model's. Target: at most
// 1.1x + 20 ms (median per turn).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { connectDaemon } from "../../dist/shared/client/index.js";
import { agentCli, ROOT } from "./lib/daemon-client.mjs";
import { median } from "./lib/measure.mjs";

const { values } = parseArgs({ options: { turns: { type: "string" } } });
const N = Number(values.turns ?? 40);
const SERVER = join(ROOT, "test", "fixtures", "fake-app-server.mjs");
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

// ---- direct: our own minimal line client on the fake ----
async function direct() {
  const child = spawn(process.execPath, [SERVER], { stdio: ["pipe", "pipe", "inherit"] });
  const rl = createInterface({ input: child.stdout });
  const waiting = new Map();
  let done = null;
  let id = 0;
  rl.on("line", (line) => {
    const m = JSON.parse(line);
    if (m.id !== undefined && !m.method) waiting.get(m.id)?.(m.result);
    else if (m.method === "turn/completed") done?.();
  });
  const req = (method, params) =>
    new Promise((resolve) => {
      waiting.set(++id, resolve);
      child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  await req("initialize", { clientInfo: { name: "bench", version: "1", title: null }, capabilities: null });
  child.stdin.write(`${JSON.stringify({ method: "initialized" })}\n`);
  const { thread } = await req("thread/start", { cwd: ROOT });
  const times = [];
  for (let i = 0; i < N + 3; i++) {
    const t0 = process.hrtime.bigint();
    const completed = new Promise((resolve) => (done = resolve));
    await req("turn/start", { threadId: thread.id, input: [{ type: "text", text: `text ${i}`, text_elements: [] }] });
    await completed;
    if (i >= 3) times.push(ms(t0)); // the first turns warm up
  }
  child.kill();
  return median(times);
}

// ---- through the daemon ----
async function daemon() {
  const home = mkdtempSync(join(tmpdir(), "bench-coder-"));
  writeFileSync(
    join(home, "config.yaml"),
    `_config_version: 13\nmodel:\n  base_url: http://127.0.0.1:9/v1\n  name: m\n  api_mode: responses\n  vendor_runtime: coder_app_server\ncoder_runtime:\n  command: ${SERVER}\napprovals:\n  mode: off\n`,
  );
  await agentCli(home, ["daemon", "start"]);
  const client = await connectDaemon({ home, autostart: false });
  try {
    let sessionId;
    const times = [];
    for (let i = 0; i < N + 3; i++) {
      const t0 = process.hrtime.bigint();
      const r = await client.call("chat.send", { prompt: `text ${i}`, ...(sessionId ? { sessionId } : {}), cwd: ROOT });
      if (r.answer !== "hello from the fake") throw new Error(`unexpected answer ${r.answer}`);
      sessionId = r.sessionId;
      if (i >= 3) times.push(ms(t0));
    }
    return median(times);
  } finally {
    client.close();
    await agentCli(home, ["daemon", "stop"]).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
}

const load = loadavg()[0].toFixed(1);
const base = await direct();
const ours = await daemon();
const target = base * 1.1 + 20;
console.log(`coder runtime, ${N} text turns each, load ${load}, ${new Date().toISOString()}`);
console.log(`  direct app-server: ${base.toFixed(1)} ms per turn (baseline)`);
console.log(`  through the daemon: ${ours.toFixed(1)} ms per turn = ${(ours / base).toFixed(2)}x, +${(ours - base).toFixed(1)} ms`);
console.log(`${ours <= target ? "✓" : "✗"} target ≤ 1.1x + 20 ms = ${target.toFixed(1)} ms`);

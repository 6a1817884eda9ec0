#!/usr/bin/env node
// Agent loop benchmark (run `npm run build` first):
//   node scripts/bench/agent-loop.mjs [--iterations 200] [--appends 200] [--cpu-prof <dir>]
// 1. The runtime's own overhead per tool iteration: a real daemon on a temp home runs one turn of
//    N tool iterations against the fake model (answering instantly, in its own process). The
//    baseline, measured in the same run: the raw round trip of the request the daemon sent at
//    the middle of the loop (saved by the fake model, replayed through the same openai client,
//    so the growing context's cost is in the baseline, not counted as overhead) plus the tool's
//    own duration. Overhead per iteration = (time between tool results) - baseline; the ratio
//    is one iteration / baseline. Target: overhead < 5 ms (median).
// 2. Appending one message to a session of 10 vs 10,000 messages (median, ratio; target 1.5x).
// `--cpu-prof <dir>` starts the daemon under `node --cpu-prof` (the profile is written at stop).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { connectDaemon } from "../../dist/shared/client/index.js";
import { median, ms, startFakeModel } from "./lib/fake-model.mjs";

const { values } = parseArgs({ options: { iterations: { type: "string" }, appends: { type: "string" }, "cpu-prof": { type: "string" } } });
const N = Number(values.iterations ?? 200);
const APPENDS = Number(values.appends ?? 200);
const root = new URL("../..", import.meta.url).pathname;

const home = mkdtempSync(join(tmpdir(), "abench-"));
const scriptFile = join(home, "script.json");
writeFileSync(
  scriptFile,
  JSON.stringify([{ toolCalls: [{ name: "list_files", arguments: { path: home, depth: 1 } }], usage: { prompt_tokens: 10, completion_tokens: 5 } }]),
);

const savedRequest = join(home, "mid-request.json");
// The loop's requests carry the system prompt, the user message and 2 messages per iteration.
const midMessages = 2 + 2 * Math.floor(N / 2);
const { baseUrl, fake } = await startFakeModel(["--script", scriptFile, "--loop", "--save-request", `${midMessages}:${savedRequest}`]);
writeFileSync(join(home, "config.yaml"), `_config_version: 13\nmodel:\n  base_url: ${baseUrl}\n  name: fake-model\n`);

let client;
try {
  // Raw round trips through the same openai client the daemon uses.
  const openai = new OpenAI({ baseURL: baseUrl, apiKey: "x", maxRetries: 0 });
  const rawRoundTrips = async (body, n) => {
    const xs = [];
    for (let i = 0; i < n + 5; i++) {
      const t0 = performance.now();
      const stream = await openai.chat.completions.create(body);
      for await (const _ of stream) void _;
      if (i >= 5) xs.push(performance.now() - t0);
    }
    return xs;
  };
  const tiny = median(
    await rawRoundTrips({ model: "fake-model", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } }, 50),
  );

  process.env.AGENT_HOME = home;
  if (values["cpu-prof"]) {
    // Profile the daemon: start it in the foreground under --cpu-prof (written at daemon.stop).
    const d = spawn(process.execPath, ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"], join(root, "dist/daemon/main.js"), "--foreground"], {
      env: { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0" },
      stdio: "ignore",
    });
    for (let i = 0; i < 100 && !existsSync(join(home, "daemon.sock")); i++) await new Promise((r) => setTimeout(r, 50));
    void d;
  }
  client = await connectDaemon({ home, autostart: true, env: { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0" } });
  const results = [];
  client.onEvent((e) => {
    if (e.data?.type === "tool_result") results.push({ at: performance.now(), durationMs: e.data.durationMs });
  });
  // Warm up the tool pool and the session actor.
  const warm = await client.call("chat.send", { prompt: "warm up", maxTurns: 3, cwd: home });
  results.length = 0;
  const t0 = performance.now();
  const turn = await client.call("chat.send", { sessionId: warm.sessionId, prompt: "loop", maxTurns: N, cwd: home });
  const total = performance.now() - t0;
  // Baseline: the request the daemon sent mid-loop, replayed raw after the loop.
  const midBody = JSON.parse(readFileSync(savedRequest, "utf8"));
  const rawMid = median([...(await rawRoundTrips(midBody, 25)), ...(await rawRoundTrips(midBody, 25))]);
  const toolMed = median(results.map((r) => r.durationMs));
  const iterations = results.slice(1).map((r, i) => r.at - results[i].at);
  const overheads = results.slice(1).map((r, i) => r.at - results[i].at - r.durationMs - rawMid);
  const iterMed = median(iterations);
  const over = median(overheads);
  console.log(`tool iterations: ${turn.toolCalls} in ${ms(total)} (stop: ${turn.stopReason})`);
  console.log(`  raw fake-model round trip, 1-message request (median):      ${ms(tiny)}`);
  console.log(`  raw round trip of the mid-loop request (${midBody.messages.length} messages, median): ${ms(rawMid)}`);
  console.log(`  tool itself (median):                                        ${ms(toolMed)}`);
  console.log(
    `  one loop iteration in the daemon (median):                   ${ms(iterMed)}  = ${(iterMed / (rawMid + toolMed)).toFixed(2)}x the baseline (raw round trip + tool)`,
  );
  console.log(`  runtime overhead per iteration (median):                     ${ms(over)}  target < 5 ms  ${over < 5 ? "OK" : "OVER"}`);

  // Appends: a session of 10 and one of 10,000 messages.
  const msg = (i) => ({ role: "user", content: `message ${i} ${"x".repeat(200)}` });
  const small = (await client.call("chat.sessions.create", { cwd: home })).session.id;
  const big = (await client.call("chat.sessions.create", { cwd: home })).session.id;
  await client.call("chat.sessions.append", { sessionId: small, messages: Array.from({ length: 10 }, (_, i) => msg(i)) });
  for (let k = 0; k < 10; k++)
    await client.call("chat.sessions.append", { sessionId: big, messages: Array.from({ length: 1000 }, (_, i) => msg(k * 1000 + i)) });
  const time = async (sessionId) => {
    const xs = [];
    for (let i = 0; i < APPENDS; i++) {
      const t = performance.now();
      await client.call("chat.sessions.append", { sessionId, messages: [msg(i)] });
      xs.push(performance.now() - t);
    }
    return median(xs);
  };
  // Interleave to share any drift between the two.
  const a1 = await time(small);
  const b1 = await time(big);
  const a2 = await time(small);
  const b2 = await time(big);
  const a = median([a1, a2]);
  const b = median([b1, b2]);
  console.log(`append one message (median of ${APPENDS * 2}, RPC included):`);
  console.log(`  session of ~10 messages:     ${ms(a)}`);
  console.log(`  session of ~10,000 messages: ${ms(b)}`);
  console.log(`  ratio: ${(b / a).toFixed(2)}x  target <= 1.5x  ${b / a <= 1.5 ? "OK" : "OVER"}`);
} finally {
  await client?.call("daemon.stop", {}).catch(() => undefined);
  client?.close();
  fake.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 300));
  rmSync(home, { recursive: true, force: true });
}

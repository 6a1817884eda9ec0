#!/usr/bin/env node
// MCP benchmark (run `npm run build` first):
//   node scripts/bench/mcp.mjs [--calls 200] [--starts 5]
// 1. A tool call through the daemon against the SDK's own client calling the same stdio server
//    directly, measured in the same run. The server is test/fixtures/fake-mcp-server.mjs (`sleep`
//    with ms 0). Through the daemon: one chat turn in which the fake model calls the MCP tool N
//    times; each call's time is the daemon's tool_result durationMs (its registry, the client
//    manager, the SDK, the pipe, the server, the result mapping). Target: at most 1.2x + 1 ms.
// 2. Daemon start-up (`agent daemon start` to ready) with ten configured MCP servers against none.
//    Servers start at a turn's first need, so the target is at most 1.1x.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connectDaemon } from "../../dist/shared/client/index.js";
import { median, ms, startFakeModel } from "./lib/fake-model.mjs";

const { values } = parseArgs({ options: { calls: { type: "string" }, starts: { type: "string" } } });
const N = Number(values.calls ?? 200);
const STARTS = Number(values.starts ?? 5);
const root = new URL("../..", import.meta.url).pathname;
const CLI = join(root, "dist", "cli", "main.js");
const SERVER = join(root, "test", "fixtures", "fake-mcp-server.mjs");
const env = (home) => ({ ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", AGENT_ACTORS_WATCH: "0" });

// ---- 1. one tool call: direct against through the daemon ----
const direct = new Client({ name: "bench", version: "1" });
await direct.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER, ""] }));
const directTimes = [];
for (let i = 0; i < N + 20; i++) {
  const t0 = performance.now();
  await direct.callTool({ name: "sleep", arguments: { ms: 0 } });
  if (i >= 20) directTimes.push(performance.now() - t0);
}
await direct.close();

const home = mkdtempSync(join(tmpdir(), "mbench-"));
const scriptFile = join(home, "script.json");
writeFileSync(
  scriptFile,
  JSON.stringify([{ toolCalls: [{ name: "mcp_fake_sleep", arguments: { ms: 0 } }], usage: { prompt_tokens: 10, completion_tokens: 5 } }]),
);
const { baseUrl, fake } = await startFakeModel(["--script", scriptFile, "--loop"]);
writeFileSync(
  join(home, "config.yaml"),
  `_config_version: 13\nmodel:\n  base_url: ${baseUrl}\n  name: fake-model\napprovals:\n  mode: "off"\nmcp_servers:\n  fake:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SERVER)}, ""]\n`,
);
let client;
try {
  client = await connectDaemon({ home, autostart: true, env: env(home) });
  const results = [];
  client.onEvent((e) => {
    if (e.data?.type === "tool_result") results.push(e.data);
  });
  const warm = await client.call("chat.send", { prompt: "warm up", maxTurns: 20, cwd: home });
  results.length = 0;
  await client.call("chat.send", { sessionId: warm.sessionId, prompt: "loop", maxTurns: N + 1, cwd: home });
  const failed = results.filter((r) => !r.ok).length;
  const dmed = median(directTimes);
  const viaMed = median(results.map((r) => r.durationMs));
  const target = 1.2 * dmed + 1;
  console.log(`one MCP tool call (median of ${results.length}${failed ? `, ${failed} failed` : ""}):`);
  console.log(`  SDK client calling the server directly: ${ms(dmed)}`);
  console.log(
    `  through the daemon:                     ${ms(viaMed)}  = ${(viaMed / dmed).toFixed(2)}x; target <= 1.2x + 1 ms (${ms(target)})  ${viaMed <= target ? "OK" : "OVER"}`,
  );
} finally {
  await client?.call("daemon.stop", {}).catch(() => undefined);
  client?.close();
  fake.kill("SIGTERM");
}

// ---- 2. daemon start-up: ten servers against none ----
const tenServers = Array.from(
  { length: 10 },
  (_, i) => `  s${i}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SERVER)}, ""]\n`,
).join("");
const homes = { none: mkdtempSync(join(tmpdir(), "mbench0-")), ten: mkdtempSync(join(tmpdir(), "mbench10-")) };
writeFileSync(join(homes.none, "config.yaml"), "_config_version: 13\n");
writeFileSync(join(homes.ten, "config.yaml"), `_config_version: 13\nmcp_servers:\n${tenServers}`);
const startTimes = { none: [], ten: [] };
try {
  for (let i = 0; i < STARTS + 1; i++) {
    for (const which of i % 2 ? ["ten", "none"] : ["none", "ten"]) {
      const t0 = performance.now();
      execFileSync(process.execPath, [CLI, "daemon", "start"], { env: env(homes[which]), stdio: "ignore" });
      const took = performance.now() - t0;
      execFileSync(process.execPath, [CLI, "daemon", "stop"], { env: env(homes[which]), stdio: "ignore" });
      if (i > 0) startTimes[which].push(took);
    }
  }
  const a = median(startTimes.none);
  const b = median(startTimes.ten);
  console.log(`daemon start (agent daemon start to ready, median of ${STARTS}):`);
  console.log(`  no MCP servers:  ${ms(a)}`);
  console.log(`  ten MCP servers: ${ms(b)}  = ${(b / a).toFixed(2)}x; target <= 1.1x  ${b / a <= 1.1 ? "OK" : "OVER"}`);
} finally {
  for (const h of [...Object.values(homes), home]) rmSync(h, { recursive: true, force: true });
}

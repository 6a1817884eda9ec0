import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages, waitFor } from "../agent/helpers.js";
import { tempHome } from "../helpers/cli.js";
import { fake, mcpConfig } from "./helpers.js";

let h: Awaited<ReturnType<typeof chatHome>>;
let logFile = "";
let cleanLog = () => {};
test.before(async () => {
  const dir = tempHome("ml");
  cleanLog = dir.cleanup;
  logFile = join(dir.home, "fake-mcp.log");
  h = await chatHome(
    {},
    mcpConfig({
      par: fake("", { supports_parallel_tool_calls: true }),
      ser: fake(""),
      slow: fake("", { timeout: 0.5, env: { FAKE_MCP_LOG: logFile } }),
      victim: fake("", { env: { FAKE_MCP_LOG: logFile } }),
    }),
  );
  h.env.AGENT_MCP_BACKOFF_MS = "0";
});
test.after(async () => {
  await h.dispose();
  cleanLog();
});

let base = 0;
const seen = (i: number) => toolMessages(h.fake, base + i).map((m) => m.content);
const span = (text: string) => JSON.parse(text) as { started_at: number; ended_at: number; pid: number };

test("parallel against serial, by the servers' own clocks: a parallel server's calls overlap, another's run one after the other", async () => {
  base = h.fake.requests.length;
  h.fake.setScript([
    {
      toolCalls: [
        { name: "mcp_par_sleep", arguments: { ms: 400 } },
        { name: "mcp_par_sleep", arguments: { ms: 400 } },
        { name: "mcp_ser_sleep", arguments: { ms: 400 } },
        { name: "mcp_ser_sleep", arguments: { ms: 400 } },
      ],
    },
    { text: "Done." },
  ]);
  const r = await h.chat(["-q", "go"]);
  assert.is(r.code, 0, r.stderr);
  const [p1, p2, s1, s2] = seen(1).map(span);
  assert.ok(p2!.started_at < p1!.ended_at, `parallel calls overlap: ${JSON.stringify([p1, p2])}`);
  assert.ok(s2!.started_at >= s1!.ended_at, `serial calls do not: ${JSON.stringify([s1, s2])}`);
  // The serial calls start after the parallel batch ended (call order is kept).
  assert.ok(s1!.started_at >= Math.max(p1!.ended_at, p2!.ended_at));
});

test("a call past its timeout is cancelled (notifications/cancelled reaches the server) and returns a clear tool error", async () => {
  base = h.fake.requests.length;
  h.fake.setScript([{ toolCalls: [{ name: "mcp_slow_sleep", arguments: { ms: 5000 } }] }, { text: "It timed out." }]);
  const t0 = Date.now();
  const r = await h.chat(["-q", "go"]);
  assert.is(r.code, 0, r.stderr);
  assert.ok(Date.now() - t0 < 4500, "the turn did not wait for the server");
  assert.match(seen(1)[0]!, /MCP tool slow\/sleep did not answer within 0\.5 s \(timeout\); it was cancelled/);
  const cancelled = await waitFor("notifications/cancelled in the server's log", () =>
    existsSync(logFile)
      ? readFileSync(logFile, "utf8")
          .split("\n")
          .find((l) => l.includes("requestId"))
      : undefined,
  );
  assert.match(cancelled, /timed out|Request timed out/i);
});

test("kill -9 of a server mid-call: a clear error naming it, then it is started again", async () => {
  base = h.fake.requests.length;
  h.fake.setScript([{ toolCalls: [{ name: "mcp_victim_sleep", arguments: { ms: 20_000 } }] }, { text: "It died." }]);
  const before = existsSync(logFile) ? readFileSync(logFile, "utf8").length : 0;
  const chat = h.chat(["-q", "go"]);
  const started = await waitFor("the victim's call to start", () => {
    const line = existsSync(logFile)
      ? readFileSync(logFile, "utf8")
          .slice(before)
          .split("\n")
          .find((l) => l.includes('"call":"sleep"'))
      : undefined;
    return line ? (JSON.parse(line) as { pid: number }) : undefined;
  });
  process.kill(started.pid, "SIGKILL");
  const r = await chat;
  assert.is(r.code, 0, r.stderr);
  assert.match(seen(1)[0]!, /MCP server victim went away during sleep: the server exited \(signal SIGKILL\); it is restarted/);
  const restarted = await waitFor("the victim to be ready again with a new pid", async () => {
    const l = await h.cli(["mcp", "list", "--json"]);
    const v = (JSON.parse(l.stdout).servers as Array<{ name: string; state: string; pid: number | null }>).find((s) => s.name === "victim");
    return v?.state === "ready" && v.pid !== started.pid ? v : undefined;
  });
  assert.ok(restarted.pid);
});

test.run();

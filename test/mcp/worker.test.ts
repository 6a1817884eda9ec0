// A kanban worker (`agent chat -q` with AGENT_KANBAN_TASK set, daemon/agent/worker-main.ts) gets
// its profile's MCP tools from the daemon, which owns the connections and runs the calls.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";
import { EVERYTHING, mcpConfig } from "./helpers.js";

const WORKER = { AGENT_KANBAN_TASK: "t_7" };

test("a kanban worker calls an MCP tool through the daemon", async () => {
  const h = await chatHome({}, mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } }));
  try {
    const started = await h.cli(["daemon", "start"]);
    assert.is(started.code, 0, started.stderr);
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "from a worker" } }] }, { text: "Task done." }]);
    const r = await h.chat(["-q", "do the task"], { env: WORKER });
    assert.is(r.code, 0, r.stderr);
    const offered = h.fake.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(offered.includes("mcp_everything_echo"), offered.join(", "));
    assert.ok(offered.includes("kanban_complete"), "the worker's own tools are there too");
    assert.match(toolMessages(h.fake, 1)[0]!.content, /Echo: from a worker/);
  } finally {
    await h.dispose();
  }
});

test("a kanban worker's MCP call is decided by the approval service: denied with nobody to ask", async () => {
  const h = await chatHome({}, `${mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } })}approvals:\n  mode: smart\n`);
  try {
    const started = await h.cli(["daemon", "start"]);
    assert.is(started.code, 0, started.stderr);
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "x" } }] }, { text: "Blocked." }]);
    const r = await h.chat(["-q", "do the task"], { env: WORKER });
    assert.is(r.code, 0, r.stderr);
    const seen = toolMessages(h.fake, 1)[0]!.content;
    assert.match(seen, /denied/);
    assert.match(seen, /MCP tool everything\/echo/);
    assert.not.match(seen, /Echo: x/);
  } finally {
    await h.dispose();
  }
});

test.run();

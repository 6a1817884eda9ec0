// A cron job's turn gets its profile's MCP tools, like chat and kanban workers (the one turn path).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";
import { EVERYTHING, mcpConfig } from "./helpers.js";

test("a cron job's turn calls an MCP tool, and the run's output is the answer after it", async () => {
  const h = await chatHome({}, `${mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } })}approvals:\n  mode: off\n`);
  try {
    const started = await h.cli(["daemon", "start"]);
    assert.is(started.code, 0, started.stderr);
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "from cron" } }] }, { text: "Echoed for the schedule." }]);
    const added = await h.cli(["cron", "add", "every 1d", "echo something", "--paused", "--json"]);
    assert.is(added.code, 0, added.stderr);
    const id = JSON.parse(added.stdout).job.id as string;
    const r = await h.cli(["cron", "run", id, "--json"]);
    assert.is(r.code, 0, r.stderr);
    const offered = h.fake.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(offered.includes("mcp_everything_echo"), offered.join(", "));
    assert.match(toolMessages(h.fake, 1)[0]!.content, /Echo: from cron/);
    assert.match(JSON.parse(r.stdout).run.output, /Echoed for the schedule/);
  } finally {
    await h.dispose();
  }
});

test.run();

// `agent mcp serve` driven by the SDK's own Client over stdio, as a user's MCP client would.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const env = { AGENT_GATEWAY_PORT: "0" };

async function connect(home: string, extraEnv: Record<string, string> = {}, args: string[] = []) {
  const client = new Client({ name: "test-client", version: "1" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args, "mcp", "serve"],
    env: { ...(process.env as Record<string, string>), AGENT_HOME: home, ...env, ...extraEnv },
    stderr: "pipe",
  });
  await client.connect(transport);
  return client;
}

const textOf = (r: Record<string, unknown>) => ((r.content ?? []) as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");

test("outside a kanban task: session_search, skill_view and the orchestrator's kanban tools; calls reach the daemon", async () => {
  const { home, cleanup } = tempHome("ms");
  try {
    mkdirSync(join(home, "skills", "docs"), { recursive: true });
    writeFileSync(join(home, "skills", "docs", "SKILL.md"), "---\nname: docs\ndescription: how to write docs\n---\nWrite short pages.\n");
    const client = await connect(home);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("session_search"), names.join(", "));
      assert.ok(names.includes("skill_view"), names.join(", "));
      assert.ok(names.includes("kanban_create"), names.join(", "));
      assert.not.ok(names.includes("kanban_complete"), "worker tools are not offered outside a task");
      const created = await client.callTool({ name: "kanban_create", arguments: { title: "Write the MCP docs" } });
      assert.not.ok(created.isError, textOf(created));
      const listed = await client.callTool({ name: "kanban_list", arguments: {} });
      assert.match(textOf(listed), /Write the MCP docs/);
      const skill = await client.callTool({ name: "skill_view", arguments: { name: "docs" } });
      assert.match(textOf(skill), /Write short pages/);
      const missing = await client.callTool({ name: "skill_view", arguments: { name: "no-such-skill" } });
      assert.ok(missing.isError);
      assert.match(textOf(missing), /no-such-skill/);
      const bad = await client.callTool({ name: "kanban_create", arguments: { nope: 1 } });
      assert.ok(bad.isError);
      const searched = await client.callTool({ name: "session_search", arguments: { query: "anything" } });
      assert.not.ok(searched.isError, textOf(searched));
    } finally {
      await client.close();
    }
    const board = await runCli(["kanban", "list"], { home, env });
    assert.match(board.stdout, /Write the MCP docs/);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test("under AGENT_KANBAN_TASK (here as profile work, -p) only the worker's kanban tools are offered", async () => {
  const { home, cleanup } = tempHome("ms");
  try {
    const made = await runCli(["profile", "create", "work"], { home, env });
    assert.is(made.code, 0, made.stderr);
    const client = await connect(home, { AGENT_KANBAN_TASK: "t_1" }, ["-p", "work"]);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("kanban_complete"), names.join(", "));
      assert.not.ok(names.includes("kanban_create"), "orchestrator tools are not offered to a worker");
    } finally {
      await client.close();
    }
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test.run();

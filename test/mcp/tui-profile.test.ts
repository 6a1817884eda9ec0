// The TUI's profile view lists the profile's MCP servers with their state (driven in tmux).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { EXIT } from "../../shared/error-codes.js";
import { runCli, tempHome } from "../helpers/cli.js";
import { stopServer, Tmux, tuiCommand } from "../tui/tmux.js";
import { fake, mcpConfig } from "./helpers.js";

test("the profile view lists the MCP servers: state, tool count, the last error of one that failed", async () => {
  const { home, cleanup } = tempHome("mt");
  writeFileSync(
    join(home, "config.yaml"),
    `_config_version: 13\nmodel:\n  base_url: http://127.0.0.1:9/v1\n  name: fake-model\n${mcpConfig({
      good: fake(""),
      broken: { command: process.execPath, args: ["-e", "process.stderr.write('no database here\\n'); process.exit(4)"] },
    })}`,
  );
  try {
    // Start both (a user's `agent mcp tools` would): one ready, one failed.
    assert.is((await runCli(["mcp", "tools", "good"], { home })).code, 0);
    // A server that cannot be reached is mcp.unavailable: the "unavailable" exit code.
    assert.is((await runCli(["mcp", "tools", "broken"], { home })).code, EXIT.unavailable);
    const t = new Tmux(tuiCommand(home), 140, 40);
    try {
      await t.waitFor(/1 Chat/);
      t.press("F7");
      const screen = await t.waitFor(/MCP servers \(2\)/);
      assert.match(screen, /broken\s+failed/);
      assert.match(screen, /no database here|code 4/);
      assert.match(screen, /good\s+ready 3 tools/);
    } finally {
      t.press("C-c");
      t.press("C-c");
    }
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    stopServer();
    cleanup();
  }
});

test.run();

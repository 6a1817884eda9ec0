// The MCP servers the daemon starts are process groups of the one process module, recorded in
// the command journal: a daemon killed with -9 leaves no MCP server behind once it starts again.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, waitFor } from "../agent/helpers.js";
import { isAlive } from "../../shared/process.js";
import { fake, mcpConfig } from "./helpers.js";

test("kill -9 of the daemon while an MCP stdio server runs a call: the next start stops that server", async () => {
  const h = await chatHome();
  const logFile = join(h.home, "fake-mcp.log");
  writeFileSync(
    join(h.home, "config.yaml"),
    `${readFileSync(join(h.home, "config.yaml"), "utf8")}${mcpConfig({ stubborn: fake("", { env: { FAKE_MCP_LOG: logFile } }) })}`,
  );
  let serverPid = 0;
  try {
    // A call that keeps the server busy for a minute: it outlives its stdin closing.
    h.fake.setScript([{ toolCalls: [{ name: "mcp_stubborn_sleep", arguments: { ms: 60_000 } }] }, { text: "Done." }]);
    const chat = h.spawnChat(["-q", "go"]);
    chat.stdout.resume();
    chat.stderr.resume();
    const started = await waitFor("the server's call to start", () => {
      const line = existsSync(logFile)
        ? readFileSync(logFile, "utf8")
            .split("\n")
            .find((l) => l.includes('"call":"sleep"'))
        : undefined;
      return line ? (JSON.parse(line) as { pid: number }) : undefined;
    });
    serverPid = started.pid;
    const status = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
    process.kill(status.pid, "SIGKILL");
    await waitFor("the daemon to be gone", () => !isAlive(status.pid));
    chat.kill("SIGKILL");
    // Orphaned, the server is still running its call.
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(isAlive(serverPid), "the server outlived the daemon (it is busy)");
    const again = await h.cli(["daemon", "start"]);
    assert.is(again.code, 0, again.stderr);
    await waitFor("the orphaned MCP server to be stopped", () => !isAlive(serverPid), 8_000);
  } finally {
    if (serverPid && isAlive(serverPid)) process.kill(serverPid, "SIGKILL");
    await h.dispose();
  }
});

test.run();

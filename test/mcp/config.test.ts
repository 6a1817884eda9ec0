import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";
import { EVERYTHING } from "./helpers.js";

const env = { AGENT_GATEWAY_PORT: "0" };

test("daemon start: an invalid mcp_servers entry is reported by server and key, and the daemon does not start", async () => {
  const { home, cleanup } = tempHome("mc");
  try {
    writeFileSync(
      join(home, "config.yaml"),
      "_config_version: 13\nmcp_servers:\n  github:\n    command: gh-mcp\n    timeout: soon\n  both:\n    command: x\n    url: http://127.0.0.1:1/mcp\n  nothing:\n    args: [a]\n  typo:\n    command: y\n    comand: z\n",
    );
    const r = await runCli(["daemon", "start"], { home, env });
    assert.is.not(r.code, 0);
    const text = r.stderr + r.stdout;
    assert.match(text, /mcp_servers\.github\.timeout must be a number \(seconds\), got "soon"/);
    assert.match(text, /mcp_servers\.both has both command \(stdio\) and url \(HTTP\)/);
    assert.match(text, /mcp_servers\.nothing needs command \(a stdio server\) or url/);
    assert.match(text, /mcp_servers\.typo\.comand is not a known field/);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test("config set checks an MCP key's type and names it; nothing changes", async () => {
  const { home, cleanup } = tempHome("mc");
  try {
    writeFileSync(join(home, "config.yaml"), "_config_version: 13\n# my servers\nmcp_servers:\n  gh:\n    command: gh-mcp\n");
    const r = await runCli(["config", "set", "mcp_servers.gh.connect_timeout", "-3"], { home, env });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /mcp_servers\.gh\.connect_timeout must be more than 0/);
    assert.match(readFileSync(join(home, "config.yaml"), "utf8"), /^# my servers$/m);
    assert.not.match(readFileSync(join(home, "config.yaml"), "utf8"), /connect_timeout/);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test("a profile's mcp.json: its servers are listed; a bad entry is reported at daemon start by server and key", async () => {
  const { home, cleanup } = tempHome("mc");
  try {
    const r0 = await runCli(["profile", "create", "work"], { home, env });
    assert.is(r0.code, 0, r0.stderr);
    const dir = join(home, "profiles", "work");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "mcp.json"),
      JSON.stringify({ mcpServers: { everything: { type: "stdio", command: process.execPath, args: [EVERYTHING, "stdio"] } } }),
    );
    // config.yaml adjusts a server of mcp.json (approve), without redefining it.
    writeFileSync(join(dir, "config.yaml"), "_config_version: 13\nmcp_servers:\n  everything:\n    approve: off\n");
    const listed = await runCli(["-p", "work", "mcp", "list", "--json"], { home, env });
    assert.is(listed.code, 0, listed.stderr);
    const s = JSON.parse(listed.stdout).servers[0];
    assert.is(s.name, "everything");
    assert.is(s.source, "mcp.json+config.yaml");
    assert.is(s.state, "idle"); // listing starts nothing
    const tools = await runCli(["-p", "work", "mcp", "tools", "everything"], { home, env });
    assert.is(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /mcp_everything_echo/);
    await stopDaemon(home);
    writeFileSync(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command: process.execPath, timeout: "1m" } } }));
    await runCli(["daemon", "start"], { home, env });
    const status = await runCli(["daemon", "status"], { home, env });
    assert.match(status.stdout, /mcp\s+degraded: .*mcp\.json: mcp_servers\.everything\.timeout must be a number/);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test("mcp add and remove write config.yaml through its document: comments survive; bad input changes nothing", async () => {
  const { home, cleanup } = tempHome("mc");
  try {
    const file = join(home, "config.yaml");
    writeFileSync(file, "_config_version: 13\n# keep this comment\nmodel:\n  name: m # and this one\n");
    const added = await runCli(["mcp", "add", "everything", "--env", "A=1", "--", process.execPath, EVERYTHING, "stdio"], { home, env });
    assert.is(added.code, 0, added.stderr);
    let text = readFileSync(file, "utf8");
    assert.match(text, /# keep this comment/);
    assert.match(text, /# and this one/);
    assert.match(text, /everything:\n\s+command: .*\n\s+args:/);
    const test1 = await runCli(["mcp", "test", "everything"], { home, env });
    assert.is(test1.code, 0, test1.stderr);
    assert.match(test1.stdout, /everything: ok — connected in [\d.]+ ms, listed \d+ tools in [\d.]+ ms/);
    assert.match(test1.stdout, /^ {2}echo$/m);
    const again = await runCli(["mcp", "add", "everything", "--", "other"], { home, env });
    assert.is(again.code, 1);
    assert.match(again.stderr, /configured already/);
    const web = await runCli(["mcp", "add", "web", "--url", "ftp://x", "--header", "A=b"], { home, env });
    assert.is(web.code, 2, web.stderr);
    assert.match(web.stderr, /mcp_servers\.web\.url must be an http\(s\) URL/);
    const bare = await runCli(["mcp", "add", "lonely"], { home, env });
    assert.is(bare.code, 2);
    assert.match(bare.stderr, /needs `-- <command>/);
    assert.not.match(readFileSync(file, "utf8"), /web|lonely/);
    const removed = await runCli(["mcp", "remove", "everything"], { home, env });
    assert.is(removed.code, 0, removed.stderr);
    text = readFileSync(file, "utf8");
    assert.not.match(text, /everything/);
    assert.match(text, /# keep this comment/);
    const missing = await runCli(["mcp", "remove", "everything"], { home, env });
    assert.is(missing.code, 4, missing.stderr); // not found
    const list = await runCli(["mcp", "list"], { home, env });
    assert.match(list.stdout, /no MCP servers configured/);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test.run();

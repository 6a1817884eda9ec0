// A distribution's MCP servers (its mcp.json, and mcp_servers in its config.yaml) are installed
// off, like its cron jobs: listed as disabled, never started by a turn, until the user runs
// `agent -p <profile> mcp enable <server>`. An update keeps that choice and brings new servers off.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "../agent/helpers.js";
import { FAKE_MCP } from "./helpers.js";

type Home = Awaited<ReturnType<typeof chatHome>>;
let h: Home;
let dist = "";
let userHome = "";

const server = { command: process.execPath, args: [FAKE_MCP, ""] };
function writeDistribution(version: string, servers: string[]): void {
  mkdirSync(dist, { recursive: true });
  writeFileSync(join(dist, "distribution.yaml"), `name: toolkit\nversion: ${version}\nauthor: Ada\n`);
  writeFileSync(join(dist, "mcp.json"), JSON.stringify({ mcpServers: Object.fromEntries(servers.map((s) => [s, { type: "stdio", ...server }])) }));
  // The distribution's config.yaml defines one more and tries to switch it on: it is off all the same.
  writeFileSync(
    join(dist, "config.yaml"),
    `_config_version: 13\nmcp_servers:\n  extra:\n    command: ${JSON.stringify(server.command)}\n    args: ${JSON.stringify(server.args)}\n    enabled: true\n`,
  );
}

test.before(async () => {
  h = await chatHome({ script: [{ text: "ok" }], loop: true });
  userHome = mkdtempSync(join(tmpdir(), "mcpd-"));
  dist = join(userHome, "toolkit");
  h.env.HOME = userHome;
});

test.after(async () => {
  await h.dispose();
  rmSync(userHome, { recursive: true, force: true });
});

const states = async (): Promise<Record<string, string>> => {
  const r = await h.cli(["-p", "toolkit", "mcp", "list", "--json"]);
  assert.is(r.code, 0, r.stderr);
  return Object.fromEntries(JSON.parse(r.stdout).servers.map((s: { name: string; state: string }) => [s.name, s.state]));
};
const mcpToolsOffered = async (): Promise<string[]> => {
  const before = h.fake.requests.length;
  const r = await h.cli(["-p", "toolkit", "chat", "-q", "hi"]);
  assert.is(r.code, 0, r.stderr);
  const tools: Array<{ function: { name: string } }> = h.fake.requests[before]!.body.tools ?? [];
  return tools.map((t) => t.function.name).filter((n) => n.startsWith("mcp_"));
};

test("install: the distribution's MCP servers are off, listed as disabled, and a turn starts none of them", async () => {
  writeDistribution("1.0.0", ["helper"]);
  const r = await h.cli(["profile", "install", dist, "-y"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /MCP servers, off until you enable them: extra, helper \(agent -p toolkit mcp enable <server>\)/);
  assert.equal(await states(), { extra: "disabled", helper: "disabled" });
  assert.equal(await mcpToolsOffered(), []);
});

test("mcp enable turns one on: its tools are offered from the next turn; mcp disable turns it off again", async () => {
  const on = await h.cli(["-p", "toolkit", "mcp", "enable", "helper"]);
  assert.is(on.code, 0, on.stderr);
  assert.match(on.stdout, /enabled MCP server helper of profile toolkit/);
  const s = await states();
  assert.is(s.extra, "disabled");
  assert.not.equal(s.helper, "disabled");
  assert.ok((await mcpToolsOffered()).includes("mcp_helper_sleep"));
  const unknown = await h.cli(["-p", "toolkit", "mcp", "enable", "nosuch"]);
  assert.is(unknown.code, 4, unknown.stderr); // not found
  assert.match(unknown.stderr, /no MCP server named nosuch/);
});

test("update: the user's yes is kept, a server new in the update comes off", async () => {
  writeDistribution("1.1.0", ["helper", "newer"]);
  const r = await h.cli(["profile", "update", "toolkit", "-y"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /MCP servers, off until you enable them: newer/);
  const s = await states();
  assert.equal(Object.keys(s), ["extra", "helper", "newer"]);
  assert.is(s.extra, "disabled");
  assert.is(s.newer, "disabled");
  assert.not.equal(s.helper, "disabled", "the user's yes is kept");
  const off = await h.cli(["-p", "toolkit", "mcp", "disable", "helper"]);
  assert.is(off.code, 0, off.stderr);
  assert.equal(await mcpToolsOffered(), []);
});

test("a distribution with mcp.json and no config.yaml: the profile gets a config.yaml of the current version with the servers off", async () => {
  const bare = join(userHome, "bare");
  mkdirSync(bare, { recursive: true });
  writeFileSync(join(bare, "distribution.yaml"), "name: bare\nversion: 1.0.0\n");
  writeFileSync(join(bare, "mcp.json"), JSON.stringify({ mcpServers: { solo: server } }));
  const r = await h.cli(["profile", "install", bare, "-y"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(readFileSync(join(h.home, "profiles", "bare", "config.yaml"), "utf8"), /^_config_version: 13\nmcp_servers:\n {2}solo:\n {4}enabled: false\n$/);
  const listed = await h.cli(["-p", "bare", "mcp", "list", "--json"]);
  assert.equal(
    JSON.parse(listed.stdout).servers.map((s: { name: string; state: string }) => [s.name, s.state]),
    [["solo", "disabled"]],
  );
  const status = await h.cli(["daemon", "status"]);
  assert.not.match(status.stdout, /mcp\s+degraded/);
});

test.run();

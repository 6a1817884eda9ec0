import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "smol-toml";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BLOCK_BEGIN, BLOCK_END, writeManagedConfig } from "../../daemon/coder/managed-config.js";

/** The managed block of codex's config.toml: the mapping, user content kept byte for byte, malformed TOML refused. */
const dir = mkdtempSync(join(tmpdir(), "coder-toml-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** A `${NAME}` reference as written in config.yaml. */
const ref = (name: string) => ["$", "{", name, "}"].join("");
const servers = {
  fs: { command: "npx", args: ["-y", "server-filesystem", "/tmp"], env: { GH_TOKEN: ref("GH_TOKEN"), MODE: "ro" }, timeout: 30, connect_timeout: 5 },
  docs: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: `Bearer ${ref("DOCS_KEY")}`, "X-Team": ref("TEAM"), "X-Plain": "p" }, enabled: false },
  "odd name": { command: "x" },
};
const own = { command: "/usr/bin/node", args: ["/app/dist/daemon/mcp/serve-main.js", "--home", "/h"] };

test("the mapping: stdio, streamable HTTP, timeouts, enabled, our own server, default_permissions", async () => {
  const home = join(dir, "a");
  const r = await writeManagedConfig({ codexHome: home, servers, ownServer: own, provider: { id: "agent", baseUrl: "http://127.0.0.1:1/v1", envKey: "K" } });
  assert.ok(r.written);
  const text = readFileSync(r.path, "utf8");
  assert.ok(text.startsWith(`${BLOCK_BEGIN}\n`));
  const t = JSON.parse(JSON.stringify(parse(text)));
  assert.is(t.default_permissions, ":workspace");
  assert.equal(t.mcp_servers.agent, { command: own.command, args: own.args });
  assert.equal(t.mcp_servers.fs, {
    command: "npx",
    args: ["-y", "server-filesystem", "/tmp"],
    env: { MODE: "ro" },
    env_vars: ["GH_TOKEN"],
    tool_timeout_sec: 30,
    startup_timeout_sec: 5,
  });
  assert.equal(t.mcp_servers.docs, {
    url: "http://127.0.0.1:9/mcp",
    bearer_token_env_var: "DOCS_KEY",
    env_http_headers: { "X-Team": "TEAM" },
    http_headers: { "X-Plain": "p" },
    enabled: false,
  });
  assert.not.ok(text.includes("$" + "{"), "no variable reference is written as it is");
  assert.equal(t.mcp_servers["odd name"], { command: "x" });
  assert.equal(t.model_providers.agent, { name: "agent", base_url: "http://127.0.0.1:1/v1", wire_api: "responses", env_key: "K" });
});

test("user content around the block survives re-runs byte for byte; their own entries win", async () => {
  const home = join(dir, "b");
  const before = '# my codex config\nmodel = "gpt-x"   # spaces kept\n\n[mcp_servers.fs]\ncommand = "mine"\n\n[profiles.work]\nmodel = "y"\n';
  await writeManagedConfig({ codexHome: home, servers: {}, ownServer: own });
  const path = join(home, "config.toml");
  // The user adds their own content after a first enable.
  const first = readFileSync(path, "utf8");
  writeFileSync(path, first + before);
  const r1 = await writeManagedConfig({ codexHome: home, servers, ownServer: own });
  const t1 = readFileSync(path, "utf8");
  assert.ok(t1.endsWith(before), "the user's part is unchanged");
  assert.equal(r1.skipped, ["mcp_servers.fs"]);
  assert.is((parse(t1) as any).mcp_servers.fs.command, "mine");
  assert.is((parse(t1) as any).model, "gpt-x", "still a top-level key");
  // Again, with another set of servers: only the block changes.
  const r2 = await writeManagedConfig({ codexHome: home, servers: { docs: servers.docs }, ownServer: own });
  const t2 = readFileSync(path, "utf8");
  assert.ok(t2.endsWith(before));
  assert.not.ok(t2.slice(0, t2.indexOf(BLOCK_END)).includes("odd name"), "the old entries are gone from the block");
  assert.equal(t2.split(BLOCK_BEGIN).length, 2, "one block");
  assert.ok(r2.written);
  // And once more, unchanged: nothing is written.
  const r3 = await writeManagedConfig({ codexHome: home, servers: { docs: servers.docs }, ownServer: own });
  assert.not.ok(r3.written);
  // Content the user put before the block stays there too.
  writeFileSync(path, `# top note\n${t2}`);
  await writeManagedConfig({ codexHome: home, servers: {}, ownServer: own });
  const t4 = readFileSync(path, "utf8");
  assert.ok(t4.startsWith(`# top note\n${BLOCK_BEGIN}\n`));
  assert.ok(t4.endsWith(before));
});

test("a table codex inserted before our end marker is kept, after the block", async () => {
  const home = join(dir, "e");
  await writeManagedConfig({ codexHome: home, servers: {}, ownServer: own });
  const path = join(home, "config.toml");
  const text = readFileSync(path, "utf8");
  const codexAdded = '\n[projects."/w"]\ntrust_level = "trusted"\n';
  writeFileSync(path, text.replace(BLOCK_END, `${codexAdded}${BLOCK_END}`));
  await writeManagedConfig({ codexHome: home, servers, ownServer: own });
  const after = readFileSync(path, "utf8");
  assert.ok(after.endsWith(`${BLOCK_END}\n${codexAdded}`), after);
  assert.is((parse(after) as any).projects["/w"].trust_level, "trusted");
});

test("a malformed config.toml is reported with its line, and nothing is written", async () => {
  const home = join(dir, "c");
  await writeManagedConfig({ codexHome: home, servers: {}, ownServer: own });
  const path = join(home, "config.toml");
  const broken = `${readFileSync(path, "utf8")}model = "ok"\n\n[oops\nx = 1\n`;
  writeFileSync(path, broken);
  const err = await writeManagedConfig({ codexHome: home, servers, ownServer: own }).catch((e) => e);
  assert.is(err.code, "coder.invalid_config");
  assert.match(err.message, /config\.toml line \d+, column \d+ is not valid TOML/);
  assert.match(err.message, /nothing was written/);
  assert.is(readFileSync(path, "utf8"), broken, "untouched");
  const fresh = join(dir, "d");
  const err2 = await writeManagedConfig({ codexHome: fresh, servers: {}, ownServer: own }).then(
    () => null,
    (e) => e,
  );
  assert.is(err2, null);
  assert.ok(existsSync(join(fresh, "config.toml")));
});

test.run();

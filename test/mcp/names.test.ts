import { test } from "uvu";
import * as assert from "uvu/assert";
import { key, MAX_TOOL_NAME, toolNames } from "../../daemon/mcp/names.js";
import { mergeServers } from "../../daemon/mcp/config.js";
import { mapCallResult, cut } from "../../daemon/mcp/results.js";

test("names are mcp_<server>_<tool>, sanitized to [A-Za-z0-9_-]", () => {
  const n = toolNames([{ server: "git hub", tool: "create.issue/now" }]);
  assert.is(n.get(key("git hub", "create.issue/now")), "mcp_git_hub_create_issue_now");
});

test("collisions are resolved the same way whatever order the servers answered in", () => {
  const pairs = [
    { server: "a", tool: "x.y" },
    { server: "a", tool: "x_y" },
    { server: "a_x", tool: "y" },
  ];
  const one = toolNames(pairs);
  const two = toolNames([...pairs].reverse());
  assert.equal([...one.entries()].sort(), [...two.entries()].sort());
  assert.is(new Set(one.values()).size, 3, "all distinct");
  assert.is(one.get(key("a", "x.y")), "mcp_a_x_y");
  assert.is(one.get(key("a", "x_y")), "mcp_a_x_y_2");
  assert.is(one.get(key("a_x", "y")), "mcp_a_x_y_3");
  // A built-in tool's name is never taken.
  assert.is(toolNames([{ server: "a", tool: "b" }], ["mcp_a_b"]).get(key("a", "b")), "mcp_a_b_2");
});

test("long names are cut to 64 characters with a hash of the full name, so two long names stay distinct", () => {
  const long = "t".repeat(100);
  const n = toolNames([
    { server: "server", tool: `${long}1` },
    { server: "server", tool: `${long}2` },
  ]);
  const [a, b] = [...n.values()];
  assert.ok(a!.length <= MAX_TOOL_NAME && b!.length <= MAX_TOOL_NAME);
  assert.is.not(a, b);
  assert.match(a!, /^mcp_server_t+_[0-9a-f]{6}$/);
});

test("results: text joined, resource links as text, isError as ok: false, images as the multimodal shape, long text cut", () => {
  const r = mapCallResult({
    content: [
      { type: "text", text: "one" },
      { type: "resource_link", uri: "file:///a.txt", name: "a.txt" },
    ],
  });
  assert.equal(r, { ok: true, output: "one\n[resource link: a.txt file:///a.txt]" });
  assert.equal(mapCallResult({ content: [{ type: "text", text: "bad" }], isError: true }), { ok: false, output: { error: "bad" } });
  const img = mapCallResult({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] });
  assert.equal((img.output as { content: unknown[] }).content[1], { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } });
  const big = cut("a".repeat(200_000));
  assert.ok(big.length < 60_000);
  assert.match(big, /output truncated: 150000 bytes omitted/);
});

/** `${NAME}` as written in a config. */
const ref = (name: string) => `\${${name}}`;

test("servers: config.yaml's fields over mcp.json's, variables from the environment, a missing one names server and key", () => {
  const { servers, errors } = mergeServers(
    { gh: { approve: "off", timeout: 5 }, web: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: `Bearer ${ref("TOKEN")}` } } },
    { gh: { command: "gh-mcp", env: { KEY: ref("GH_KEY") } }, lonely: { command: "x", env: { A: ref("NOPE") } } },
    { GH_KEY: "k1", TOKEN: "t1" },
  );
  const gh = servers.find((s) => s.name === "gh")!;
  assert.is(gh.source, "mcp.json+config.yaml");
  assert.is(gh.command, "gh-mcp");
  assert.is(gh.timeoutMs, 5000);
  assert.equal(gh.env, { KEY: "k1" });
  assert.equal(servers.find((s) => s.name === "web")!.headers, { Authorization: "Bearer t1" });
  assert.is(errors.length, 1);
  assert.match(errors[0]!.error.message, /mcp_servers\.lonely\.env\.A: \$\{NOPE\} is not set/);
});

test.run();

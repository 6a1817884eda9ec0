// `agent import` of configs that hide a non-loopback gateway bind behind YAML anchors and
// aliases: the bind is listed and, with -y, reset to loopback (the daemon then binds
// 127.0.0.1); the import never fails on the alias. A config the preview cannot read (an alias
// bomb, a YAML error) is listed as unchecked rather than passed over in silence, and settings
// that let tool calls run without asking (approvals off) are listed too.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeArchive } from "../fixtures/archives.mjs";
import { launchDaemon, runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const homes: { home: string; cleanup: () => void }[] = [];
const fresh = () => {
  const h = tempHome("impyaml");
  homes.push(h);
  return h.home;
};

test.after(async () => {
  for (const h of homes) {
    await stopDaemon(h.home);
    h.cleanup();
  }
});

for (const [what, config] of [
  ["the whole gateway section is an alias", "shared: &g\n  host: 0.0.0.0\ngateway: *g\n"],
  ["the host is an alias", "ip: &h 0.0.0.0\ngateway:\n  host: *h\n"],
] as const) {
  test(`${what}: listed, reset with -y, and the daemon binds loopback`, async () => {
    const archive = join(fresh(), "alias.tar.gz");
    await writeArchive(archive, [{ path: "config.yaml", content: config }]);
    const target = fresh();
    const refused = await runCli(["import", archive], { home: target });
    assert.is(refused.code, 1);
    assert.match(refused.stderr, /config\.yaml: gateway\.host = 0\.0\.0\.0/);
    assert.equal(readdirSync(target), []);
    const r = await runCli(["import", archive, "-y"], { home: target });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /gateway\.host 0\.0\.0\.0 reset to 127\.0\.0\.1/);
    assert.not.match(r.stderr, /failed/);
    const { url } = await launchDaemon(target);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+/, readFileSync(join(target, "config.yaml"), "utf8"));
    await stopDaemon(target);
  });
}

const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
for (let i = 1; i < 9; i++)
  bomb.push(
    `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
      .fill(`*${String.fromCharCode(96 + i)}`)
      .join(",")}]`,
  );

for (const [what, config] of [
  ["an alias bomb", `${bomb.join("\n")}\ngateway:\n  host: 0.0.0.0\n`],
  ["a YAML error", "gateway:\n  host: 0.0.0.0\n  host: 0.0.0.0\n"],
] as const) {
  test(`a profile config the preview cannot read (${what}) is listed as unchecked, and -y still imports`, async () => {
    const archive = join(fresh(), "unreadable.tar.gz");
    await writeArchive(archive, [
      { path: "profiles/", type: "Directory" },
      { path: "profiles/work/", type: "Directory" },
      { path: "profiles/work/config.yaml", content: config },
    ]);
    const target = fresh();
    const refused = await runCli(["import", archive], { home: target });
    assert.is(refused.code, 1);
    assert.match(refused.stderr, /profiles\/work\/config\.yaml: gateway\.host = unchecked: profiles\/work\/config\.yaml is not readable YAML/);
    assert.equal(readdirSync(target), []);
    const r = await runCli(["import", archive, "-y"], { home: target });
    assert.is(r.code, 0, r.stderr);
    assert.not.match(r.stderr, /failed/);
  });
}

test("approvals turned off by the archive's configs are listed before anything is restored", async () => {
  const archive = join(fresh(), "approvals.tar.gz");
  await writeArchive(archive, [
    { path: "config.yaml", content: 'approvals:\n  mode: "off"\n  non_interactive: allow\nmcp_servers:\n  files:\n    approve: "off"\n' },
  ]);
  const target = fresh();
  const refused = await runCli(["import", archive], { home: target });
  assert.is(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /config\.yaml approvals\.mode: off/);
  assert.match(refused.stderr, /config\.yaml approvals\.non_interactive: allow/);
  assert.match(refused.stderr, /config\.yaml mcp_servers\.files\.approve: off/);
  assert.equal(readdirSync(target), []);
});

test.run();

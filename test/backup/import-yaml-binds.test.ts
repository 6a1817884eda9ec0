// `agent import` of configs that hide a non-loopback gateway bind behind YAML anchors and
// aliases: the bind is listed and, with -y, reset to loopback (the daemon then binds
// 127.0.0.1); the import never fails on the alias.
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

test.run();

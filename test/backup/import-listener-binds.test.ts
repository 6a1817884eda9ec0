// `agent import` of a home whose proxy or API server binds a non-loopback address (in
// config.yaml or .env): listed before anything is restored like the gateway's bind, and reset
// to loopback with -y, so an imported archive never opens the daemon's turns to the network.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeArchive } from "../fixtures/archives.mjs";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const homes: { home: string; cleanup: () => void }[] = [];
const fresh = () => {
  const h = tempHome("implisten");
  homes.push(h);
  return h.home;
};

test.after(async () => {
  for (const h of homes) {
    await stopDaemon(h.home);
    h.cleanup();
  }
});

test("a proxy or API server bind that is not loopback is listed, and reset with -y", async () => {
  const archive = join(fresh(), "listeners.tar.gz");
  await writeArchive(archive, [
    { path: "config.yaml", content: "api_server:\n  enabled: true\n  host: 0.0.0.0\nproxy:\n  enabled: true\n  host: 10.0.0.5\n" },
    { path: ".env", content: "API_SERVER_KEY=k-0123\nAGENT_PROXY_HOST=0.0.0.0\nAGENT_PROXY_TOKEN=p-0123\n" },
  ]);
  const target = fresh();
  const refused = await runCli(["import", archive], { home: target });
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /config\.yaml: api_server\.host = 0\.0\.0\.0/);
  assert.match(refused.stderr, /config\.yaml: proxy\.host = 10\.0\.0\.5/);
  assert.match(refused.stderr, /\.env: AGENT_PROXY_HOST = 0\.0\.0\.0/);
  assert.equal(readdirSync(target), []);
  const r = await runCli(["import", archive, "-y"], { home: target });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /api_server\.host 0\.0\.0\.0 reset to 127\.0\.0\.1/);
  const config = readFileSync(join(target, "config.yaml"), "utf8");
  assert.not.match(config, /0\.0\.0\.0|10\.0\.0\.5/);
  assert.not.match(readFileSync(join(target, ".env"), "utf8"), /AGENT_PROXY_HOST/);
});

test.run();

// cors_origins ["*"] with no API_SERVER_KEY (daemon/http/access.ts assertOriginsAllowed): every
// web page could run turns of the agent. `agent api-server start` refuses it with a clear error
// and nothing listens (also when api_server.enabled asks for it at a reload); a reload that
// brings it to a running server is refused and the server keeps its previous settings; with a
// key, "*" is allowed.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "../agent/helpers.js";

const EVIL = "https://evil.example";

test("API server: cors_origins * without a key is refused at start and on reload; with a key it is served", async () => {
  const h = await chatHome({}, "api_server:\n  port: 0\n  cors_origins: ['*']\n");
  const config = join(h.home, "config.yaml");
  const withWildcard = readFileSync(config, "utf8");
  const without = withWildcard.replace("  cors_origins: ['*']\n", "");
  try {
    const refused = await h.cli(["api-server", "start", "--port", "0"]);
    assert.is.not(refused.code, 0);
    assert.match(refused.stderr, /api_server\.cors_origins lists "\*" and no key is set/);
    assert.match(refused.stderr, /API_SERVER_KEY/);
    assert.is(JSON.parse((await h.cli(["api-server", "status", "--json"])).stdout).running, false);

    // api_server.enabled at a reload: refused the same way, nothing listens.
    writeFileSync(config, withWildcard.replace("api_server:\n", "api_server:\n  enabled: true\n"));
    assert.is((await h.cli(["daemon", "reload"])).code, 0);
    assert.is(JSON.parse((await h.cli(["api-server", "status", "--json"])).stdout).running, false);

    writeFileSync(config, without);
    assert.is((await h.cli(["daemon", "reload"])).code, 0);
    const started = await h.cli(["api-server", "start", "--port", "0", "--json"]);
    assert.is(started.code, 0, started.stderr);
    const url = JSON.parse(started.stdout).url as string;
    const models = (headers: Record<string, string>) => fetch(`${url}/models`, { headers }).then((r) => r.status);
    assert.is(await models({ origin: EVIL }), 403);

    // A reload that brings "*" with no key is refused: the server runs on with its previous settings.
    writeFileSync(config, withWildcard);
    assert.is((await h.cli(["daemon", "reload"])).code, 0);
    assert.is(await models({ origin: EVIL }), 403);
    assert.is(await models({}), 200);
    const daemon = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout);
    assert.is(daemon.components.api_server.status, "degraded");
    assert.match(daemon.components.api_server.detail, /cors_origins lists "\*"/);

    // With a key, "*" applies at the next reload.
    writeFileSync(join(h.home, ".env"), "API_SERVER_KEY=api-key-0123456\n", { mode: 0o600 });
    assert.is((await h.cli(["daemon", "reload"])).code, 0);
    assert.is(await models({ origin: EVIL }), 401);
    assert.is(await models({ origin: EVIL, authorization: "Bearer api-key-0123456" }), 200);
    assert.is(JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout).components.api_server.status, "ok");
  } finally {
    await h.dispose();
  }
});

test.run();

// cors_origins ["*"] with no key (daemon/http/access.ts assertOriginsAllowed): every web page
// could drive the agent through the proxy. `agent proxy start` refuses it with a clear error and
// nothing listens; a reload that brings it is refused and the running proxy keeps its previous
// settings; with a key, "*" is allowed.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ENV_KEY, proxyHome } from "./helpers.js";

const EVIL = "https://evil.example";

test("proxy: cors_origins * without a key is refused at start and on reload; with a key it is served", async () => {
  const h = await proxyHome("", "proxy:\n  cors_origins: ['*']\n");
  const config = join(h.home, "config.yaml");
  const withWildcard = readFileSync(config, "utf8");
  try {
    // At start: a clear error naming the rule and the way out; nothing listens.
    const refused = await h.cli(["proxy", "start", "--port", "0"]);
    assert.is.not(refused.code, 0);
    assert.match(refused.stderr, /proxy\.cors_origins lists "\*" and no key is set/);
    assert.match(refused.stderr, /AGENT_PROXY_TOKEN/);
    const status = await h.cli(["proxy", "status", "--json"]);
    assert.is(JSON.parse(status.stdout).running, false, status.stdout);

    // Without the wildcard it starts; a foreign page is refused.
    writeFileSync(config, withWildcard.replace(/proxy:\n {2}cors_origins: \['\*'\]\n/, ""));
    assert.is((await h.cli(["daemon", "reload"])).code, 0);
    const s = await h.startProxy();
    const models = (headers: Record<string, string>) => fetch(`${s.url}/models`, { headers }).then((r) => r.status);
    assert.is(await models({ origin: EVIL }), 403);

    // A reload that brings "*" with no key is refused: the proxy runs on with its previous settings.
    writeFileSync(config, withWildcard);
    const reload = await h.cli(["daemon", "reload"]);
    assert.is(reload.code, 0, reload.stderr);
    assert.is(await models({ origin: EVIL }), 403);
    assert.is(await models({}), 200);
    const daemon = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout);
    assert.is(daemon.components.proxy.status, "degraded");
    assert.match(daemon.components.proxy.detail, /cors_origins lists "\*"/);

    // With a key, "*" applies at the next reload.
    writeFileSync(join(h.home, ".env"), `ACME_KEY=${ENV_KEY}\nAGENT_PROXY_TOKEN=px-key-0123456\n`, { mode: 0o600 });
    assert.is((await h.cli(["daemon", "reload"])).code, 0);
    assert.is(await models({ origin: EVIL }), 401);
    assert.is(await models({ origin: EVIL, authorization: "Bearer px-key-0123456" }), 200);
    const after = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout);
    assert.is(after.components.proxy.status, "ok");
  } finally {
    await h.dispose();
  }
});

test.run();

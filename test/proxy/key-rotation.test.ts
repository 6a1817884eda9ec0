// Rotating the proxy's key (AGENT_PROXY_TOKEN replaced in $AGENT_HOME/.env, then `agent daemon
// reload`) takes effect on the running proxy: the old key is refused, the new one forwarded.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ENV_KEY, proxyHome } from "./helpers.js";

test("a new proxy key applies at the reload; the old one is refused", async () => {
  const h = await proxyHome();
  try {
    writeFileSync(join(h.home, ".env"), `ACME_KEY=${ENV_KEY}\nAGENT_PROXY_TOKEN=old-key-0123456\n`, { mode: 0o600 });
    const s = await h.startProxy();
    assert.ok(s.key_required);
    const models = (key: string) => fetch(`${s.url}/models`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
    assert.is(await models("old-key-0123456"), 200);
    writeFileSync(join(h.home, ".env"), `ACME_KEY=${ENV_KEY}\nAGENT_PROXY_TOKEN=new-key-6543210\n`, { mode: 0o600 });
    const reload = await h.cli(["daemon", "reload"]);
    assert.is(reload.code, 0, reload.stderr);
    assert.is(await models("old-key-0123456"), 401);
    assert.is(await models("new-key-6543210"), 200);
  } finally {
    await h.dispose();
  }
});

test.run();

// Rotating API_SERVER_KEY (a leaked key replaced in $AGENT_HOME/.env, then `agent daemon
// reload`) takes effect on the running API server: the old key is refused, the new one served.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome } from "../agent/helpers.js";

test("a new API_SERVER_KEY applies at the reload; the old one is refused", async () => {
  const h = await chatHome({}, "api_server:\n  port: 0\n");
  try {
    writeFileSync(join(h.home, ".env"), "API_SERVER_KEY=old-key-0123456\n", { mode: 0o600 });
    const started = await h.cli(["api-server", "start", "--port", "0", "--json"]);
    assert.is(started.code, 0, started.stderr);
    const url = JSON.parse(started.stdout).url as string;
    const models = (key: string) => fetch(`${url}/models`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
    assert.is(await models("old-key-0123456"), 200);
    writeFileSync(join(h.home, ".env"), "API_SERVER_KEY=new-key-6543210\n", { mode: 0o600 });
    const reload = await h.cli(["daemon", "reload"]);
    assert.is(reload.code, 0, reload.stderr);
    assert.is(await models("old-key-0123456"), 401);
    assert.is(await models("new-key-6543210"), 200);
  } finally {
    await h.dispose();
  }
});

test.run();

// The proxy key (docs/proxy.md "Access"): with proxy.token set (AGENT_PROXY_TOKEN in .env),
// every caller must send it as its bearer; it is compared in constant time and, like any caller
// bearer, never forwarded. (A non-loopback bind is only tested for its refusal, in proxy.test.ts:
// tests bind 127.0.0.1 alone.)
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ENV_KEY, proxyHome } from "./helpers.js";

const PROXY_KEY = "px-key-5f1e9a";

test("with a proxy key, a missing or wrong bearer is 401 and the right one is served, never forwarded", async () => {
  const h = await proxyHome();
  try {
    appendFileSync(join(h.home, ".env"), `AGENT_PROXY_TOKEN=${PROXY_KEY}\n`);
    const s = await h.startProxy();
    assert.ok(s.key_required);
    for (const apiKey of ["wrong-key", ""]) {
      const c = new OpenAI({ baseURL: s.url!, apiKey: apiKey || "x", maxRetries: 0, defaultHeaders: apiKey ? {} : { authorization: null } });
      const error = await c.models.list().catch((e) => e);
      assert.instance(error, OpenAI.AuthenticationError);
      assert.match(error.message, /missing or wrong key/);
      assert.not.ok(error.message.includes(PROXY_KEY));
    }
    assert.is(h.upstream.received.length, 0);
    const ok = new OpenAI({ baseURL: s.url!, apiKey: PROXY_KEY, maxRetries: 0 });
    assert.is((await ok.models.list()).data[0]!.id, "m1");
    assert.is(h.upstream.received[0]!.headers.authorization, `Bearer ${ENV_KEY}`);
    assert.not.ok(JSON.stringify(h.upstream.received[0]!.headers).includes(PROXY_KEY));
  } finally {
    await h.dispose();
  }
});

test.run();

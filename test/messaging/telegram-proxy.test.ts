import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, waitFor } from "../agent/helpers.js";
import { startFakeProxy, startFakeTelegram } from "../fixtures/fake-telegram.js";

/** `telegram.proxy_url` sets a proxy for the Bot API; the environment variable TELEGRAM_PROXY wins over it. */
const tg = await startFakeTelegram();
const proxy = await startFakeProxy();
// The config names a proxy nobody listens on: reaching the fake at all proves the variable won.
const p = await chatHome(
  { script: [{ text: "via proxy" }], loop: true },
  `telegram:\n  enabled: true\n  api_root: ${tg.apiRoot}\n  proxy_url: http://127.0.0.1:9\n  allow_users: ["5"]\n`,
);
p.env.TELEGRAM_BOT_TOKEN = tg.token;
p.env.TELEGRAM_PROXY = proxy.url;
p.env.AGENT_DAEMON_START_TIMEOUT_MS = "60000";
test.after(async () => {
  await p.dispose();
  await proxy.close();
  await tg.close();
});

test("TELEGRAM_PROXY wins over telegram.proxy_url, and the Bot API is reached through its tunnel", async () => {
  const s = await waitFor("the adapter started", async () => {
    const x = JSON.parse((await p.cli(["channels", "status", "--json"])).stdout);
    return x.channels[0] && x.channels[0].state !== "starting" ? x : null;
  });
  assert.is(s.channels[0].state, "running", JSON.stringify(s));
  assert.match(s.channels[0].detail, /proxy/);
  assert.ok(proxy.tunnels.includes(tg.apiRoot.replace("http://", "")), JSON.stringify(proxy.tunnels));
  tg.push({ chat: 5, text: "through the tunnel" });
  await waitFor("the reply through the proxy", () => tg.sent.find((m) => m.chat_id === "5" && m.text === "via proxy"));
});

test.run();

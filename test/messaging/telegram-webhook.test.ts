import { request } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, waitFor } from "../agent/helpers.js";
import { startFakeTelegram } from "../fixtures/fake-telegram.js";

/** Webhook mode: Telegram's secret-token header is checked before anything else; an update is answered once stored. */
const SECRET = "s3cret_token_for_tests_0123456789";
const tg = await startFakeTelegram();
const h = await chatHome(
  { script: [{ text: "hooked" }], loop: true },
  `telegram:\n  enabled: true\n  api_root: ${tg.apiRoot}\n  mode: webhook\n  webhook_url: https://bot.example.test/telegram/default\n  webhook_port: 0\n  allow_users: ["7"]\n`,
);
h.env.TELEGRAM_BOT_TOKEN = tg.token;
h.env.TELEGRAM_WEBHOOK_SECRET = SECRET;
h.env.AGENT_DAEMON_START_TIMEOUT_MS = "60000";
test.after(async () => {
  await h.dispose();
  await tg.close();
});

function post(port: number, body: string | Buffer, secret?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/telegram/default",
        agent: false,
        method: "POST",
        headers: { "content-type": "application/json", ...(secret !== undefined ? { "x-telegram-bot-api-secret-token": secret } : {}) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", (e) => ((e as NodeJS.ErrnoException).code === "EPIPE" || (e as NodeJS.ErrnoException).code === "ECONNRESET" ? resolve(413) : reject(e)));
    req.end(body);
  });
}

const update = (id: number, text: string) =>
  JSON.stringify({
    update_id: id,
    message: { message_id: id, date: 0, chat: { id: 7, type: "private", first_name: "U" }, from: { id: 7, is_bot: false, first_name: "U" }, text },
  });

test("the secret header is required; a good update is stored, answered 200 and handled", async () => {
  const s = await waitFor("the adapter started", async () => {
    const x = JSON.parse((await h.cli(["channels", "status", "--json"])).stdout);
    return x.channels[0] && x.channels[0].state !== "starting" ? x : null;
  });
  const c = s.channels[0];
  assert.is(c.state, "running", JSON.stringify(s));
  assert.ok(tg.calls.includes("setWebhook"));
  const port = Number(/:(\d+)\)$/.exec(c.detail)![1]);
  assert.is(await post(port, update(1, "no header")), 401);
  assert.is(await post(port, update(2, "bad header"), "wrong_secret_wrong_secret_wrong"), 401);
  assert.is(await post(port, Buffer.alloc(1024 * 1024 + 10, 32), SECRET), 413);
  assert.is(await post(port, update(3, "hello hook"), SECRET), 200);
  await waitFor("the reply", () => tg.sent.find((m) => m.chat_id === "7" && m.text === "hooked"));
  // A redelivery of the same update id is dropped.
  assert.is(await post(port, update(3, "hello hook"), SECRET), 200);
  const after = JSON.parse((await h.cli(["channels", "status", "--json"])).stdout).channels[0];
  assert.is(after.counts.inbound, 1, "only the good update, once");
});

test.run();

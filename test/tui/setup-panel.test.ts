import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startFakeModel, type FakeModel } from "../fixtures/fake-model-server.js";
import { runCli, tempHome } from "../helpers/cli.js";
import { stopServer, Tmux, tuiCommand } from "./tmux.js";

/** The TUI's no-model panel offers the guided set-up (`s`); after it, the chat works without a restart. */

const KEY = "sk-tui-7e21";
let fake: FakeModel;

test.before(async () => {
  fake = await startFakeModel({ models: ["alpha-1", "beta-2"], apiKey: KEY, respond: () => ({ text: "Hello from the **fake** model." }) });
});

test.after(async () => {
  stopServer();
  await fake.close();
});

test("set-up from the no-model panel: preset, key, model from the list, test call; then a chat turn works", async () => {
  const { home, cleanup } = tempHome("tsu");
  const t = new Tmux(tuiCommand(home), 120, 40);
  try {
    const panel = await t.waitFor(/No model is configured yet/);
    assert.match(panel, /Press s to set one up here/);
    t.type("s");
    await t.waitFor(/Provider: a number from 1 to 6/);
    assert.match(t.screen(), /6\. any OpenAI-compatible URL/);
    t.type("6");
    t.press("Enter");
    await t.waitFor(/Base URL of the endpoint/);
    t.type(fake.baseUrl);
    t.press("Enter");
    await t.waitFor(/A name for it in config\.yaml/);
    t.press("Enter");
    await t.waitFor(/API key \(empty for none/);
    t.type(KEY);
    const typing = await t.waitFor(/•{5,}/);
    assert.not.ok(typing.includes(KEY), "the key is shown as dots");
    t.press("Enter");
    await t.waitFor(/Model: its number or its name/);
    assert.match(t.screen(), /1\. alpha-1[^\n]*\n[^\n]*2\. beta-2/);
    t.type("2");
    t.press("Enter");
    const saved = await t.waitFor(/saved provider "custom" \(beta-2 at/);
    assert.not.ok(saved.includes(KEY));
    await t.waitFor(/model custom\/beta-2/);
    await t.waitForNo(/No model is configured yet/);

    t.type("hello there");
    t.press("Enter");
    await t.waitFor(/Hello from the fake model\./);
    const chats = fake.requests.filter((r) => r.path.endsWith("/chat/completions"));
    assert.is(chats.at(-1)!.body.model, "beta-2");
    assert.is(chats.at(-1)!.headers.authorization, `Bearer ${KEY}`);
    assert.match(readFileSync(join(home, "config.yaml"), "utf8"), /custom:\n\s+base_url: .*\n\s+model: beta-2\n\s+api_key_env: CUSTOM_API_KEY/);
    assert.is(statSync(join(home, ".env")).mode & 0o777, 0o600);
  } finally {
    t.kill();
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test("a wrong key in the form changes nothing and says why", async () => {
  const { home, cleanup } = tempHome("tsu");
  const t = new Tmux(tuiCommand(home), 120, 40);
  try {
    await t.waitFor(/Press s to set one up here/);
    t.type("s");
    await t.waitFor(/Provider: a number/);
    t.type("6");
    t.press("Enter");
    await t.waitFor(/Base URL of the endpoint/);
    t.type(fake.baseUrl);
    t.press("Enter");
    await t.waitFor(/A name for it/);
    t.press("Enter");
    await t.waitFor(/API key/);
    t.type("sk-wrong");
    t.press("Enter");
    const failed = await t.waitFor(/set-up failed, nothing changed/);
    assert.match(failed.replace(/\s+/g, " "), /refused the API key \(HTTP 401\)/);
    assert.match(t.screen(), /model no model/);
    const r = await runCli(["config", "path", "--json"], { home });
    assert.is(r.code, 0);
    assert.throws(() => statSync(join(home, "config.yaml")));
    assert.throws(() => statSync(join(home, ".env")));
  } finally {
    t.kill();
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test.run();

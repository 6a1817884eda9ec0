import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startFakeModel, type FakeModel } from "../fixtures/fake-model-server.js";
import { CLI, runCli, tempHome } from "../helpers/cli.js";
import { stopServer, Tmux } from "../tui/tmux.js";

/**
 * `agent setup`: the guided first run in tmux (a person typing), the flags for scripts, and bad
 * input (401, unreachable URL, unknown model, empty list) that must change nothing.
 */

const KEY = "sk-test-4f9a1c";
let fake: FakeModel;
let empty: FakeModel;
const homes: Array<{ home: string; cleanup: () => void }> = [];

test.before(async () => {
  fake = await startFakeModel({ models: ["beta-2", "alpha-1"], apiKey: KEY, respond: () => ({ text: "OK from the fake" }) });
  empty = await startFakeModel({ models: [] });
});

test.after(async () => {
  stopServer();
  for (const h of homes) {
    await runCli(["daemon", "stop"], { home: h.home }).catch(() => undefined);
    h.cleanup();
  }
  await fake.close();
  await empty.close();
});

function home(): string {
  const h = tempHome("as");
  homes.push(h);
  return h.home;
}

function logsOf(home: string): string {
  const dir = join(home, "logs");
  if (!existsSync(dir)) return "";
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
}

function setupCommand(home: string, args = ""): string {
  return `env AGENT_HOME='${home}' AGENT_GATEWAY_PORT=0 NO_COLOR=1 ${process.execPath} ${CLI} setup ${args}`.trim();
}

test("interactive: the OpenAI-compatible URL preset, a typed key, a model from the list, the test call; then chat works", async () => {
  const h = home();
  const t = new Tmux(setupCommand(h), 110, 40);
  try {
    await t.waitFor(/Which model provider\?[\s\S]*6\. any OpenAI-compatible URL[\s\S]*Number \[1-6\]:/);
    t.type("9");
    t.press("Enter");
    await t.waitFor(/a number from 1 to 6/);
    t.type("6");
    t.press("Enter");
    await t.waitFor(/Base URL of the endpoint/);
    t.type(fake.baseUrl);
    t.press("Enter");
    await t.waitFor(/A name for it in config.yaml \[custom\]:/);
    t.type("myserver");
    t.press("Enter");
    await t.waitFor(/API key \(Enter for none/);
    t.type(KEY);
    t.press("Enter");
    await t.waitFor(/Name of its variable in .env \[MYSERVER_API_KEY\]:/);
    t.press("Enter");
    const list = await t.waitFor(/Model \(number or name\):/);
    assert.match(list, /1\. alpha-1\s+2\. beta-2/, "the listed models, numbered and sorted");
    t.type("2");
    t.press("Enter");
    const done = await t.waitFor(/try it: agent chat -q hello/);
    assert.match(done, /testing beta-2 at http:\/\/127\.0\.0\.1:\d+\/v1… ok/);
    assert.match(done, /saved provider "myserver" \(beta-2 at/);
    assert.not.ok(done.includes(KEY), "the typed key is never echoed");
    assert.is(await t.waitForExit(), 0);
  } finally {
    t.kill();
  }
  const config = readFileSync(join(h, "config.yaml"), "utf8");
  assert.match(config, /model:\n\s+provider: myserver/);
  assert.match(config, new RegExp(`myserver:\\n\\s+base_url: ${fake.baseUrl.replace(/\./g, "\\.")}\\n\\s+model: beta-2\\n\\s+api_key_env: MYSERVER_API_KEY`));
  assert.not.ok(config.includes(KEY), "no key in config.yaml");
  assert.is(readFileSync(join(h, ".env"), "utf8"), `MYSERVER_API_KEY=${KEY}\n`);
  assert.is(statSync(join(h, ".env")).mode & 0o777, 0o600);
  const testCall = fake.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)!;
  assert.is(testCall.body.model, "beta-2", "the test call used the chosen model");

  const before = fake.requests.length;
  const chat = await runCli(["chat", "-q", "hello"], { home: h });
  assert.is(chat.code, 0, chat.stderr);
  assert.match(chat.stdout, /OK from the fake/);
  const sent = fake.requests.slice(before).find((r) => r.path.endsWith("/chat/completions"))!;
  assert.is(sent.headers.authorization, `Bearer ${KEY}`, "the chat uses the stored key");
  assert.is(sent.body.model, "beta-2");
  assert.not.ok(logsOf(h).includes(KEY), "the key never reaches a log");
});

test("interactive: an endpoint without a model list (404) lets the name be typed; the test call checks it", async () => {
  const h = home();
  const nolist = await startFakeModel({ models: null, respond: () => ({ text: "OK" }) });
  const t = new Tmux(setupCommand(h, `--provider nolist --base-url ${nolist.baseUrl}`), 110, 30);
  try {
    await t.waitFor(/API key \(Enter for none/);
    t.press("Enter");
    await t.waitFor(/has no model list \(GET \/models answered 404\)[\s\S]*Model name:/);
    t.type("typed-model");
    t.press("Enter");
    await t.waitFor(/saved provider "nolist" \(typed-model at/);
    assert.is(await t.waitForExit(), 0);
    assert.is(nolist.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)!.body.model, "typed-model");
  } finally {
    t.kill();
    await nolist.close();
  }
});

test("interactive on a configured home: shows the current setting and keeps it when told no", async () => {
  const h = home();
  const first = await runCli(["setup", "--provider", "mine", "--base-url", fake.baseUrl, "--key-stdin", "--model", "alpha-1", "-y"], {
    home: h,
    input: `${KEY}\n`,
  });
  assert.is(first.code, 0, first.stderr);
  const config = readFileSync(join(h, "config.yaml"), "utf8");
  const t = new Tmux(setupCommand(h), 110, 30);
  try {
    const screen = await t.waitFor(/Replace it\? \[y\/N\]/);
    assert.match(screen, /Current provider: mine: alpha-1 at http:\/\/127\.0\.0\.1:\d+\/v1, key MINE_API_KEY set/);
    t.press("Enter");
    await t.waitFor(/nothing changed/);
    assert.is(await t.waitForExit(), 0);
  } finally {
    t.kill();
  }
  assert.is(readFileSync(join(h, "config.yaml"), "utf8"), config);
});

test("flags: a script sets up a provider, the key from stdin; a configured home needs -y to replace", async () => {
  const h = home();
  const r = await runCli(["setup", "--provider", "mine", "--base-url", fake.baseUrl, "--key-stdin", "--model", "alpha-1", "--json"], {
    home: h,
    input: `${KEY}\n`,
  });
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.is(out.provider, "mine");
  assert.is(out.key_env, "MINE_API_KEY");
  assert.is(out.key_stored, true);
  assert.is(out.tested.reply, "OK from the fake");
  assert.not.ok(r.stdout.includes(KEY) || r.stderr.includes(KEY), "the key is never printed");
  assert.is(statSync(join(h, ".env")).mode & 0o777, 0o600);

  const config = readFileSync(join(h, "config.yaml"), "utf8");
  const again = await runCli(["setup", "--provider", "mine", "--base-url", fake.baseUrl, "--model", "beta-2"], { home: h });
  assert.is(again.code, 1);
  assert.match(again.stderr, /already set up \(mine, model alpha-1/);
  assert.is(readFileSync(join(h, "config.yaml"), "utf8"), config, "nothing changed");

  // -y replaces; the key already in .env (MINE_API_KEY) is used; a comment in config.yaml stays.
  writeFileSync(join(h, "config.yaml"), `# my notes\n${config}`);
  const replaced = await runCli(["setup", "--provider", "mine", "--base-url", fake.baseUrl, "--api-key-env", "MINE_API_KEY", "--model", "beta-2", "-y"], {
    home: h,
  });
  assert.is(replaced.code, 0, replaced.stderr);
  const after = readFileSync(join(h, "config.yaml"), "utf8");
  assert.match(after, /^# my notes/);
  assert.match(after, /model: beta-2/);
  const chat = await runCli(["chat", "-q", "hello"], { home: h });
  assert.is(chat.code, 0, chat.stderr);
});

test("bad input changes nothing: 401, unreachable URL, unknown model, empty list, invalid name, missing flags", async () => {
  const h = home();
  const cases: Array<{ args: string[]; input?: string; code: number; error: RegExp }> = [
    { args: ["--provider", "x", "--base-url", fake.baseUrl, "--key", "sk-wrong", "--model", "alpha-1"], code: 1, error: /refused the API key \(HTTP 401\)/ },
    { args: ["--provider", "x", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"], code: 1, error: /at http:\/\/127\.0\.0\.1:1\/v1 could not be reached/ },
    {
      args: ["--provider", "x", "--base-url", fake.baseUrl, "--key", KEY, "--model", "alpha"],
      code: 4,
      error: /does not list a model "alpha"; did you mean alpha-1\?/,
    },
    { args: ["--provider", "x", "--base-url", empty.baseUrl, "--model", "m"], code: 1, error: /lists no models/ },
    { args: ["--provider", "bad name!", "--base-url", fake.baseUrl, "--key", KEY, "--model", "alpha-1"], code: 2, error: /not a valid provider name/ },
    { args: ["--provider", "x", "--base-url", "ftp://example.com", "--model", "m"], code: 2, error: /must be http/ },
    { args: ["--provider", "openai", "--model", "gpt-4o"], code: 2, error: /needs an API key/ },
    { args: ["--provider", "x", "--model", "m"], code: 2, error: /needs --base-url/ },
    { args: ["--provider", "x", "--base-url", fake.baseUrl], code: 2, error: /needs --model/ },
    { args: ["--provider", "x", "--base-url", fake.baseUrl, "--key-stdin", "--model", "alpha-1"], input: "\n", code: 2, error: /got no key on stdin/ },
  ];
  for (const c of cases) {
    const r = await runCli(["setup", ...c.args, "-y"], { home: h, input: c.input });
    assert.is(r.code, c.code, `${c.args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, c.error, c.args.join(" "));
    assert.not.ok(existsSync(join(h, "config.yaml")), `${c.args.join(" ")} wrote config.yaml`);
    assert.not.ok(existsSync(join(h, ".env")), `${c.args.join(" ")} wrote .env`);
  }
  // --no-test skips the network: the same unreachable URL is then written as asked.
  const offline = await runCli(["setup", "--provider", "later", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--no-test", "-y"], { home: h });
  assert.is(offline.code, 0, offline.stderr);
  assert.match(offline.stdout, /no test call/);
  assert.match(readFileSync(join(h, "config.yaml"), "utf8"), /later:\n\s+base_url: http:\/\/127\.0\.0\.1:1\/v1\n\s+model: m\n/);
});

test.run();

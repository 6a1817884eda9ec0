// Provider sign-in (docs/auth.md) end to end: a real OAuth issuer (oidc-provider, device grant
// and refresh tokens), the real daemon and CLI, the official openai client calling the proxy,
// and a fake upstream that records the bearer it got.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { CLIENT_KEY, ENV_KEY, type ProxyHome, proxyHome } from "./helpers.js";
import { CLIENT_ID, type Issuer, startIssuer } from "./issuer.js";

let issuer: Issuer;
let h: ProxyHome;
let client: OpenAI;

/** Every token stored so far: none may reach a log file. */
const seen = new Set<string>();
const stored = () => {
  const t = JSON.parse(readFileSync(join(h.home, "auth.json"), "utf8")).providers.acme as { access_token: string; refresh_token: string };
  seen.add(t.access_token).add(t.refresh_token);
  return t;
};
const lastBearer = () => h.upstream.received.at(-1)!.headers.authorization;
const ask = () => client.chat.completions.create({ model: "m1", messages: [{ role: "user", content: "hi" }] });

test.before(async () => {
  issuer = await startIssuer();
  h = await proxyHome(`    oauth_issuer: ${issuer.url}\n    oauth_client_id: ${CLIENT_ID}\n    oauth_scopes: openid offline_access models`);
  const s = await h.startProxy();
  client = new OpenAI({ baseURL: s.url!, apiKey: CLIENT_KEY, maxRetries: 0 });
});

test.after(async () => {
  await h?.dispose();
  await issuer?.close();
});

test("before sign-in the API key is used; `agent auth login` runs the device grant end to end", async () => {
  await ask();
  assert.is(lastBearer(), `Bearer ${ENV_KEY}`);
  // Access tokens that expire within the refresh margin: the first call after login refreshes.
  issuer.accessTtl.seconds = 30;
  const child = spawn(process.execPath, [CLI, "auth", "login", "acme"], {
    env: { ...process.env, ...h.env, AGENT_HOME: h.home, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  const code = await waitFor("the verification URL and code", () => /open (\S+)\nand enter the code (\S+)/.exec(out));
  assert.is(code[1], `${issuer.url}/device`);
  await issuer.approve(code[2]!);
  assert.is(await exited, 0, err);
  assert.match(out, /signed in to acme/);
  assert.is(statSync(join(h.home, "auth.json")).mode & 0o777, 0o600);
  const status = await h.cli(["auth", "status", "--json"]);
  const entry = JSON.parse(status.stdout).providers[0];
  assert.is(entry.method, "oauth");
  assert.equal(entry.scopes, ["openid", "offline_access", "models"]);
  assert.ok(entry.refreshable);
  const { access_token, refresh_token } = stored();
  for (const text of [status.stdout, (await h.cli(["auth", "status"])).stdout, out, err]) {
    assert.not.ok(text.includes(access_token) || text.includes(refresh_token), "no token is ever printed");
  }
});

test("OAuth wins over the key; a token near expiry is refreshed before the call; ten concurrent calls make one refresh", async () => {
  const loginToken = stored().access_token;
  await ask();
  assert.is(issuer.refreshes(), 1);
  const fresh = stored().access_token;
  assert.is.not(fresh, loginToken);
  assert.is(lastBearer(), `Bearer ${fresh}`);
  // The new token also expires within the margin: ten parallel calls find it stale together.
  await Promise.all(Array.from({ length: 10 }, ask));
  assert.is(issuer.refreshes(), 2);
  const after = stored().access_token;
  for (const r of h.upstream.received.slice(-10)) assert.is(r.headers.authorization, `Bearer ${after}`);
});

test("a 401 from upstream refreshes once and the call is retried with the new token", async () => {
  issuer.accessTtl.seconds = 3600;
  await ask(); // refreshes the short-lived token into a long-lived one
  const long = stored().access_token;
  const refreshes = issuer.refreshes();
  await ask();
  assert.is(issuer.refreshes(), refreshes, "a fresh token is not refreshed");
  h.upstream.reject.add(long);
  const reply = await ask();
  assert.is(reply.choices[0]!.message.content, "hello");
  assert.is(issuer.refreshes(), refreshes + 1);
  const [refused, retried] = h.upstream.received.slice(-2);
  assert.is(refused!.headers.authorization, `Bearer ${long}`);
  assert.is(retried!.headers.authorization, `Bearer ${stored().access_token}`);
  assert.is.not(stored().access_token, long);
});

test("a chat turn uses the sign-in too, and refreshes once after a 401", async () => {
  const token = stored().access_token;
  const first = await h.cli(["chat", "-q", "hi"]);
  assert.is(first.code, 0, first.stderr);
  assert.is(first.stdout.trim(), "onetwothree");
  assert.is(lastBearer(), `Bearer ${token}`);
  const refreshes = issuer.refreshes();
  h.upstream.reject.add(token);
  const second = await h.cli(["chat", "-q", "again"]);
  assert.is(second.code, 0, second.stderr);
  assert.is(issuer.refreshes(), refreshes + 1);
  assert.is(lastBearer(), `Bearer ${stored().access_token}`);
  assert.is.not(stored().access_token, token);
});

test("a revoked refresh token: the caller is told to sign in again", async () => {
  await issuer.revokeAll();
  h.upstream.reject.add(stored().access_token);
  const error = await ask().catch((e) => e);
  assert.instance(error, OpenAI.AuthenticationError);
  assert.match(error.message, /sign in again: agent auth login acme/);
});

test("`agent auth logout` forgets the sign-in; the API key is used again", async () => {
  const r = await h.cli(["auth", "logout", "acme"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /signed out of acme/);
  await ask();
  assert.is(lastBearer(), `Bearer ${ENV_KEY}`);
  const entry = JSON.parse((await h.cli(["auth", "status", "--json"])).stdout).providers[0];
  assert.is(entry.method, "api_key");
  assert.is(entry.api_key_env, "ACME_KEY");
  assert.is(statSync(join(h.home, "auth.json")).mode & 0o777, 0o600);
});

test("no token of the sign-in, its refreshes or the API key reaches a log file", async () => {
  assert.ok(seen.size >= 6, String(seen.size));
  const dir = join(h.home, "logs");
  const text = readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
  assert.ok(text.length > 0);
  for (const secret of [...seen, ENV_KEY, CLIENT_KEY]) assert.not.ok(text.includes(secret), `a token is in ${dir}`);
});

test.run();

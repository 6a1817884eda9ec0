// Where the gateway may listen and how its access settings are configured: a non-loopback bind
// needs a token, the token is a secret (never set into config.yaml by `config set`), and the
// origin/host lists are checked when the config is.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { killQuietly, runCli, tempHome } from "../helpers/cli.js";
import { raw } from "./access-helpers.js";

test("a non-loopback gateway.host without a token refuses to start, naming gateway.token and AGENT_GATEWAY_TOKEN", async () => {
  const { home, cleanup } = tempHome("gwb");
  try {
    const env = { AGENT_GATEWAY_HOST: "0.0.0.0" };
    const r = await runCli(["daemon", "start"], { home, env });
    assert.is(r.code, 69, r.stderr);
    assert.match(r.stderr, /gateway\.host is 0\.0\.0\.0, which is not a loopback address/);
    assert.match(r.stderr, /gateway\.token/);
    assert.match(r.stderr, /AGENT_GATEWAY_TOKEN/);
    assert.is((await runCli(["daemon", "status"], { home, env })).code, 3);
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test("a non-loopback gateway.host with a token starts, and every call needs the token", async () => {
  const { home, cleanup } = tempHome("gwb");
  const env = { AGENT_GATEWAY_HOST: "0.0.0.0", AGENT_GATEWAY_TOKEN: "lan-token" };
  let pid = 0;
  try {
    const r = await runCli(["daemon", "start", "--json"], { home, env });
    assert.is(r.code, 0, r.stderr);
    const status = JSON.parse((await runCli(["daemon", "status", "--json"], { home, env })).stdout);
    pid = status.pid;
    assert.is(status.gateway_token_set, true);
    const port = new URL(status.gateway_url).port;
    const url = `http://127.0.0.1:${port}`;
    assert.is((await raw(url, "/metadata")).status, 401);
    // Any Host is served on a non-loopback bind (the token is the guard there).
    const ok = await raw(url, "/metadata", { headers: { authorization: "Bearer lan-token", host: `192.0.2.1:${port}` } });
    assert.is(ok.status, 200, ok.text);
  } finally {
    await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
    if (pid) killQuietly(pid);
    cleanup();
  }
});

test("config: the gateway token cannot be set into config.yaml, origin lists can, and bad entries are refused", async () => {
  const { home, cleanup } = tempHome("gwb");
  try {
    const secret = await runCli(["config", "set", "gateway.token", "abc"], { home });
    assert.is(secret.code, 2);
    assert.match(secret.stderr, /AGENT_GATEWAY_TOKEN=<value> in \$AGENT_HOME\/\.env/);
    const set = await runCli(["config", "set", "gateway.cors_origins", "https://app.example, http://localhost:5173", "--json"], { home });
    assert.is(set.code, 0, set.stderr);
    assert.equal(JSON.parse(set.stdout).value, ["https://app.example", "http://localhost:5173"]);
    const bad = await runCli(["config", "set", "gateway.cors_origins", "localhost:5173"], { home });
    assert.is(bad.code, 2);
    assert.match(bad.stderr, /gateway\.cors_origins has an invalid entry: "localhost:5173" is not an origin/);
    const badHost = await runCli(["config", "set", "gateway.allowed_hosts", "http://x"], { home });
    assert.is(badHost.code, 2);
    assert.match(badHost.stderr, /gateway\.allowed_hosts has an invalid entry/);
    const got = await runCli(["config", "get", "gateway.cors_origins", "--json"], { home });
    assert.equal(JSON.parse(got.stdout).value, ["https://app.example", "http://localhost:5173"]);
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test("an invalid gateway.cors_origins in config.yaml stops the start with an error naming the key", async () => {
  const { home, cleanup } = tempHome("gwb");
  try {
    writeFileSync(join(home, "config.yaml"), "_config_version: 13\ngateway:\n  cors_origins: https://one.example\n");
    const r = await runCli(["daemon", "start"], { home });
    assert.is.not(r.code, 0);
    assert.match(r.stderr, /gateway\.cors_origins must be a list of strings/);
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test("a token put in .env takes effect at the next reload", async () => {
  const { home, cleanup } = tempHome("gwb");
  let pid = 0;
  try {
    const r = await runCli(["daemon", "start", "--json"], { home });
    assert.is(r.code, 0, r.stderr);
    const status = JSON.parse((await runCli(["daemon", "status", "--json"], { home })).stdout);
    pid = status.pid;
    assert.is(status.gateway_token_set, false);
    assert.is((await raw(status.gateway_url, "/metadata")).status, 200);
    writeFileSync(join(home, ".env"), "AGENT_GATEWAY_TOKEN=from-dotenv\n");
    assert.is((await runCli(["daemon", "reload"], { home })).code, 0);
    assert.is((await raw(status.gateway_url, "/metadata")).status, 401);
    assert.is((await raw(status.gateway_url, "/metadata", { headers: { authorization: "Bearer from-dotenv" } })).status, 200);
    assert.is(JSON.parse((await runCli(["daemon", "status", "--json"], { home })).stdout).gateway_token_set, true);
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    if (pid) killQuietly(pid);
    cleanup();
  }
});

test.run();

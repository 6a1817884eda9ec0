// Secrets never reach a log: the gateway and inspector tokens and the API keys of .env are
// planted, requests that fail in every way a token travels are made (RivetKit's
// `/gateway/<id>@<token>/…` path, the x-rivet-token and Authorization headers, header routing,
// the inspector, a query string, a WebSocket subprotocol, an actor's error quoting a key), and
// every file under $AGENT_HOME/logs is searched for them; then credentials the daemon does not
// know (GitHub and Slack tokens, `--password X`, a signed URL's `sig=`) quoted by an actor.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { killQuietly, launchDaemon, runCli, tempHome, waitFor } from "../helpers/cli.js";
import { raw } from "../gateway/access-helpers.js";

const TOKEN = "gwTok-9f3a1c77e2d04b55";
const INSPECTOR = "inspTok-0b8e44d1a9c6";
const API_KEY = "sk-test-5c1d9e7a3b2f48e0";
const DB_PASSWORD = "pw-7d2e9a1f4c";
const PROFILE_KEY = "sk-ant-profile-2b7c9d1e0f";

const MODULE = `
export const leaky = {
  state: { n: 0 },
  actions: {
    crash: () => { throw new Error("internal failure"); },
    // User code quoting a secret of the environment in an error nobody planned for.
    leak: () => { console.log("calling with", process.env.OPENAI_API_KEY); console.error("auth: Bearer " + process.env.OPENAI_API_KEY); throw new Error("cannot call the provider with key " + process.env.OPENAI_API_KEY); },
    get: (c) => c.state.n,
    // A caller passes a key to an action whose crash quotes its input.
    echoCrash: (c, x) => { throw new Error("cannot use " + x); },
  },
  onRequest: async () => { throw new Error("request handler failed"); },
};
`;

const { home, cleanup } = tempHome("sec");
const env = { AGENT_GATEWAY_PORT: "0" };
let url = "";
let pid = 0;
let actor = "";

function logText(): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(`--- ${p}\n${readFileSync(p, "utf8")}`);
    }
  };
  walk(join(home, "logs"));
  return out.join("\n");
}

test.before(async () => {
  mkdirSync(join(home, "actors"), { recursive: true });
  writeFileSync(join(home, "actors", "leaky.mjs"), MODULE);
  writeFileSync(join(home, "config.yaml"), "logs:\n  level: debug\n");
  writeFileSync(
    join(home, ".env"),
    `AGENT_GATEWAY_TOKEN=${TOKEN}\nAGENT_INSPECTOR_TOKEN=${INSPECTOR}\nOPENAI_API_KEY=${API_KEY}\nDB_PASSWORD=${DB_PASSWORD}\n`,
  );
  ({ url, pid } = await launchDaemon(home, env));
  // A profile with its own .env, read once by the daemon (agent profile show).
  const made = await runCli(["profile", "create", "work"], { home, env });
  if (made.code !== 0) throw new Error(`profile create failed: ${made.stderr}`);
  writeFileSync(join(home, "profiles", "work", ".env"), `ANTHROPIC_API_KEY=${PROFILE_KEY}\n`);
  const shown = await runCli(["profile", "show", "work"], { home, env });
  if (shown.code !== 0) throw new Error(`profile show failed: ${shown.stderr}`);
  const auth = { authorization: `Bearer ${TOKEN}` };
  const deadline = Date.now() + 10_000;
  while (!(await raw(url, "/metadata", { headers: auth })).json?.actorNames?.leaky) {
    if (Date.now() > deadline) throw new Error("the test module was not registered in time");
    await new Promise((r) => setTimeout(r, 50));
  }
  const created = await raw(url, "/actors", {
    method: "PUT",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "leaky", key: "k", runner_name_selector: "default", crash_policy: "sleep" }),
  });
  actor = created.json.actor.actor_id;
});

test.after(async () => {
  await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
  killQuietly(pid);
  cleanup();
});

const post = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ args: [] }) };

test("no token, key or password reaches any log after failing requests of every form", async () => {
  // RivetKit's path form, an internal error (logged with its path).
  const a = await raw(url, `/gateway/${actor}@${TOKEN}/action/crash`, post);
  assert.is(a.status, 500, a.text);
  // The same with the token percent-encoded and a query string carrying it too.
  const b = await raw(url, `/gateway/${actor}@${encodeURIComponent(TOKEN)}/request/x?token=${TOKEN}&x-rivet-token=${TOKEN}`, { method: "GET" });
  assert.ok(b.status >= 400, b.text);
  // Header forms: x-rivet-token and Authorization, with header routing.
  const c = await raw(url, "/action/crash", {
    ...post,
    headers: { ...post.headers, "x-rivet-target": "actor", "x-rivet-actor": actor, "x-rivet-token": TOKEN },
  });
  assert.is(c.status, 500, c.text);
  const d = await raw(url, `/gateway/${actor}/action/leak`, { ...post, headers: { ...post.headers, authorization: `Bearer ${TOKEN}` } });
  assert.ok(d.status >= 400, d.text);
  // Header routing to an unknown target, with a cookie.
  const e = await raw(url, "/action/x", {
    ...post,
    headers: { ...post.headers, "x-rivet-target": "nowhere", "x-rivet-token": TOKEN, cookie: `session=${TOKEN}` },
  });
  assert.ok(e.status >= 400, e.text);
  // The inspector: a wrong token, then the gateway token in place of the inspector's, then the right one on a bad route.
  for (const bearer of ["wrong-inspector-token", TOKEN, INSPECTOR]) {
    const r = await raw(url, `/gateway/${actor}/inspector/state?token=${bearer}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${bearer}`, "x-rivet-token": TOKEN, "content-type": "application/json" },
      body: "{not json",
    });
    assert.ok(r.status >= 400, r.text);
  }
  // Keys passed to an action that crashes quoting them (the home's and the profile's).
  for (const key of [API_KEY, PROFILE_KEY]) {
    const r = await raw(url, `/gateway/${actor}/action/echoCrash`, {
      ...post,
      headers: { ...post.headers, "x-rivet-token": TOKEN },
      body: JSON.stringify({ args: [key] }),
    });
    assert.ok(r.status >= 400, r.text);
  }
  // A WebSocket upgrade to a missing actor, the token in the RivetKit subprotocol and the path.
  await new Promise<void>((resolve) => {
    const u = new URL(url);
    const s = connect(Number(u.port), u.hostname, () => {
      s.write(
        `GET /gateway/nope@${TOKEN}/connect?token=${TOKEN} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: rivet, rivet_token.${TOKEN}\r\n\r\n`,
      );
    });
    s.on("data", () => s.end());
    s.on("close", () => resolve());
    s.on("error", () => resolve());
  });
  // A malformed request line carrying the token.
  await new Promise<void>((resolve) => {
    const u = new URL(url);
    const s = connect(Number(u.port), u.hostname, () =>
      s.write(`GET /gateway/x@${TOKEN}/ HTTP/1.1\r\nAuthorization: Bearer ${TOKEN}\r\nbad header line\r\n\r\n`),
    );
    s.on("data", () => s.end());
    s.on("close", () => resolve());
    s.on("error", () => resolve());
  });
  // The daemon's own lines are appended synchronously; what the actor printed (the leak action's
  // console lines) arrives from its runner a moment later: wait for those lines, whatever they hold.
  const logs = await waitFor("the leak action's console lines in the logs", () => {
    const text = logText();
    return /calling with /.test(text) && /auth: Bearer /.test(text) && text;
  });
  // The failures were logged (so the search below looks at real lines).
  assert.match(logs, /gateway request failed/);
  assert.match(logs, /cannot use \[redacted\]/);
  for (const secret of [TOKEN, encodeURIComponent(TOKEN), INSPECTOR, API_KEY, DB_PASSWORD, PROFILE_KEY]) {
    const at = logs.indexOf(secret);
    assert.is(at, -1, `a secret is in the logs: ${logs.slice(Math.max(0, at - 300), at + 100)}`);
  }
  assert.match(logs, /\[redacted\]/);
});

test("credentials the daemon does not know are removed by their shape or place: GitHub and Slack tokens, --password X, a signed URL's sig", async () => {
  const GH = "ghp_Q7xLm2Vb9Rt4Kc8Np1Wz6Ys3Hd5Fg0Ja2Be7";
  const SLACK = "xoxb-2048-4096-PlAnTeDsLaCkToKeN01";
  const PASSWORD = "hunter2-unknown-pw";
  const SIG = "SiGnAtUrE0123456789abcdef";
  for (const quoted of [
    `clone with ${GH}`,
    `post with ${SLACK}`,
    `mysql --user bob --password ${PASSWORD} -h db`,
    `GET https://blob.example/f?sv=1&sig=${SIG}&sp=r`,
  ]) {
    const r = await raw(url, `/gateway/${actor}/action/echoCrash`, {
      ...post,
      headers: { ...post.headers, "x-rivet-token": TOKEN },
      body: JSON.stringify({ args: [quoted] }),
    });
    assert.ok(r.status >= 400, r.text);
  }
  // Each crash is logged (so the search below looks at real lines): wait for the four.
  const logs = await waitFor("the four crashes in the logs", () => {
    const text = logText();
    return (
      ["cannot use clone with ", "cannot use post with ", "cannot use mysql --user bob", "cannot use GET https://blob.example/f?sv=1"].every((l) =>
        text.includes(l),
      ) && text
    );
  });
  assert.match(logs, /clone with \[redacted\]/);
  assert.match(logs, /post with \[redacted\]/);
  assert.match(logs, /--password \[redacted\] -h db/);
  assert.match(logs, /&sig=\[redacted\]&sp=r/);
  for (const secret of [GH, SLACK, PASSWORD, SIG]) {
    const at = logs.indexOf(secret);
    assert.is(at, -1, `a credential is in the logs: ${logs.slice(Math.max(0, at - 300), at + 100)}`);
  }
});

test("the id of the actor stays in the logged path (only the token goes)", () => {
  const logs = logText();
  assert.ok(logs.includes(`/gateway/${actor}@[redacted]/action/crash`), "the failing path is logged with its token removed");
});

test.run();

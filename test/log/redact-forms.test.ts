// The one log redactor (daemon/log/redact.ts) beyond `Bearer`: `api-key:` / `x-api-key:` header
// lines, the string values of JSON credential fields (plain, and JSON-escaped inside a log line),
// `?key=` / `?access_token=` / `?sig=` / `&signature=` query values, `--password X` style
// options, `sk-…`, GitHub (`ghp_…`, `github_pat_…`) and Slack (`xoxb-…`) tokens by their shape,
// and the values of the variables the config names as credentials whatever their names.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { REDACTED, Redactor, secretsOf } from "../../daemon/log/redact.js";

const r = new Redactor();
const clean = (text: string) => r.text(text);

test("api-key: and x-api-key: header lines", () => {
  assert.is(clean("sent api-key: 0a1b2c3d4e5f6a7b8c9d"), `sent api-key: ${REDACTED}`);
  assert.is(clean("headers: Api-Key=0a1b2c3d4e5f, accept: */*"), `headers: Api-Key=${REDACTED}, accept: */*`);
  assert.is(clean("x-api-key: azure-0123456789abcdef\nnext line"), `x-api-key: ${REDACTED}\nnext line`);
});

test("JSON credential fields: the value goes, the field name and the rest stay", () => {
  const body = JSON.stringify({
    access_token: "at-0123456789",
    refresh_token: "rt-0123456789",
    id_token: "eyJhbGciOi.eyJzdWIi.sig",
    client_secret: "cs-0123456789",
    api_key: "ak-0123456789",
    token_type: "Bearer",
    expires_in: 3600,
    scope: "openid offline_access",
  });
  const out = clean(`issuer answered ${body}`);
  for (const v of ["at-0123456789", "rt-0123456789", "eyJhbGciOi", "cs-0123456789", "ak-0123456789"]) assert.not.ok(out.includes(v), `${v} in ${out}`);
  assert.ok(out.includes(`"access_token":"${REDACTED}"`), out);
  assert.ok(out.includes(`"id_token":"${REDACTED}"`), out);
  assert.ok(out.includes('"expires_in":3600') && out.includes('"scope":"openid offline_access"'), out);
  // Inside a serialized log line the quoted body is JSON-escaped: still found.
  const line = JSON.stringify({ level: "warn", msg: `refresh failed: ${body}` });
  const redacted = clean(line);
  assert.not.ok(redacted.includes("rt-0123456789"), redacted);
  assert.not.ok(redacted.includes("cs-0123456789"), redacted);
  assert.not.throws(() => JSON.parse(redacted), redacted);
  assert.ok(JSON.parse(redacted).msg.includes(`"refresh_token":"${REDACTED}"`), redacted);
  // With spaces, and a name the record redactor also knows.
  assert.is(clean('{ "client_secret" : "abc123def456" }'), `{ "client_secret" : "${REDACTED}" }`);
  // Numbers and other fields are left alone.
  assert.is(clean('{"tokens":12,"max_tokens":"34"}'), '{"tokens":12,"max_tokens":"34"}');
});

test("?key= and ?access_token= query values, and other key-like parameters", () => {
  assert.is(
    clean("GET https://generativelanguage.example/v1/models?key=AIzaSyA-0123456789&alt=sse"),
    `GET https://generativelanguage.example/v1/models?key=${REDACTED}&alt=sse`,
  );
  assert.is(clean("/callback?code=1&access_token=at-98765&state=x"), `/callback?code=1&access_token=${REDACTED}&state=x`);
  assert.is(clean("POST body grant_type=refresh_token&client_secret=cs-5555&x=1"), `POST body grant_type=refresh_token&client_secret=${REDACTED}&x=1`);
  assert.is(clean("?api-key=k-1234567&subscription-key=sk99999"), `?api-key=${REDACTED}&subscription-key=${REDACTED}`);
  // A parameter that merely ends in "key" letters is not a key.
  assert.is(clean("/search?monkey=banana&turkey=1"), "/search?monkey=banana&turkey=1");
});

test("a URL's password: with a user, without one (redis://:pw@), and with a raw @ in it", () => {
  assert.is(clean("connect https://bob:s3cret-pw@db.example/x"), `connect https://bob:${REDACTED}@db.example/x`);
  assert.is(clean("cache redis://:r3dis-pw-123@127.0.0.1:6379/0"), `cache redis://:${REDACTED}@127.0.0.1:6379/0`);
  assert.is(clean("db postgres://:pg-pass-987@db/x ok"), `db postgres://:${REDACTED}@db/x ok`);
  assert.is(clean("https://bob:half@other-half@host/x"), `https://bob:${REDACTED}@host/x`);
  // No userinfo: nothing changes.
  for (const plain of ["http://127.0.0.1:8080/a@b", "see http://localhost:3000/x and mail a@b.example", "ws://[::1]:9/x"]) assert.is(clean(plain), plain);
  const line = JSON.stringify({ msg: "url redis://:r3dis-pw-123@h:1" });
  assert.not.ok(clean(line).includes("r3dis-pw-123"));
});

test("sk-… keys by their shape, wherever they appear", () => {
  for (const key of ["sk-0123456789abcdefABCDEF", "sk-proj-AbCdEf0123456789_xyz-QRST", "sk-ant-api03-0123456789abcdefghij-KLMN"]) {
    const out = clean(`the provider refused key ${key}.`);
    assert.is(out, `the provider refused key ${REDACTED}.`);
  }
  assert.is(clean(JSON.stringify({ msg: "key=sk-0123456789abcdefXYZ" })), JSON.stringify({ msg: `key=${REDACTED}` }));
  // Short or embedded look-alikes stay.
  assert.is(clean("use sk-learn and task-0123456789abcdefgh"), "use sk-learn and task-0123456789abcdefgh");
});

test("the variables the config names as credentials are known secrets, whatever their names", () => {
  const env = {
    OPENROUTER: "or-secret-value-0123",
    TG_BOT: "123456:tg-secret-value",
    HOOK: "hook-secret-value-99",
    HOME: "/home/someone",
    PATH: "/usr/bin",
  };
  const config = {
    providers: { router: { base_url: "https://x", api_key_env: "OPENROUTER" } },
    messaging: { telegram: { token_env: "TG_BOT", webhook_secret_env: "HOOK", allowed_users: "1,2" } },
    mcp_servers: { gh: { command: "gh-mcp", env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp-mcp-value-0123", LOG_LEVEL: "debug" } } },
  };
  const secrets = secretsOf(config, env);
  for (const v of ["or-secret-value-0123", "123456:tg-secret-value", "hook-secret-value-99", "ghp-mcp-value-0123"]) assert.ok(secrets.includes(v), v);
  for (const v of ["/home/someone", "/usr/bin", "debug", "1,2"]) assert.not.ok(secrets.includes(v), v);
  const redactor = new Redactor();
  redactor.setSecrets("config", secrets);
  assert.is(redactor.text("calling with or-secret-value-0123 and 123456:tg-secret-value"), `calling with ${REDACTED} and ${REDACTED}`);
});

test("a streamed sk- key or ?key= value split across two writes is held until whole", () => {
  const cutAt = (text: string) => r.safeCut(text);
  const first = "log: refused sk-0123456";
  assert.ok(cutAt(first) <= first.indexOf("sk-"), `cut ${cutAt(first)}`);
  const q = "GET /v1/models?key=AIzaSy";
  assert.ok(cutAt(q) <= q.indexOf("?key="), `cut ${cutAt(q)}`);
});

test("signed URLs: ?sig= and &signature= values go, the rest of the URL stays", () => {
  assert.is(
    clean("GET https://acct.blob.example/c/f.png?sv=2024-01-01&se=2026-12-01&sig=AbC%2Bdef0123456789%3D&sp=r"),
    `GET https://acct.blob.example/c/f.png?sv=2024-01-01&se=2026-12-01&sig=${REDACTED}&sp=r`,
  );
  assert.is(clean("/dl?id=7&signature=9f86d081884c7d65&expires=1"), `/dl?id=7&signature=${REDACTED}&expires=1`);
  assert.is(clean("s3 ?X-Amz-Signature=abcdef0123456789&X-Amz-Date=1"), `s3 ?X-Amz-Signature=${REDACTED}&X-Amz-Date=1`);
  // A parameter that only ends in "sig" letters is not a signature.
  assert.is(clean("/q?design=flat&config=1"), "/q?design=flat&config=1");
});

test("credential options of a command: --password X, --token=X, --api-key X, also as a quoted argv list", () => {
  assert.is(clean("ran mysql --user bob --password hunter2pw -h db"), `ran mysql --user bob --password ${REDACTED} -h db`);
  assert.is(clean("gh auth --token=tk-0123456789 --verbose"), `gh auth --token=${REDACTED} --verbose`);
  assert.is(clean("tool --api-key 'ak-0123456789' run"), `tool --api-key ${REDACTED} run`);
  assert.is(clean("cli --client-secret cs-999999 --api_key ak-1111111"), `cli --client-secret ${REDACTED} --api_key ${REDACTED}`);
  assert.is(clean('argv ["--token","tk-0123456789","--x"]'), `argv ["--token","${REDACTED}","--x"]`);
  // JSON-escaped inside a serialized log line: still found, and the line still parses.
  const line = JSON.stringify({ msg: 'spawn ["login","--password","pw-0123456789"]' });
  const out = clean(line);
  assert.not.ok(out.includes("pw-0123456789"), out);
  assert.not.throws(() => JSON.parse(out), out);
  // Not a credential: another option, a file holding one, a count of tokens.
  assert.is(clean("--token --verbose"), "--token --verbose");
  assert.is(clean("--password-file /run/pw --max-tokens 100"), "--password-file /run/pw --max-tokens 100");
  // An option that ends its line takes nothing from the next one (a transcript, a usage text).
  assert.is(clean("error: missing value for --token\nnext step: retry"), "error: missing value for --token\nnext step: retry");
  assert.is(clean("usage: agent login --password\r\n  prompts for it"), "usage: agent login --password\r\n  prompts for it");
});

test("long lines of option-like text are redacted in linear time (no backtracking blow-up)", () => {
  for (const line of ["-".repeat(65536), "--a".repeat(20000), "--token-".repeat(8000), `--${"a-".repeat(30000)}`]) {
    const began = performance.now();
    r.text(line);
    r.safeCut(line);
    // Quadratic patterns took seconds here; linear ones take a few milliseconds.
    assert.ok(performance.now() - began < 500, `${line.slice(0, 10)}…: ${Math.round(performance.now() - began)} ms`);
  }
});

test("GitHub and Slack tokens by their shape", () => {
  const ghp = `ghp_${"a1B2c3D4e5".repeat(3)}abcdef`;
  const pat = `github_pat_11ABCDEFG0${"x".repeat(30)}_${"Y".repeat(20)}`;
  const xoxb = "xoxb-1234567890-0987654321-AbCdEfGhIjKl";
  const xoxp = "xoxp-1234567890-1234567890-1234567890-abcdef0123456789";
  const out = clean(`clone with ${ghp}, pat ${pat}; slack ${xoxb} and ${xoxp}.`);
  assert.is(out, `clone with ${REDACTED}, pat ${REDACTED}; slack ${REDACTED} and ${REDACTED}.`);
  // Words that merely start so stay.
  assert.is(clean("ghp_ is GitHub's prefix; xoxb- is Slack's"), "ghp_ is GitHub's prefix; xoxb- is Slack's");
});

test("a streamed GitHub token or &sig= value split across two writes is held until whole", () => {
  const t = "pushing with ghp_abc";
  assert.ok(r.safeCut(t) <= t.indexOf("ghp_"), `cut ${r.safeCut(t)}`);
  const s = "GET /f?sv=1&sig=AbC";
  assert.ok(r.safeCut(s) <= s.indexOf("&sig="), `cut ${r.safeCut(s)}`);
});

test.run();

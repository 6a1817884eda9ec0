// The shared access rules (daemon/http/access.ts) every HTTP listener of the daemon uses, as
// units: what counts as loopback, the Origin and Host decisions, the token comparison.
import type { IncomingMessage } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { AccessGuard, ListenerKey, assertBindAllowed, isLoopbackHost, listenerAccess, tokensFromRequest } from "../../daemon/http/access.js";

const req = (headers: Record<string, string>) => ({ headers, method: "GET" }) as unknown as IncomingMessage;
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

test("loopback addresses are 127.0.0.0/8, ::1 and localhost; 0.0.0.0 and LAN addresses are not", () => {
  for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"]) assert.ok(isLoopbackHost(h), h);
  for (const h of ["0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "example.com", "128.0.0.1"]) assert.not.ok(isLoopbackHost(h), h);
});

test("a listener on a non-loopback address needs a token; the error names where to set it", () => {
  const names = { config: "proxy.token", env: "AGENT_PROXY_TOKEN", listener: "proxy" as const, hostKey: "proxy.host" };
  assert.not.throws(() => assertBindAllowed("127.0.0.1", "", names));
  assert.not.throws(() => assertBindAllowed("0.0.0.0", "t", names));
  assert.throws(() => assertBindAllowed("0.0.0.0", "", names), /proxy\.host is 0\.0\.0\.0.*proxy\.token.*AGENT_PROXY_TOKEN/);
});

test("ListenerKey: a non-loopback bind needs a key; the key is the bearer, anything else is refused", () => {
  const names = { config: "api_server.key", env: "API_SERVER_KEY", listener: "api_server" as const, hostKey: "api_server.host" };
  assert.throws(() => new ListenerKey("0.0.0.0", "", names), /api_server\.host is 0\.0\.0\.0.*API_SERVER_KEY/);
  const open = new ListenerKey("127.0.0.1", "", names);
  assert.not.ok(open.required);
  assert.ok(open.allows(req({})));
  const keyed = new ListenerKey("0.0.0.0", "k-1", names);
  assert.ok(keyed.required);
  assert.ok(keyed.allows(req({ authorization: "Bearer k-1" })));
  assert.not.ok(keyed.allows(req({ authorization: "Bearer k-2" })));
  assert.not.ok(keyed.allows(req({})));
  assert.not.ok(keyed.allows(req({ authorization: "k-1" })));
  assert.not.match(keyed.unauthorized().message, /k-1/);
});

test("listenerAccess: cors_origins * needs a key, on loopback too; exact origins do not", () => {
  const names = { config: "proxy.token", env: "AGENT_PROXY_TOKEN", listener: "proxy" as const, hostKey: "proxy.host" };
  const build = (bindHost: string, key: string, corsOrigins: string[]) => () => listenerAccess({ bindHost, key, corsOrigins, allowedHosts: [], names });
  assert.is(codeOf(build("127.0.0.1", "", ["*"])), "proxy.cors_wildcard_needs_key");
  assert.is(codeOf(build("127.0.0.1", "", ["https://a.example", " * "])), "proxy.cors_wildcard_needs_key");
  assert.throws(build("127.0.0.1", "", ["*"]), /proxy\.cors_origins lists "\*" and no key is set.*proxy\.token.*AGENT_PROXY_TOKEN/);
  // The bind rule is checked first: its error is the one that names the host.
  assert.is(codeOf(build("0.0.0.0", "", ["*"])), "proxy.token_required");
  assert.is(codeOf(build("127.0.0.1", "k-1", ["*"])), "ok");
  assert.is(codeOf(build("127.0.0.1", "", ["https://a.example"])), "ok");
  assert.is(codeOf(build("127.0.0.1", "", [])), "ok");
  const { key, guard } = listenerAccess({ bindHost: "127.0.0.1", key: "k-1", corsOrigins: ["*"], allowedHosts: [], names });
  assert.ok(key.required);
  assert.is(guard.check(req({ host: "127.0.0.1:1", origin: "https://b.example" }))?.["access-control-allow-origin"], "*");
});

test("a listed * grants any origin without credentials", () => {
  const guard = new AccessGuard({ bindHost: "127.0.0.1", corsOrigins: ["*"] });
  assert.equal(guard.check(req({ host: "127.0.0.1:1", origin: "https://any.example" })), {
    "access-control-allow-origin": "*",
    "access-control-expose-headers": "*",
  });
});

test("listed origins are matched after normalization, never by prefix", () => {
  const guard = new AccessGuard({ bindHost: "127.0.0.1", corsOrigins: ["HTTPS://App.Example:443/"] });
  assert.is(guard.check(req({ host: "localhost", origin: "https://app.example" }))!["access-control-allow-origin"], "https://app.example");
  for (const origin of ["https://app.example.evil.com", "http://app.example", "https://app.example:8443", "null"]) {
    assert.is(
      codeOf(() => guard.check(req({ host: "localhost", origin }))),
      "auth.forbidden_origin",
      origin,
    );
  }
});

test("a non-loopback bind serves any Host unless allowed_hosts lists some", () => {
  assert.is(
    codeOf(() => new AccessGuard({ bindHost: "0.0.0.0", token: "t" }).check(req({ host: "whatever.example" }))),
    "ok",
  );
  const listed = new AccessGuard({ bindHost: "0.0.0.0", token: "t", allowedHosts: ["agent.lan:6420"] });
  assert.is(
    codeOf(() => listed.check(req({ host: "agent.lan:6420" }))),
    "ok",
  );
  assert.is(
    codeOf(() => listed.check(req({ host: "agent.lan:80" }))),
    "auth.forbidden_host",
  );
  assert.is(
    codeOf(() => listed.check(req({ host: "localhost:6420" }))),
    "ok",
  );
});

test("the token matches only exactly, from any of the places a client sends it", () => {
  const guard = new AccessGuard({ bindHost: "127.0.0.1", token: "s3cret" });
  assert.ok(guard.tokenRequired);
  assert.ok(guard.anyTokenMatches(tokensFromRequest(req({ authorization: "bearer  s3cret " }))));
  assert.ok(guard.anyTokenMatches(tokensFromRequest(req({ "x-rivet-token": "s3cret" }))));
  assert.ok(guard.anyTokenMatches(tokensFromRequest(req({ authorization: "Bearer other" }), "s3cret")));
  for (const t of ["", "s3cre", "s3cret ", "S3CRET", "s3cret\0"])
    assert.not.ok(guard.anyTokenMatches(tokensFromRequest(req({ "x-rivet-token": t }))), JSON.stringify(t));
  assert.not.ok(new AccessGuard({ bindHost: "127.0.0.1" }).tokenMatches(""));
});

test.run();

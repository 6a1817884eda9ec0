// The credential store (daemon/models/credentials.ts) as a unit, against the real issuer
// (oidc-provider) on loopback, with a manual clock: the refresh margin is decided by the clock,
// not by waiting; two stores on one auth.json stand for two processes of one home.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CredentialStore, REFRESH_MARGIN_MS } from "../../daemon/models/credentials.js";
import { ManualClock } from "../../shared/clock.js";
import { CLIENT_ID, type Issuer, startIssuer } from "./issuer.js";

let issuer: Issuer;
let dir: string;

test.before(async () => {
  issuer = await startIssuer();
  dir = mkdtempSync(join(tmpdir(), "cred-"));
});

test.after(async () => {
  await issuer?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the token is kept until it is within the margin of its expiry, then refreshed once for concurrent callers", async () => {
  const clock = new ManualClock(Date.now());
  const store = new CredentialStore(join(dir, "auth.json"), clock);
  issuer.accessTtl.seconds = 3600;
  await store.login("acme", { issuer: issuer.url, clientId: CLIENT_ID, scopes: "openid offline_access" }, (p) => void issuer.approve(p.user_code));
  const first = await store.accessToken("acme");
  const before = issuer.refreshes();
  // Seconds of slack either side: the issuer counts expiry in whole seconds from its own clock.
  clock.advance(3600_000 - REFRESH_MARGIN_MS - 10_000);
  assert.is(await store.accessToken("acme"), first, "not yet within the margin");
  assert.is(issuer.refreshes(), before);
  clock.advance(20_000);
  const tokens = await Promise.all(Array.from({ length: 10 }, () => store.accessToken("acme")));
  assert.is(issuer.refreshes(), before + 1, "one refresh for ten callers");
  assert.is(new Set(tokens).size, 1);
  assert.is.not(tokens[0], first);
});

test("a second process's refresh is picked up from auth.json instead of refreshing again", async () => {
  const a = new CredentialStore(join(dir, "auth.json"));
  const b = new CredentialStore(join(dir, "auth.json"));
  const used = await a.accessToken("acme");
  const before = issuer.refreshes();
  const fromA = await a.afterUnauthorized("acme", used);
  // b saw the old token refused too: a already replaced it, so b takes a's.
  assert.is(await b.afterUnauthorized("acme", used), fromA);
  assert.is(issuer.refreshes(), before + 1);
});

test.run();

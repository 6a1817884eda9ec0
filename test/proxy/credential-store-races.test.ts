// Review (rev4) of the credential store under two processes of one home: a refresh that was on
// its way while another process signed out (or signed in again) must not write its result over
// that change. Two stores on one auth.json stand for two processes (as credential-store.test.ts);
// the refresh is held at the issuer's token endpoint until the other process's change is on disk.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CredentialStore } from "../../daemon/models/credentials.js";
import { CLIENT_ID, type Issuer, startIssuer } from "./issuer.js";

let issuer: Issuer;
let dir: string;
const realFetch = globalThis.fetch;
let gate: Promise<void> | null = null;
let reached: () => void = () => undefined;

test.before(async () => {
  issuer = await startIssuer();
  dir = mkdtempSync(join(tmpdir(), "cred-race-"));
  // Hold refresh-token grants while `gate` is set (openid-client calls the global fetch).
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const body = typeof init?.body === "string" ? init.body : init?.body instanceof URLSearchParams ? init.body.toString() : "";
    if (gate && body.includes("grant_type=refresh_token")) {
      reached();
      await gate;
    }
    return realFetch(input, init);
  }) as typeof fetch;
});

test.after(async () => {
  globalThis.fetch = realFetch;
  await issuer?.close();
  rmSync(dir, { recursive: true, force: true });
});

const settings = (scopes = "openid offline_access") => ({ issuer: issuer.url, clientId: CLIENT_ID, scopes });

test("a sign-out in another process while a refresh is on its way stays signed out", async () => {
  const file = join(dir, "a.json");
  const a = new CredentialStore(file);
  const b = new CredentialStore(file);
  await a.login("acme", settings(), (p) => void issuer.approve(p.user_code));
  const used = await a.accessToken("acme");
  let open!: () => void;
  gate = new Promise<void>((r) => (open = r));
  const atIssuer = new Promise<void>((r) => (reached = r));
  const refresh = a.afterUnauthorized("acme", used).then(
    (t) => ({ ok: true as const, t }),
    (e: Error) => ({ ok: false as const, e }),
  );
  await atIssuer;
  assert.ok(await b.logout("acme"), "b signed out");
  gate = null;
  open();
  await refresh;
  assert.equal(new CredentialStore(file).signedIn(), [], "the sign-out is kept (the refresh wrote the token back)");
});

test("a new sign-in in another process while a refresh of the old one is on its way is kept", async () => {
  const file = join(dir, "b.json");
  const a = new CredentialStore(file);
  const b = new CredentialStore(file);
  await a.login("acme", settings(), (p) => void issuer.approve(p.user_code));
  const used = await a.accessToken("acme");
  let open!: () => void;
  gate = new Promise<void>((r) => (open = r));
  const atIssuer = new Promise<void>((r) => (reached = r));
  const refresh = a.afterUnauthorized("acme", used).catch(() => undefined);
  await atIssuer;
  // The user signs in again (here with other scopes) meanwhile.
  await b.login("acme", settings("openid offline_access models"), (p) => void issuer.approve(p.user_code));
  gate = null;
  open();
  await refresh;
  const after = new CredentialStore(file).status("acme", { env: null, present: false });
  assert.equal(after.scopes, ["openid", "offline_access", "models"], "the new sign-in is kept (the old one's refresh overwrote it)");
});

test.run();

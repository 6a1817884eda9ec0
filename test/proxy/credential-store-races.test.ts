// Review (rev4) of the credential store under two processes of one home: a refresh that was on
// its way while another process signed out (or signed in again) must not write its result over
// that change. Two stores on one auth.json stand for two processes (as credential-store.test.ts);
// the refresh is held at the issuer's token endpoint until the other process's change is on disk.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CredentialStore, REFRESH_MARGIN_MS } from "../../daemon/models/credentials.js";
import { ManualClock } from "../../shared/clock.js";
import { waitFor } from "../helpers/wait.js";
import { CLIENT_ID, type Issuer, startIssuer } from "./issuer.js";

let issuer: Issuer;
let rotating: Issuer;
let dir: string;
const realFetch = globalThis.fetch;
let gate: Promise<void> | null = null;
let reached: () => void = () => undefined;
/** Refresh-token grants held at the gate so far. */
let atGate = 0;

test.before(async () => {
  issuer = await startIssuer();
  rotating = await startIssuer({ rotateRefreshToken: true });
  dir = mkdtempSync(join(tmpdir(), "cred-race-"));
  // Hold refresh-token grants while `gate` is set (openid-client calls the global fetch).
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const body = typeof init?.body === "string" ? init.body : init?.body instanceof URLSearchParams ? init.body.toString() : "";
    if (gate && body.includes("grant_type=refresh_token")) {
      atGate++;
      reached();
      await gate;
    }
    return realFetch(input, init);
  }) as typeof fetch;
});

test.after(async () => {
  globalThis.fetch = realFetch;
  await issuer?.close();
  await rotating?.close();
  rmSync(dir, { recursive: true, force: true });
});

const settings = (scopes = "openid offline_access") => ({ issuer: issuer.url, clientId: CLIENT_ID, scopes });

/**
 * Watch `store`'s change of auth.json: true once it has asked to write and either wrote or waits
 * for the lock (which a refresh holding it would explain). Either order of the two processes is
 * then allowed to happen; the assertion is on the outcome.
 */
function writeStarted(store: CredentialStore, file: string, settled: () => boolean): () => boolean {
  const s = store as unknown as { write: (m: unknown) => Promise<void> };
  const original = s.write.bind(store);
  let asked = false;
  s.write = (m: unknown) => {
    asked = true;
    return original(m);
  };
  return () => asked && (settled() || existsSync(`${file}.lock`));
}

/** Two stores (two processes) on one signed-in auth.json; refresh grants are held at the issuer until `open()`. */
async function refreshHeldAtIssuer(name: string) {
  const file = join(dir, name);
  const a = new CredentialStore(file);
  const b = new CredentialStore(file);
  await a.login("acme", settings(), (p) => void issuer.approve(p.user_code));
  const used = await a.accessToken("acme");
  let open!: () => void;
  gate = new Promise<void>((r) => (open = r));
  const atIssuer = new Promise<void>((r) => (reached = r));
  return { file, a, b, used, open, atIssuer };
}

test("a sign-out in another process while a refresh is on its way stays signed out", async () => {
  const { file, a, b, used, open, atIssuer } = await refreshHeldAtIssuer("a.json");
  const refresh = a.afterUnauthorized("acme", used).then(
    (t) => ({ ok: true as const, t }),
    (e: Error) => ({ ok: false as const, e }),
  );
  await atIssuer;
  let done = false;
  const ready = writeStarted(b, file, () => done);
  const out = b.logout("acme").finally(() => (done = true));
  await waitFor("b's sign-out written or waiting for the lock", ready, 10_000);
  gate = null;
  open();
  await refresh;
  assert.ok(await out, "b signed out");
  assert.equal(new CredentialStore(file).signedIn(), [], "the sign-out is kept (the refresh wrote the token back)");
});

test("a new sign-in in another process while a refresh of the old one is on its way is kept", async () => {
  const { file, a, b, used, open, atIssuer } = await refreshHeldAtIssuer("b.json");
  const refresh = a.afterUnauthorized("acme", used).catch(() => undefined);
  await atIssuer;
  // The user signs in again (here with other scopes) meanwhile.
  let done = false;
  const ready = writeStarted(b, file, () => done);
  const login = b.login("acme", settings("openid offline_access models"), (p) => void issuer.approve(p.user_code)).finally(() => (done = true));
  await waitFor("b's sign-in written or waiting for the lock", ready, 10_000);
  gate = null;
  open();
  await refresh;
  await login;
  const after = new CredentialStore(file).status("acme", { env: null, present: false });
  assert.equal(after.scopes, ["openid", "offline_access", "models"], "the new sign-in is kept (the old one's refresh overwrote it)");
});

test("two processes whose token expires at once refresh it once (a rotating issuer revokes a reused refresh token)", async () => {
  // The daemon and a kanban worker of one home both find the token within the margin. Each
  // process refreshes (single-flight is per process): the second presents the refresh token the
  // first just rotated, and an issuer with reuse detection (OAuth 2.1; oidc-provider's
  // rotateRefreshToken) revokes the whole grant. Both refreshes are held at the issuer until
  // both arrived (or one arrived holding auth.json.lock, the other then waiting for it).
  const file = join(dir, "c.json");
  const clock = new ManualClock(Date.now());
  const a = new CredentialStore(file, clock);
  const b = new CredentialStore(file, clock);
  const rot = { issuer: rotating.url, clientId: CLIENT_ID, scopes: "openid offline_access" };
  await a.login("acme", rot, (p) => void rotating.approve(p.user_code));
  clock.advance(3600_000 - REFRESH_MARGIN_MS + 10_000);
  let open!: () => void;
  atGate = 0;
  gate = new Promise<void>((r) => (open = r));
  const result = (p: Promise<string>) =>
    p.then(
      (t) => ({ t }),
      (e: { code?: string }) => ({ e: e.code }),
    );
  const fromA = result(a.accessToken("acme"));
  const fromB = result(b.accessToken("acme"));
  await waitFor("both refreshes at the issuer, or one holding the lock", () => atGate === 2 || (atGate === 1 && existsSync(`${file}.lock`)), 10_000);
  gate = null;
  open();
  const [gotA, gotB] = await Promise.all([fromA, fromB]);
  assert.ok("t" in gotA && "t" in gotB, `both got a token: ${JSON.stringify([gotA, gotB])}`);
  // And the sign-in still works afterwards: the next refresh succeeds.
  clock.advance(3600_000);
  const next = await new CredentialStore(file, clock).accessToken("acme").then(
    (t) => ({ t }),
    (e: { code?: string }) => ({ e: e.code }),
  );
  assert.ok("t" in next, `the sign-in survives (the next refresh got ${JSON.stringify(next)})`);
});

test.run();

// auth.json under concurrent writes (daemon/models/credentials.ts): changes of two providers at
// the same moment (two refreshes, a sign-out during a refresh) are both kept, and the file is
// whole JSON after every write, also when two stores (two threads or processes of one home)
// write at once: auth.json.lock (daemon/store/file-lock.ts) keeps either from losing the other's.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CredentialStore } from "../../daemon/models/credentials.js";
import { TS_LOADER } from "../helpers/ts-loader.js";

let dir: string;

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), "cred-w-"));
});

test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const token = (name: string) => ({
  method: "oauth",
  issuer: "http://127.0.0.1:1",
  client_id: "c",
  access_token: `access-${name}-${"x".repeat(4000)}`,
  refresh_token: `refresh-${name}`,
  expires_at: null,
  scopes: [],
  obtained_at: 0,
});

function seed(file: string, names: string[]): void {
  writeFileSync(file, JSON.stringify({ version: 1, providers: Object.fromEntries(names.map((n) => [n, token(n)])) }), { mode: 0o600 });
}

test("two sign-outs at once in one store: both are kept", async () => {
  const file = join(dir, "one.json");
  const names = Array.from({ length: 8 }, (_, i) => `p${i}`);
  seed(file, names);
  const store = new CredentialStore(file);
  await Promise.all(names.slice(0, 6).map((n) => store.logout(n)));
  assert.equal(Object.keys(JSON.parse(readFileSync(file, "utf8")).providers), ["p6", "p7"]);
  assert.is(statSync(file).mode & 0o777, 0o600);
});

test("two stores on one file writing at once: the file is always whole JSON", async () => {
  const file = join(dir, "two.json");
  for (let round = 0; round < 20; round++) {
    seed(file, ["a", "b", "c", "d"]);
    const one = new CredentialStore(file);
    const two = new CredentialStore(file);
    const results = await Promise.allSettled([one.logout("a"), two.logout("b"), one.logout("c"), two.logout("d")]);
    const text = readFileSync(file, "utf8");
    assert.not.throws(() => JSON.parse(text), `round ${round}: ${text.slice(0, 80)}…${text.slice(-40)}`);
    for (const r of results) if (r.status === "rejected") assert.unreachable(`round ${round}: ${(r.reason as Error).message}`);
  }
});

test("two processes writing one auth.json at once: every write succeeds, none is lost, and the file stays whole JSON", async () => {
  const file = join(dir, "procs.json");
  const a = Array.from({ length: 40 }, (_, i) => `a${i}`);
  const b = Array.from({ length: 40 }, (_, i) => `b${i}`);
  seed(file, [...a, ...b]);
  const writer = fileURLToPath(new URL("../fixtures/credential-writer.ts", import.meta.url));
  const run = (names: string[]) =>
    new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, [...TS_LOADER, writer, file, ...names], { stdio: ["ignore", "ignore", "pipe"] });
      let err = "";
      child.stderr.on("data", (d: Buffer) => (err += d));
      child.on("close", (code) => resolve({ code, err }));
    });
  const results = await Promise.all([run(a), run(b)]);
  for (const r of results) assert.is(r.code, 0, r.err);
  const text = readFileSync(file, "utf8");
  assert.not.throws(() => JSON.parse(text), text.slice(0, 80));
  // Each sign-out re-read the file under the lock: none brought back a provider the other process removed.
  assert.equal(Object.keys(JSON.parse(text).providers), []);
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.not.ok(existsSync(`${file}.lock`), "the lock is released");
});

test("two stores on one file: every sign-out is kept (none re-writes what it read before the other's change)", async () => {
  const file = join(dir, "two-kept.json");
  seed(file, ["a", "b", "c", "d"]);
  const one = new CredentialStore(file);
  const two = new CredentialStore(file);
  await Promise.all([one.logout("a"), two.logout("b"), one.logout("c"), two.logout("d")]);
  assert.equal(Object.keys(JSON.parse(readFileSync(file, "utf8")).providers), []);
});

test.run();

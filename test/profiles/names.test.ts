import { test } from "uvu";
import * as assert from "uvu/assert";
import { hasStack, profileHome } from "./helpers.js";

const h = profileHome();
test.after(() => h.dispose());

test("a valid name creates the profile (exit 0)", async () => {
  for (const name of ["writer", "a", "x1_y-2", "9lives", "a".repeat(64)]) {
    const r = await h.cli(["profile", "create", name, "--no-alias"]);
    assert.is(r.code, 0, `${name}: ${r.stderr}`);
  }
});

test("an invalid name is refused with a clear message, exit 1 and no stack trace", async () => {
  for (const name of ["Writer", "_x", "a b", "../etc", "x/y", "a".repeat(65), "é"]) {
    const r = await h.cli(["profile", "create", name]);
    assert.is(r.code, 1, `${name}: ${r.stderr}`);
    assert.match(r.stderr, /invalid profile name/);
    assert.not.ok(hasStack(r.stderr), r.stderr);
  }
});

test("reserved names are refused at create, exit 1 and no stack trace", async () => {
  for (const name of ["agent", "test", "tmp", "root", "sudo", "default"]) {
    const r = await h.cli(["profile", "create", name]);
    assert.is(r.code, 1, `${name}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`"${name}" cannot be used`));
    assert.not.ok(hasStack(r.stderr), r.stderr);
  }
});

test("rename refuses a reserved or invalid new name and renaming default", async () => {
  assert.is((await h.cli(["profile", "create", "ren", "--no-alias"])).code, 0);
  for (const [from, to, re] of [
    ["ren", "sudo", /"sudo" cannot be used/],
    ["ren", "../x", /invalid new name/],
    ["default", "other", /"default" cannot be used/],
  ] as const) {
    const r = await h.cli(["profile", "rename", from, to]);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, re);
    assert.not.ok(hasStack(r.stderr));
  }
});

test("install refuses a traversal or reserved --name before fetching anything", async () => {
  for (const [name, re] of [
    ["../../evil", /invalid profile name/],
    ["root", /"root" cannot be used/],
  ] as const) {
    const r = await h.cli(["profile", "install", "/nonexistent-dir", "--name", name, "-y"]);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, re);
    assert.not.ok(hasStack(r.stderr));
  }
});

test("--profile with an unknown profile is a clear error (exit 4)", async () => {
  const r = await h.cli(["--profile", "ghost", "profile", "show"]);
  assert.is(r.code, 4, r.stderr);
  assert.match(r.stderr, /no profile named "ghost"/);
  assert.not.ok(hasStack(r.stderr));
});

test.run();

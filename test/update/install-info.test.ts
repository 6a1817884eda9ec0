// The commit a daemon reports (shared/install-info.ts) is read from files, no git process: a
// detached HEAD, a branch in loose refs, a branch only in packed-refs, a linked worktree's `.git`
// file (HEAD in its own git dir, refs in the common one), and no .git at all.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { appRoot, gitCommitAt, packageInfo } from "../../shared/install-info.js";
import { ROOT } from "../helpers/cli.js";

const A = "a".repeat(40);
const B = "b".repeat(40);
const dir = mkdtempSync(join(tmpdir(), "ii-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function repo(name: string, files: Record<string, string>): string {
  const root = join(dir, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  mkdirSync(root, { recursive: true });
  return root;
}

test("a detached HEAD, a loose branch ref, a packed one", () => {
  assert.is(gitCommitAt(repo("detached", { ".git/HEAD": `${A}\n` })), A);
  assert.is(gitCommitAt(repo("loose", { ".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": `${B}\n` })), B);
  assert.is(
    gitCommitAt(
      repo("packed", { ".git/HEAD": "ref: refs/heads/main\n", ".git/packed-refs": `# pack-refs with: peeled\n${A} refs/heads/other\n${B} refs/heads/main\n` }),
    ),
    B,
  );
});

test("a linked worktree: .git is a file; HEAD in its git dir, the branch in the common dir", () => {
  const common = repo("common", { "refs/heads/w": `${A}\n`, "worktrees/wt/HEAD": "ref: refs/heads/w\n", "worktrees/wt/commondir": "../..\n" });
  assert.is(gitCommitAt(repo("wt", { ".git": `gitdir: ${join(common, "worktrees", "wt")}\n` })), A);
});

test("no .git, or a HEAD naming a missing branch: null", () => {
  assert.is(gitCommitAt(repo("plain", { "package.json": "{}" })), null);
  assert.is(gitCommitAt(repo("unborn", { ".git/HEAD": "ref: refs/heads/main\n" })), null);
});

test("the app's root is the folder with its package.json", () => {
  assert.is(appRoot(), ROOT.replace(/\/$/, ""));
  assert.is(packageInfo(ROOT).name, "agent");
});

test.run();

// The git side of kanban worktrees, in process on real repositories in temp directories: a
// worktree is never made inside another worktree, a taken branch name gets a suffix, git's
// messages are what a refusal shows, and a title is never parsed by a shell.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createWorktree, removeWorktree, repoDirName, slug, summarizeWork } from "../../daemon/kanban/worktree/git-worktree.js";
import { testUnless } from "../helpers/skip.js";

const withGit = testUnless(spawnSync("git", ["--version"]).status === 0 ? null : "git is not installed");
const dirs: string[] = [];

function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), "kwg-"));
  dirs.push(dir);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir });
  git("init", "-q", "-b", "main");
  git("config", "user.email", "t@example.invalid");
  git("config", "user.name", "Test");
  writeFileSync(join(dir, "a.txt"), "a\n");
  git("add", "-A");
  git("commit", "-q", "-m", "first");
  return dir;
}

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

withGit("a worktree root inside the repository is refused, naming both paths", async () => {
  const r = repo();
  const error = await createWorktree({ root: join(r, "home", "worktrees"), cwd: r, taskId: "t_00000001", title: "x" }).catch((e) => e);
  assert.match(String(error.message), /would be inside the worktree/);
  assert.ok(!existsSync(join(r, "home", "worktrees", "r", "t_00000001")));
});

withGit("a taken branch name gets a suffix; the slug is the title's", async () => {
  const r = repo();
  const root = mkdtempSync(join(tmpdir(), "kwg-root-"));
  dirs.push(root);
  execFileSync("git", ["branch", "kanban/t_00000002-fix-the-parser"], { cwd: r });
  const info = await createWorktree({ root, cwd: r, taskId: "t_00000002", title: "Fix the parser!" });
  assert.is(info.branch, "kanban/t_00000002-fix-the-parser-2");
  assert.is(slug("  $(rm -rf ~); `x` "), "rm-rf-x");
  await removeWorktree(info);
  assert.ok(!existsSync(info.path));
});

withGit("an unknown --base is refused with git's message; a title with shell syntax is only a commit message", async () => {
  const r = repo();
  const root = mkdtempSync(join(tmpdir(), "kwg-root-"));
  dirs.push(root);
  const error = await createWorktree({ root, cwd: r, taskId: "t_00000003", title: "x", base: "no-such-ref" }).catch((e) => e);
  assert.match(String(error.message), /--base no-such-ref: fatal: Needed a single revision/);
  const info = await createWorktree({ root, cwd: r, taskId: "t_00000004", title: "x" });
  writeFileSync(join(info.path, "b.txt"), "b\n");
  const marker = join(root, "pwned");
  const work = await summarizeWork(info, `$(touch ${marker}); done`);
  assert.is(work.commits.length, 1);
  assert.is(work.commits[0]!.subject, `$(touch ${marker}); done`);
  assert.ok(!existsSync(marker));
  assert.match(work.stat, /b\.txt \| 1 \+/);
  assert.is(readFileSync(join(r, "a.txt"), "utf8"), "a\n");
});

withGit("a --base or a merged ref that looks like an option is a revision to git, never an option", async () => {
  const r = repo();
  const root = mkdtempSync(join(tmpdir(), "kwg-root-"));
  dirs.push(root);
  const marker = join(root, "pwned");
  for (const base of [`--output=${marker}`, "-h", "--help", `--exec=touch ${marker}`]) {
    const error = await createWorktree({ root, cwd: r, taskId: "t_00000005", title: "x", base }).catch((e) => e);
    assert.instance(error, Error, base);
    assert.match(String(error.message), /--base /, base);
  }
  const error = await createWorktree({ root, cwd: r, taskId: "t_00000006", title: "-x", merge: [`--strategy-option=${marker}`, "-h"] }).catch((e) => e);
  assert.instance(error, Error);
  assert.ok(!existsSync(marker));
  assert.ok(!existsSync(join(root, repoDirName(r), "t_00000006")), "a refused merge leaves no worktree");
});

test.run();

/**
 * git for the kanban board: a task's worktree (`git worktree add` on a branch of its own under
 * `$AGENT_HOME/worktrees/<repo>/<task-id>`), what its work amounts to at completion (commits,
 * diff stat; uncommitted changes committed with the task's summary), its diff, a merge into
 * another branch, and removing worktrees.
 *
 * Safety rules (docs/kanban.md, "Worktrees"): git runs through `execFile` (no shell, every
 * argument one argv entry, a ref or a message never parsed by anything but git), its own
 * messages are what a refusal shows, a worktree is never created inside another worktree, an
 * existing branch name gets a suffix, and a main tree with uncommitted changes is never touched
 * (a merge into the branch checked out there is refused until it is clean).
 */
import type { TaskWork } from "../../../shared/protocol/kanban.js";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, realpath, rm } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { AgentError } from "../../../shared/errors.js";

/** What a task's worktree is: recorded on the task (`Task.git`). */
export interface WorktreeInfo {
  /** The main worktree of the repository (its top level). */
  repo: string;
  /** The commit the branch started from. */
  base: string;
  /** What the base was named as (`HEAD`'s branch, `--base <ref>`, the parents' branches). */
  base_ref: string;
  branch: string;
  path: string;
}

/** What a task's work came to (declared once, with the protocol's task). */
export type WorkSummary = Omit<TaskWork, "recorded_at">;

const MAX_BUFFER = 64 * 1024 * 1024;

/** git's own words when a command fails: its stderr (else stdout), as it printed them. */
export class GitError extends AgentError {
  constructor(
    readonly args: string[],
    readonly output: string,
    code: "kanban.git_failed" | "kanban.merge_conflict" = "kanban.git_failed",
  ) {
    super(code, output.trim() || `git ${args.join(" ")} failed`, { git: args.slice(0, 3) });
  }
}

/** Run git (no shell) in `cwd`; stdout on success, a GitError with git's message otherwise. */
export function git(cwd: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      "git",
      args,
      {
        cwd,
        maxBuffer: MAX_BUFFER,
        env: { ...process.env, ...options.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (!error) return resolvePromise(stdout);
        const e = error as NodeJS.ErrnoException;
        if (e.code === "ENOENT") return reject(new AgentError("kanban.git_failed", "git is not installed (not found on PATH)"));
        reject(new GitError(args, `${stderr}`.trim() || `${stdout}`.trim()));
      },
    );
  });
}

/** The repository holding `dir`: its main worktree and, when `dir` is in a linked worktree, that one's top level. Null outside a repository. */
export async function findRepo(dir: string): Promise<{ repo: string; toplevel: string } | null> {
  let out: string;
  try {
    out = await git(dir, ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"]);
  } catch {
    return null;
  }
  const [toplevel, common] = out.trim().split("\n");
  if (!toplevel || !common) return null;
  // The main worktree is the directory holding the common .git (a non-bare repository).
  const repo = basename(common) === ".git" ? dirname(common) : toplevel;
  return { repo, toplevel };
}

/** Every worktree of the repository (main first), real paths. */
export async function listWorktrees(repo: string): Promise<Array<{ path: string; branch: string | null; head: string | null }>> {
  const out = await git(repo, ["worktree", "list", "--porcelain"]);
  const list: Array<{ path: string; branch: string | null; head: string | null }> = [];
  for (const block of out.split("\n\n")) {
    const path = /^worktree (.*)$/m.exec(block)?.[1];
    if (!path) continue;
    const branch = /^branch refs\/heads\/(.*)$/m.exec(block)?.[1] ?? null;
    const head = /^HEAD (.*)$/m.exec(block)?.[1] ?? null;
    list.push({ path: await realpath(path).catch(() => path), branch, head });
  }
  return list;
}

/** A branch name's slug from a title: lower case, [a-z0-9-], at most 40 characters. */
export function slug(title: string): string {
  const s = title
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return s || "task";
}

async function branchExists(repo: string, branch: string): Promise<boolean> {
  try {
    await git(repo, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`]);
    return true;
  } catch {
    return false;
  }
}

/** `kanban/<task-id>-<slug>`, with `-2`, `-3`… when that branch exists. */
export async function freeBranchName(repo: string, taskId: string, title: string): Promise<string> {
  const stem = `kanban/${taskId}-${slug(title)}`;
  if (!(await branchExists(repo, stem))) return stem;
  for (let n = 2; ; n++) if (!(await branchExists(repo, `${stem}-${n}`))) return `${stem}-${n}`;
}

function inside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep) && !/^[a-zA-Z]:/.test(rel));
}

/** The directory name of a repository under `$AGENT_HOME/worktrees/`. */
export function repoDirName(repo: string): string {
  return basename(repo).replace(/[^A-Za-z0-9._-]/g, "_") || "repo";
}

/**
 * Create a task's worktree: a new branch `kanban/<task-id>-<slug>` (suffixed when taken) at
 * `base` (a ref; default the repository's current HEAD), checked out at
 * `<root>/<repo>/<task-id>`. Refused when that path is inside any worktree of the repository
 * (an AGENT_HOME inside the repository, say). `merge`: further refs merged into the new branch
 * (a fan-in's other parents); a conflict removes the worktree again and refuses with git's message.
 */
export async function createWorktree(options: {
  root: string;
  cwd: string;
  taskId: string;
  title: string;
  base?: string;
  merge?: string[];
}): Promise<WorktreeInfo> {
  const found = await findRepo(options.cwd);
  if (!found) throw new AgentError("kanban.not_a_repo", `${options.cwd} is not inside a git repository (use --workspace dir or scratch)`);
  const { repo } = found;
  const baseRef = options.base ?? (await currentBranch(found.toplevel)) ?? "HEAD";
  let base: string;
  try {
    // From the creating directory: HEAD there is the HEAD the user sees (a linked worktree's own).
    base = (await git(found.toplevel, ["rev-parse", "--verify", "--end-of-options", `${options.base ?? "HEAD"}^{commit}`])).trim();
  } catch (error) {
    throw error instanceof GitError ? new AgentError("kanban.git_failed", `--base ${options.base ?? "HEAD"}: ${error.message}`) : error;
  }
  const path = join(options.root, repoDirName(repo), options.taskId);
  await mkdir(dirname(path), { recursive: true });
  const realParent = await realpath(dirname(path));
  const target = join(realParent, options.taskId);
  for (const w of await listWorktrees(repo)) {
    if (inside(target, w.path))
      throw new AgentError("kanban.git_failed", `the worktree ${target} would be inside the worktree ${w.path}; set AGENT_HOME outside the repository`, {
        path: target,
      });
  }
  if (existsSync(target)) throw new AgentError("kanban.git_failed", `${target} already exists`, { path: target });
  const branch = await freeBranchName(repo, options.taskId, options.title);
  await git(repo, ["worktree", "add", "-b", branch, "--", target, base]);
  const info: WorktreeInfo = { repo, base, base_ref: baseRef, branch, path: target };
  for (const ref of options.merge ?? []) {
    try {
      await git(target, ["merge", "--no-edit", "--no-ff", "-m", `Merge ${ref} into ${branch}`, "--end-of-options", ref], { env: identityEnv() });
    } catch (error) {
      await git(target, ["merge", "--abort"]).catch(() => undefined);
      await removeWorktree(info, { deleteBranch: true }).catch(() => undefined);
      throw error instanceof GitError ? new GitError(error.args, error.output, "kanban.merge_conflict") : error;
    }
  }
  return info;
}

async function currentBranch(dir: string): Promise<string | null> {
  try {
    return (await git(dir, ["symbolic-ref", "--quiet", "--short", "HEAD"])).trim() || null;
  } catch {
    return null;
  }
}

/**
 * The author and committer of the daemon's own commits when the repository has none configured
 * (a commit would otherwise fail on a machine without user.name): only as a fallback.
 */
function identityEnv(): NodeJS.ProcessEnv {
  return {
    GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME ?? "agent kanban",
    GIT_AUTHOR_EMAIL: process.env.GIT_AUTHOR_EMAIL ?? "kanban@agent.invalid",
    GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME ?? "agent kanban",
    GIT_COMMITTER_EMAIL: process.env.GIT_COMMITTER_EMAIL ?? "kanban@agent.invalid",
  };
}

async function hasIdentity(dir: string): Promise<boolean> {
  try {
    await git(dir, ["config", "user.email"]);
    return true;
  } catch {
    return false;
  }
}

async function commitEnv(dir: string): Promise<NodeJS.ProcessEnv> {
  return (await hasIdentity(dir)) ? {} : identityEnv();
}

/**
 * A task's work at completion: uncommitted changes (tracked and new files) committed with
 * `message`, then the commits since the base and the diff stat against it.
 */
export async function summarizeWork(info: WorktreeInfo, message: string): Promise<WorkSummary> {
  let committed: string | null = null;
  const status = await git(info.path, ["status", "--porcelain", "--untracked-files=all"]);
  if (status.trim()) {
    await git(info.path, ["add", "-A"]);
    await git(info.path, ["commit", "-q", "--no-verify", "-m", message], { env: await commitEnv(info.path) });
    committed = (await git(info.path, ["rev-parse", "HEAD"])).trim();
  }
  const head = (await git(info.path, ["rev-parse", "HEAD"])).trim();
  const log = await git(info.path, ["log", "--format=%H%x09%s", `${info.base}..${head}`]);
  const commits = log
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf("\t");
      return { sha: line.slice(0, tab), subject: line.slice(tab + 1) };
    });
  const stat = (await git(info.path, ["diff", "--stat", `${info.base}..${head}`])).replace(/\s+$/, "");
  const totals = /(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?/.exec(stat);
  return {
    commits,
    stat,
    files_changed: Number(totals?.[1] ?? 0),
    insertions: Number(totals?.[2] ?? 0),
    deletions: Number(totals?.[3] ?? 0),
    committed,
    head,
  };
}

/** The diff of a task's branch against its base (`stat`: git's --stat). Uncommitted changes of a live worktree are included. */
export async function taskDiff(info: WorktreeInfo, options: { stat?: boolean } = {}): Promise<string> {
  const flags = options.stat ? ["--stat"] : ["--no-color", "--no-ext-diff"];
  if (existsSync(info.path)) return git(info.path, ["diff", ...flags, info.base]);
  return git(info.repo, ["diff", ...flags, `${info.base}..${info.branch}`]);
}

/**
 * Merge the task's branch into `into` (default: the branch it was based on). When `into` is
 * checked out in a worktree (the main tree, typically) the merge runs there, refused while that
 * tree has uncommitted changes; otherwise in a temporary worktree of its own, removed after. A
 * conflict aborts the merge and refuses with git's message. `squash`: one commit with `message`.
 */
export async function mergeBranch(
  info: WorktreeInfo,
  options: { into?: string; squash?: boolean; message: string; scratch: string },
): Promise<{ into: string; commit: string }> {
  const into = options.into ?? (info.base_ref !== "HEAD" ? info.base_ref : null);
  if (!into)
    throw new AgentError(
      "kanban.invalid_argument",
      `the task was based on a detached HEAD (${info.base.slice(0, 12)}): name the branch to merge into (--into <branch>)`,
    );
  if (!(await branchExists(info.repo, into))) throw new AgentError("kanban.invalid_argument", `no branch ${into} in ${info.repo}`);
  const checkedOut = (await listWorktrees(info.repo)).find((w) => w.branch === into);
  let dir: string;
  let temporary = false;
  if (checkedOut) {
    dir = checkedOut.path;
    const dirty = await git(dir, ["status", "--porcelain", "--untracked-files=no"]);
    if (dirty.trim())
      throw new AgentError(
        "kanban.dirty_tree",
        `${dir} (where ${into} is checked out) has uncommitted changes; commit or stash them first:\n${dirty.trimEnd()}`,
        {
          path: dir,
        },
      );
  } else {
    dir = join(options.scratch, `merge-${basename(info.path)}-${process.pid}-${Date.now()}`);
    await mkdir(dirname(dir), { recursive: true });
    await git(info.repo, ["worktree", "add", "--quiet", "--", dir, into]);
    temporary = true;
  }
  const env = await commitEnv(dir);
  try {
    try {
      if (options.squash) {
        await git(dir, ["merge", "--squash", "--end-of-options", info.branch], { env });
        await git(dir, ["commit", "-q", "--no-verify", "-m", options.message], { env });
      } else {
        await git(dir, ["merge", "--no-ff", "--no-edit", "-m", options.message, "--end-of-options", info.branch], { env });
      }
    } catch (error) {
      // Leave the tree as it was: a refused merge changes nothing.
      if (options.squash) await git(dir, ["reset", "--merge"]).catch(() => undefined);
      else await git(dir, ["merge", "--abort"]).catch(() => undefined);
      if (error instanceof GitError) throw new GitError(error.args, error.output, "kanban.merge_conflict");
      throw error;
    }
    return { into, commit: (await git(dir, ["rev-parse", "HEAD"])).trim() };
  } finally {
    if (temporary) {
      await git(info.repo, ["worktree", "remove", "--force", "--", dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** Remove a task's worktree (its changes are on its branch, committed at completion). The branch stays unless asked. */
export async function removeWorktree(info: Pick<WorktreeInfo, "repo" | "path" | "branch">, options: { deleteBranch?: boolean } = {}): Promise<void> {
  if (existsSync(info.path))
    await git(info.repo, ["worktree", "remove", "--force", "--", info.path]).catch(() => rm(info.path, { recursive: true, force: true }));
  await git(info.repo, ["worktree", "prune"]).catch(() => undefined);
  if (options.deleteBranch) await git(info.repo, ["branch", "-D", "--", info.branch]).catch(() => undefined);
}

/**
 * The worktrees under `root` (`<repo>/<task-id>`) whose task `keep` does not keep: each removed
 * through git (its repository found from the worktree itself), else deleted. Returns the paths.
 */
export async function pruneWorktrees(root: string, keep: (taskId: string) => boolean): Promise<string[]> {
  const removed: string[] = [];
  const repos = await readdir(root).catch(() => [] as string[]);
  for (const r of repos) {
    const dir = join(root, r);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!/^t_[0-9a-f]{8}$/.test(name) || keep(name)) continue;
      const path = join(dir, name);
      const found = await findRepo(path);
      if (found && resolve(found.toplevel) === resolve(await realpath(path).catch(() => path))) {
        await git(found.repo, ["worktree", "remove", "--force", "--", found.toplevel]).catch(() => undefined);
        await git(found.repo, ["worktree", "prune"]).catch(() => undefined);
      }
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    }
  }
  return removed;
}

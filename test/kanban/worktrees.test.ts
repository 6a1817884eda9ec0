// Kanban worktrees (issue 30) on a real git repository in a temp directory and a real daemon
// whose workers (real `agent chat` processes) edit files through the terminal tool: each task in
// a worktree and branch of its own, completion recording commits and diff stat, review
// (approve, reject), merge (clean, conflict refused), prune, a decomposed root's children based
// on their parents' branches, and a daemon killed with -9 mid-run.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Task } from "../../shared/protocol/kanban.js";
import { skip } from "../helpers/skip.js";
import { stopServer, Tmux, tuiCommand } from "../tui/tmux.js";
import { type Behaviour, completes, groupAlive, type KanbanHome, kanbanHome, waitFor } from "./dispatch-helpers.js";

const hasGit = spawnSync("git", ["--version"]).status === 0;
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
let h: KanbanHome;
let repo: string;

const sh = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/** A worker that runs `command` in its workspace, then completes with `summary`. */
const edits =
  (command: string, summary: string): Behaviour =>
  (step) =>
    step === 0
      ? { toolCalls: [{ name: "terminal", arguments: { command } }] }
      : step === 1
        ? { toolCalls: [{ name: "kanban_complete", arguments: { summary } }] }
        : { text: "done" };

test.before(async () => {
  if (!hasGit) return;
  repo = mkdtempSync(join(tmpdir(), "kwt-repo-"));
  sh(repo, "init", "-q", "-b", "main");
  sh(repo, "config", "user.email", "t@example.invalid");
  sh(repo, "config", "user.name", "Test");
  writeFileSync(join(repo, "shared.txt"), "line 0\n");
  sh(repo, "add", "-A");
  sh(repo, "commit", "-q", "-m", "first");
  h = await kanbanHome({ review: "required", max_in_progress: 4, max_in_progress_per_profile: 4 }, "approvals:\n  mode: off\n", {
    AGENT_WORKER_RECONNECT_MS: "20000",
    // The product's default: a worktree when the creating directory is inside a git repository.
    AGENT_DEFAULT_WORKSPACE: "",
  });
});

test.after(async () => {
  if (!hasGit) return;
  await h.dispose();
  if (hasTmux) stopServer();
  rmSync(repo, { recursive: true, force: true });
});

const inReview = (t: Task) => t.status === "review" && t.runs.every((r) => r.ended_at !== null);

test("two tasks edit the same file at once, each in its own worktree; completion records commits and diff stat; merge clean, then a conflict refused", async () => {
  if (!hasGit) return skip("git is not installed");
  const a = await h.task("Edit A", [edits("printf 'from A\\n' >> shared.txt; sleep 1; cp shared.txt seen.txt", "A's edit")], { workspace: repo });
  const b = await h.task("Edit B", [edits("printf 'from B\\n' >> shared.txt; sleep 1; cp shared.txt seen.txt", "B's edit")], { workspace: repo });
  assert.match(a.git!.branch!, /^kanban\/t_[0-9a-f]{8}-edit-a$/);
  assert.ok(a.git!.path!.endsWith(join("worktrees", basename(repo), a.id)), a.git!.path!);
  assert.is(a.workspace, a.git!.path);
  const ta = await h.waitTask("A in review", a.id, inReview, 60_000);
  const tb = await h.waitTask("B in review", b.id, inReview, 60_000);
  // Each saw only its own edit; the main tree is untouched.
  assert.is(readFileSync(join(ta.git!.path!, "seen.txt"), "utf8"), "line 0\nfrom A\n");
  assert.is(readFileSync(join(tb.git!.path!, "seen.txt"), "utf8"), "line 0\nfrom B\n");
  assert.is(readFileSync(join(repo, "shared.txt"), "utf8"), "line 0\n");
  assert.is(sh(repo, "status", "--porcelain"), "");
  // The daemon committed the uncommitted changes with the summary; the work is recorded.
  const work = ta.git!.work!;
  assert.is(work.commits.length, 1);
  assert.is(work.commits[0]!.subject, "A's edit");
  assert.is(work.files_changed, 2);
  assert.match(work.stat, /shared\.txt \| 1 \+/);
  assert.is(sh(ta.git!.path!, "log", "-1", "--format=%s"), "A's edit");
  const diff = await h.cli(["kanban", "diff", a.id]);
  assert.is(diff.code, 0, diff.stderr);
  assert.match(diff.stdout, /\+from A/);
  assert.not.match(diff.stdout, /\x1b\[/, "no colour when stdout is not a terminal");
  const stat = await h.cli(["kanban", "diff", a.id, "--stat"]);
  assert.match(stat.stdout, /2 files changed/);
  // A task in review is merged only once approved.
  const early = await h.cli(["kanban", "merge", a.id]);
  assert.is(early.code, 1);
  assert.match(early.stderr, /approve/);
  assert.is((await h.cli(["kanban", "approve", a.id, b.id])).code, 0);
  const merged = await h.cli(["kanban", "merge", a.id, "--json"]);
  assert.is(merged.code, 0, merged.stderr);
  assert.is(readFileSync(join(repo, "shared.txt"), "utf8"), "line 0\nfrom A\n");
  assert.ok(!existsSync(ta.git!.path!), "the worktree is removed after the merge");
  assert.is((await h.show(a.id)).git!.merged!.into, "main");
  const head = sh(repo, "rev-parse", "HEAD");
  const conflict = await h.cli(["kanban", "merge", b.id]);
  assert.is(conflict.code, 1);
  assert.match(conflict.stderr, /CONFLICT \(content\): Merge conflict in shared\.txt/);
  assert.is(sh(repo, "rev-parse", "HEAD"), head, "a refused merge changes nothing");
  assert.is(sh(repo, "status", "--porcelain"), "");
  assert.ok(existsSync(tb.git!.path!), "a refused merge keeps the worktree");
  // A dirty main tree is never touched.
  writeFileSync(join(repo, "shared.txt"), "dirty\n");
  const dirty = await h.cli(["kanban", "merge", b.id, "--squash"]);
  assert.is(dirty.code, 1);
  assert.match(dirty.stderr, /uncommitted changes/);
  assert.is(readFileSync(join(repo, "shared.txt"), "utf8"), "dirty\n");
  sh(repo, "checkout", "--", "shared.txt");
  // Archive removes the worktree, the branch stays.
  await h.call("kanban.archive", { ids: [b.id] });
  assert.ok(!existsSync(tb.git!.path!));
  assert.is(sh(repo, "branch", "--list", tb.git!.branch!).replace(/^[*+ ]+/, ""), tb.git!.branch!);
});

test("a review-required task stays in review; reject re-runs it with the reason; approve wakes its dependents, based on its branch", async () => {
  if (!hasGit) return skip("git is not installed");
  const { task: parent } = await h.call("kanban.create", { title: "Parent work", workspace: repo, hold: true });
  const { task: child } = await h.call("kanban.create", { title: "Child work", workspace: repo, parents: [parent.id], hold: true });
  // The second run reads its task first (kanban_show: comments included), then edits.
  const readsThenEdits: Behaviour = (step) =>
    step === 0 ? { toolCalls: [{ name: "kanban_show", arguments: {} }] } : edits("echo two > p.txt", "second try")(step - 1);
  h.behave(parent.id, [edits("echo one > p.txt", "first try"), readsThenEdits]);
  h.behave(child.id, [edits("cat p.txt > c.txt", "child")]);
  await h.call("kanban.release", { ids: [parent.id, child.id] });
  await h.waitTask("parent in review", parent.id, inReview, 60_000);
  assert.is((await h.show(child.id)).status, "todo", "dependents wait for the review");
  const rejected = await h.cli(["kanban", "reject", parent.id, "--reason", "write two, not one"]);
  assert.is(rejected.code, 0, rejected.stderr);
  const again = await h.waitTask("parent in review again", parent.id, (t) => inReview(t) && t.runs.length === 2, 60_000);
  const secondRun = h.requestsOf(parent.id).slice(-1)[0]!;
  assert.match(JSON.stringify(secondRun.body), /Rejected in review: write two, not one/);
  assert.is(readFileSync(join(again.git!.path!, "p.txt"), "utf8"), "two\n");
  assert.is(again.git!.work!.commits.length, 2);
  if (hasTmux) {
    // The TUI's task detail shows the worktree and the diff.
    const t = new Tmux(tuiCommand(h.home), 140, 50);
    try {
      await t.waitFor(/● daemon \d+/);
      t.press("F4");
      // The board opens on its first non-empty column (todo: the child); → skips the empty ones to review.
      await t.waitFor(/┌─ review \(1\) ─/);
      t.press("l");
      t.press("Enter");
      const screen = await t.waitFor(/Diff[\s\S]*\+two/);
      assert.match(screen, new RegExp(`branch ${again.git!.branch!.replace(/[/]/g, ".")}`), screen);
      assert.match(screen, /in review: V approves/);
    } finally {
      t.kill();
    }
  }
  await h.call("kanban.approve", { ids: [parent.id] });
  const c = await h.waitTask("child in review", child.id, inReview, 60_000);
  // The child's worktree started from the parent's branch: it saw p.txt.
  assert.is(readFileSync(join(c.git!.path!, "c.txt"), "utf8"), "two\n");
  assert.is(c.git!.base, again.git!.work!.head);
  assert.is(c.git!.base_ref, "main");
  await h.call("kanban.approve", { ids: [child.id] });
});

test("a decomposed root's children work in the root's repository, each based on its finished parents' branches", async () => {
  if (!hasGit) return skip("git is not installed");
  const { task: root } = await h.call("kanban.create", { title: "Big job", workspace: repo, triage: true });
  h.decomposerReplies.push(
    JSON.stringify({
      fanout: true,
      rationale: "two steps",
      tasks: [
        { title: "Step one", body: "", assignee: null, parents: [] },
        { title: "Step two", body: "", assignee: null, parents: [0] },
      ],
    }),
  );
  const r = await h.call("kanban.decompose", { taskIds: [root.id] });
  const [one, two] = r.results[0]!.child_ids;
  assert.ok(one && two);
  const pending = await h.show(two!);
  assert.is(pending.git!.repo, root.git!.repo);
  assert.is(pending.git!.path, null, "made when dispatched");
  h.behave(one!, [edits("echo s1 > s1.txt", "step one")]);
  h.behave(two!, [edits("cat s1.txt > s2.txt", "step two")]);
  h.behave(root.id, [completes("orchestrated")]);
  const t1 = await h.waitTask("step one in review", one!, inReview, 60_000);
  assert.is(t1.git!.base, root.git!.base);
  await h.call("kanban.approve", { ids: [one!] });
  const t2 = await h.waitTask("step two in review", two!, inReview, 60_000);
  assert.is(t2.git!.base, t1.git!.work!.head, "based on its parent's branch");
  assert.is(readFileSync(join(t2.git!.path!, "s2.txt"), "utf8"), "s1\n");
  await h.call("kanban.approve", { ids: [two!] });
});

test("ps shows a worker's group CPU and RSS; kill stops the group and records the run as killed", async () => {
  if (!hasGit) return skip("git is not installed");
  // The loop spins until ps has shown its CPU, then idles (its CPU stays counted, its process
  // stays in the group): the rest of the test does not burn a core.
  const marker = mkdtempSync(join(tmpdir(), "kwt-spin-"));
  const spin = `(while [ ! -f ${marker}/seen ]; do :; done; sleep 60) & sleep 60`;
  const k = await h.task("Spin", [(step) => (step === 0 ? { toolCalls: [{ name: "terminal", arguments: { command: spin } }] } : { text: "?" })], {
    workspace: repo,
  });
  const ps = await waitFor(
    "the busy loop in ps",
    async () => {
      const r = await h.call("kanban.ps", {});
      const w = r.workers.find((x) => x.task_id === k.id);
      return w && w.processes >= 3 && w.cpu_seconds > 0.3 ? w : null;
    },
    30_000,
  );
  writeFileSync(join(marker, "seen"), "");
  assert.ok(ps.rss_bytes > 1024 * 1024, `rss ${ps.rss_bytes}`);
  assert.is(ps.profile, "default");
  assert.ok(ps.log_bytes > 0);
  const cli = await h.cli(["kanban", "ps"]);
  assert.match(cli.stdout, new RegExp(`${k.id}\\s+default\\s+${ps.pid}`));
  if (hasTmux) {
    // The TUI's kanban view has the same list (P).
    const t = new Tmux(tuiCommand(h.home), 160, 30);
    try {
      await t.waitFor(/● daemon \d+/);
      t.press("F4");
      await t.waitFor(/triage \d+ +todo \d+/);
      t.press("P");
      await t.waitFor(new RegExp(`Running workers \\(1\\)[\\s\\S]*${k.id}\\s+default\\s+${ps.pid}`));
    } finally {
      t.kill();
    }
  }
  const killed = await h.cli(["kanban", "kill", k.id, "--json"]);
  assert.is(killed.code, 0, killed.stderr);
  const t = JSON.parse(killed.stdout).task as Task;
  assert.is(t.status, "blocked");
  assert.is(t.runs[0]!.outcome, "killed");
  assert.is(t.consecutive_failures, 0, "a kill is not a crash");
  await waitFor("the group gone", () => !groupAlive(ps.pgid));
  rmSync(marker, { recursive: true, force: true });
});

test("prune removes the worktrees of tasks that are gone", async () => {
  if (!hasGit) return skip("git is not installed");
  await h.call("kanban.boards.create", { name: "scratchpad" });
  const { task } = await h.call("kanban.create", { board: "scratchpad", title: "Gone soon", workspace: repo, hold: true });
  assert.ok(existsSync(task.git!.path!));
  await h.call("kanban.boards.delete", { name: "scratchpad" });
  const r = await h.cli(["kanban", "prune", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).removed, [task.git!.path]);
  assert.ok(!existsSync(task.git!.path!));
  assert.not.match(sh(repo, "worktree", "list"), new RegExp(task.id));
});

test("a daemon killed with -9 mid-run: the worktree and branch stay, and the adopted worker completes into them", async () => {
  if (!hasGit) return skip("git is not installed");
  const marker = mkdtempSync(join(tmpdir(), "kwt-go-"));
  const w = await h.task(
    "Survive",
    [edits(`touch ${marker}/started; while [ ! -f ${marker}/go ]; do sleep 0.1; done; echo survived > s.txt`, "after the restart")],
    { workspace: repo },
  );
  await waitFor("the worker started its command", () => existsSync(join(marker, "started")), 30_000);
  const { pid } = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
  process.kill(pid, "SIGKILL");
  await waitFor("the daemon gone", () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  assert.ok(existsSync(w.git!.path!));
  assert.is((await h.cli(["daemon", "start"])).code, 0);
  writeFileSync(join(marker, "go"), "");
  const t = await h.waitTask("in review after the restart", w.id, inReview, 60_000);
  assert.is(t.runs.length, 1, "the same run, adopted");
  assert.is(t.git!.work!.commits[0]!.subject, "after the restart");
  assert.is(sh(repo, "show", `${t.git!.branch}:s.txt`), "survived");
  rmSync(marker, { recursive: true, force: true });
});

test.run();

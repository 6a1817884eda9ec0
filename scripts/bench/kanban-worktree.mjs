#!/usr/bin/env node
// Kanban worktrees and the live process view (issue 30). Needs a build (npm run build).
//  1. Creating a task with a worktree (`kanban.create` over the socket, workspace mode
//     worktree) on a repository of 10,000 files and 50 MB: target < 1 s, printed against a
//     plain `git worktree add -b` of the same repository timed in the same run (the floor).
//  2. `kanban ps` over 16 running worker groups: target < 50 ms. The daemon's ps reads /proc
//     once for all groups (daemon/process/process-group.ts usageOfGroups); it is timed
//     in-process over 16 real process groups (a shell, a `sleep` and a busy loop each: the
//     shape of a worker running a command), against one `processGroupMembers` scan of /proc
//     (the baseline) in the same run, and the socket round trip of `kanban.ps` is timed on the
//     daemon of part 1 against `kanban.stats`.
// Usage: node scripts/bench/kanban-worktree.mjs [--files 10000] [--mb 50] [--runs 5] [--groups 16]
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, rpcClient, timeNode } from "./lib/measure.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const option = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const FILES = option("--files", 10_000);
const MB = option("--mb", 50);
const RUNS = option("--runs", 5);
const GROUPS = option("--groups", 16);
const cli = join(root, "dist", "cli", "main.js");
const work = mkdtempSync(join(tmpdir(), "akw-"));
const home = join(work, "home");
const repo = join(work, "repo");
const env = { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", HOME: home, AGENT_PROFILE: "" };
const git = (...args) => execFileSync("git", args, { cwd: repo, stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28 }).toString();
const fmt = (x, d = 1) => x.toFixed(d);

console.log(
  `kanban-worktree bench, ${new Date().toISOString()}, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);

const groups = [];
try {
  // ---------- the repository ----------
  mkdirSync(repo, { recursive: true });
  mkdirSync(home, { recursive: true });
  git("init", "-q", "-b", "main");
  git("config", "user.email", "bench@example.invalid");
  git("config", "user.name", "bench");
  const size = Math.floor((MB * 1024 * 1024) / FILES);
  let seed = 1;
  for (let i = 0; i < FILES; i++) {
    const dir = join(repo, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    // Pseudo-random text, so the 50 MB are 50 MB in the checkout (git compresses its objects).
    const buf = Buffer.alloc(size);
    for (let j = 0; j < size; j++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      buf[j] = 97 + (seed % 26);
    }
    writeFileSync(join(dir, `f${i}.txt`), buf);
  }
  git("add", "-A");
  git("commit", "-q", "-m", "bench repository");
  console.log(`repository: ${FILES} files, ${fmt((size * FILES) / 1024 ** 2, 0)} MB`);

  // ---------- 1. worktree creation ----------
  const baseline = [];
  for (let i = 0; i < RUNS; i++) {
    const path = join(work, `plain-${i}`);
    const t0 = performance.now();
    git("worktree", "add", "-q", "-b", `plain/${i}`, path, "HEAD");
    baseline.push(performance.now() - t0);
    git("worktree", "remove", "--force", path);
  }
  timeNode(env, [cli, "daemon", "start", "--json"]);
  const { rpc, close } = await rpcClient(home);
  const creates = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await rpc.sendRequest("kanban.create", { title: `bench task ${i}`, workspace: repo, hold: true });
    creates.push(performance.now() - t0);
    if (!r.task.git?.path) throw new Error("the task got no worktree");
  }
  const c = median(creates);
  const b = median(baseline);
  console.log(
    `${c < 1000 ? "✓" : "✗"} task create with a worktree: ${fmt(c)} ms median of ${RUNS} (target < 1000 ms); plain git worktree add: ${fmt(b)} ms; ratio ${fmt(c / b, 2)}`,
  );

  // ---------- 2. ps ----------
  for (let i = 0; i < GROUPS; i++) {
    const child = spawn("/bin/sh", ["-c", "sleep 600 & (while :; do sleep 0.05; done) & wait"], { detached: true, stdio: "ignore" });
    child.unref();
    groups.push(child.pid);
  }
  const { usageOfGroups } = await import(pathToFileURL(join(root, "dist/daemon/process/process-group.js")).href);
  const { processGroupMembers } = await import(pathToFileURL(join(root, "dist/shared/process.js")).href);
  // Wait until every group has its three processes.
  for (let t = 0; t < 100 && [...usageOfGroups(groups).values()].some((u) => u.processes < 3); t++) await new Promise((r) => setTimeout(r, 50));
  const scan = [];
  const ps = [];
  for (let i = 0; i < 30; i++) {
    let t0 = performance.now();
    processGroupMembers(groups[0]);
    scan.push(performance.now() - t0);
    t0 = performance.now();
    usageOfGroups(groups);
    ps.push(performance.now() - t0);
  }
  const usage = [...usageOfGroups(groups).values()];
  const p = median(ps);
  console.log(
    `${p < 50 ? "✓" : "✗"} ps over ${GROUPS} groups (${usage.reduce((n, u) => n + u.processes, 0)} processes; CPU and RSS summed per group): ${fmt(p, 2)} ms median (target < 50 ms); one /proc scan for one group: ${fmt(median(scan), 2)} ms; ratio ${fmt(p / median(scan), 2)}`,
  );
  const rt = [];
  const stats = [];
  for (let i = 0; i < 30; i++) {
    let t0 = performance.now();
    await rpc.sendRequest("kanban.ps", {});
    rt.push(performance.now() - t0);
    t0 = performance.now();
    await rpc.sendRequest("kanban.stats", {});
    stats.push(performance.now() - t0);
  }
  console.log(
    `  kanban.ps over the socket (no workers): ${fmt(median(rt), 2)} ms; kanban.stats: ${fmt(median(stats), 2)} ms; ratio ${fmt(median(rt) / median(stats), 2)}`,
  );
  close();
} finally {
  for (const pid of groups) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
  }
  spawnSync(process.execPath, [cli, "daemon", "stop"], { env, stdio: "ignore" });
  rmSync(work, { recursive: true, force: true });
}

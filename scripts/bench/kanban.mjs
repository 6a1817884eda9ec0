#!/usr/bin/env node
// Kanban benchmark. Needs a build (npm run build). On a temp home with a 10,000-task board:
//  1. task creations per second over the socket (JSON-RPC `kanban.create`, 64 in flight;
//     target >= 500/s), and the same on the empty board vs the full one (a change should cost
//     the same at 10 and 10,000 tasks);
//  2. median wall time of `agent kanban list --json` (every task) as a ratio to
//     `agent daemon status --json`, interleaved in the same run (target: ratio <= 3);
//  3. a dispatcher tick that spawns nothing (target < 20 ms): the board queries a tick makes
//     (ready, running and triage tasks of a 10,000-task board, in-process), and, when the
//     dispatcher is built in, `kanban.dispatch --dry-run` over the socket (round trip included).
// Usage: node scripts/bench/kanban.mjs [--tasks N] [--runs N]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, rpcClient, timeNode } from "./lib/measure.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const option = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const TASKS = option("--tasks", 10_000);
const RUNS = option("--runs", 15);
const cli = join(root, "dist", "cli", "main.js");
const home = mkdtempSync(join(tmpdir(), "akb-"));
const env = { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", HOME: home, AGENT_PROFILE: "" };

const time = (args) => timeNode(env, args);
const fmt = (x, d = 1) => x.toFixed(d);

/** `n` creations with `window` in flight; returns creations per second and the ids. */
async function createMany(rpc, n, window, label) {
  const ids = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (next < n) {
        const i = next++;
        const r = await rpc.sendRequest("kanban.create", { title: `${label} ${i}`, body: "benchmark task with a short body" });
        ids.push(r.task.id);
      }
    }),
  );
  return { rate: n / ((performance.now() - t0) / 1000), ids };
}

/** The in-process board queries of a dispatcher tick on a board of `n` tasks, most of them done. */
async function tickQueries(n) {
  const { BucketedKv } = await import(pathToFileURL(join(root, "dist/daemon/actors/storage/kv.js")).href);
  const { Board } = await import(pathToFileURL(join(root, "dist/daemon/kanban/board/board.js")).href);
  const { BoardStore } = await import(pathToFileURL(join(root, "dist/daemon/kanban/board/store.js")).href);
  const dir = mkdtempSync(join(tmpdir(), "akb-board-"));
  try {
    const env = {
      resolveAssignee: (r) => ({ assignee: r ?? "default", fellBack: false }),
      orchestrator: () => "default",
      failureLimit: () => 2,
      profileExists: () => true,
    };
    const board = new Board("default", new BoardStore(new BucketedKv(dir)), env);
    await board.load();
    const ids = [];
    for (let i = 0; i < n; i++) ids.push((await board.create({ title: `t ${i}`, triage: i % 500 === 1 }, "bench")).task.id);
    const ready = ids.filter((id) => board.get(id).status === "ready");
    for (let i = 0; i < ready.length - 20; i += 1000)
      await board.complete(ready.slice(i, Math.min(i + 1000, ready.length - 20)), { summary: "bench" }, "bench");
    for (const id of ready.slice(-20, -10)) await board.claim(id, { runId: `r_${id}`, profile: "default" });
    const samples = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      board.readyTasks();
      board.runningTasks();
      board.triageTasks();
      samples.push(performance.now() - t0);
    }
    return { ms: median(samples), ready: board.readyTasks().length, running: board.runningTasks().length, triage: board.triageTasks().length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  time([cli, "daemon", "start", "--json"]);
  const { rpc, close } = await rpcClient(home);
  const empty = await createMany(rpc, 500, 64, "warm");
  const bulk = await createMany(rpc, TASKS - 1000, 64, "task");
  const full = await createMany(rpc, 500, 64, "late");
  const total = TASKS;
  console.log(`creations over the socket (64 in flight): ${fmt(bulk.rate, 0)}/s over ${bulk.ids.length} tasks (target >= 500/s)`);
  console.log(`  first 500 on an empty board: ${fmt(empty.rate, 0)}/s; last 500 on a ${total - 500}-task board: ${fmt(full.rate, 0)}/s`);
  let sequentialN = 0;
  const s0 = performance.now();
  while (performance.now() - s0 < 1000) {
    await rpc.sendRequest("kanban.create", { title: `seq ${sequentialN}`, idempotencyKey: `seq-${sequentialN}` });
    sequentialN++;
  }
  console.log(`  one at a time: ${fmt(sequentialN / ((performance.now() - s0) / 1000), 0)}/s`);

  // list vs status, interleaved after a warm-up.
  for (let i = 0; i < 2; i++) {
    time([cli, "daemon", "status", "--json"]);
    time([cli, "kanban", "list", "--json"]);
  }
  const status = [];
  const list = [];
  let listed = 0;
  for (let i = 0; i < RUNS; i++) {
    status.push(time([cli, "daemon", "status", "--json"]).ms);
    const r = time([cli, "kanban", "list", "--json"]);
    list.push(r.ms);
    listed = JSON.parse(r.stdout).tasks.length;
  }
  const ratio = median(list) / median(status);
  console.log(
    `agent kanban list --json (${listed} tasks): ${fmt(median(list))} ms; agent daemon status --json: ${fmt(median(status))} ms; ratio ${fmt(ratio, 2)} (target <= 3)`,
  );

  const queries = await tickQueries(TASKS);
  console.log(
    `dispatcher tick, board queries (ready ${queries.ready}, running ${queries.running}, triage ${queries.triage} of ${TASKS}): ${fmt(queries.ms, 3)} ms in-process (target < 20 ms)`,
  );
  // The daemon's board as a tick usually finds it: most tasks done, a few ready.
  const open = (await rpc.sendRequest("kanban.list", { status: ["ready"] })).tasks.map((t) => t.id);
  for (let i = 0; i < open.length - 10; i += 1000) {
    await rpc.sendRequest("kanban.complete", { ids: open.slice(i, Math.min(i + 1000, open.length - 10)), summary: "bench" });
  }
  try {
    await rpc.sendRequest("kanban.dispatch", { dryRun: true });
    const ticks = [];
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now();
      await rpc.sendRequest("kanban.dispatch", { dryRun: true });
      ticks.push(performance.now() - t0);
    }
    console.log(
      `dispatcher dry-run tick over the socket on the ${TASKS}-task board (10 ready): ${fmt(median(ticks), 2)} ms median (round trip included; target < 20 ms)`,
    );
  } catch (error) {
    console.log(`dispatcher dry-run tick: not measured (${error?.data?.message ?? error?.message ?? error})`);
  }
  close();
} finally {
  spawnSync(process.execPath, [cli, "daemon", "stop"], { env, stdio: "ignore" });
  rmSync(home, { recursive: true, force: true });
}

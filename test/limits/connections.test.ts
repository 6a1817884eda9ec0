// File descriptors hold: any local process may open thousands of idle connections to the
// gateway and the daemon's socket; the daemon caps both (dropping the oldest idle first), so the
// CLI still answers, a kanban create still writes, and nothing fails with EMFILE. Idle HTTP
// connections (silent, keep-alive, half-sent headers) are closed after gateway.idle_timeout_ms,
// while a slow request in flight is not cut.
//
// The daemon runs with RLIMIT_NOFILE 2048 (`ulimit -n` in the shell that starts it) so that the
// 18,000 connections this process can open (its own limit is the machine's 20,000) are many
// times what the daemon has; without the caps it runs out of descriptors.
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, killQuietly, runCli, tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const DAEMON_NOFILE = 2048;
const PER_KIND = 9000;

function logText(home: string): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(readFileSync(p, "utf8"));
    }
  };
  walk(join(home, "logs"));
  return out.join("\n");
}

/** `agent daemon start` from a shell that first lowers the open-file limit (the daemon inherits it). */
async function startLimited(home: string, env: NodeJS.ProcessEnv): Promise<{ pid: number; url: string }> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn("sh", ["-c", `ulimit -n ${DAEMON_NOFILE} && exec "$0" "$1" daemon start --json`, process.execPath, CLI], {
      env: { ...process.env, AGENT_HOME: home, NO_COLOR: "1", AGENT_GATEWAY_PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`daemon start exited ${code}: ${stderr}${stdout}`))));
  });
  const { pid } = JSON.parse(out) as { pid: number };
  const status = JSON.parse((await runCli(["daemon", "status", "--json"], { home, env })).stdout);
  return { pid, url: status.gateway_url };
}

/** Open `n` connections (`open` makes one), at most `batch` connecting at once; resolves with the ones that connected. */
async function openMany(n: number, open: () => Socket, batch = 400): Promise<Socket[]> {
  const sockets: Socket[] = [];
  let next = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const s = open();
      const timer = setTimeout(() => (s.destroy(), resolve()), 3000);
      s.once("connect", () => (clearTimeout(timer), sockets.push(s), resolve()));
      s.once("error", () => (clearTimeout(timer), resolve()));
    });
  const worker = async () => {
    while (next < n) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: batch }, worker));
  for (const s of sockets) s.on("error", () => undefined);
  return sockets;
}

test("18,000 idle connections (gateway and socket) leave the CLI answering, writes succeeding and no EMFILE", async () => {
  const { home, cleanup } = tempHome("fds");
  const env = { AGENT_GATEWAY_PORT: "0" };
  // Long idle timeout: the caps, not the idle sweep, must hold the line here.
  writeFileSync(join(home, "config.yaml"), "gateway:\n  idle_timeout_ms: 600000\n");
  let pid = 0;
  let sockets: Socket[] = [];
  try {
    let url: string;
    ({ pid, url } = await startLimited(home, env));
    assert.match(readFileSync(`/proc/${pid}/limits`, "utf8"), new RegExp(`Max open files\\s+${DAEMON_NOFILE}\\s`));
    const u = new URL(url);
    const started = Date.now();
    const tcp = await openMany(PER_KIND, () => connect(Number(u.port), u.hostname));
    const unix = await openMany(PER_KIND, () => connect(join(home, "daemon.sock")));
    sockets = [...tcp, ...unix];
    const openedIn = Date.now() - started;
    // Far more than the daemon has descriptors for.
    assert.ok(tcp.length + unix.length > DAEMON_NOFILE * 4, `opened ${tcp.length} TCP + ${unix.length} Unix connections in ${openedIn} ms`);
    const status = await runCli(["daemon", "status", "--json"], { home, env });
    assert.is(status.code, 0, status.stderr);
    assert.is(JSON.parse(status.stdout).pid, pid);
    const created = await runCli(["kanban", "create", "written while the daemon is flooded", "--json"], { home, env });
    assert.is(created.code, 0, created.stderr);
    assert.ok(JSON.parse(created.stdout).task.id);
    const listed = await runCli(["kanban", "list", "--json"], { home, env });
    assert.is(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /written while the daemon is flooded/);
    // The gateway still answers a new HTTP client.
    const health = await fetch(`${url}/health`);
    assert.is(health.status, 200);
    // The daemon stayed under its descriptor limit, with room left for its files.
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    assert.ok(fds < DAEMON_NOFILE * 0.8, `the daemon holds ${fds} descriptors of ${DAEMON_NOFILE}`);
    const logs = logText(home);
    assert.not.match(logs, /EMFILE|too many open files/i);
    assert.match(logs, /connection cap reached/);
  } finally {
    for (const s of sockets) s.destroy();
    await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
    killQuietly(pid);
    cleanup();
  }
});

const SLOW = `
export const slow = {
  state: {},
  actions: { wait: async (c, ms) => { await new Promise((r) => setTimeout(r, ms)); return "done"; } },
};
`;

test("idle HTTP connections are closed after gateway.idle_timeout_ms; a slow request in flight is not", async () => {
  const { home, cleanup } = tempHome("idle");
  const env = { AGENT_GATEWAY_PORT: "0" };
  mkdirSync(join(home, "actors"), { recursive: true });
  writeFileSync(join(home, "actors", "slow.mjs"), SLOW);
  writeFileSync(join(home, "config.yaml"), "gateway:\n  idle_timeout_ms: 800\n");
  let pid = 0;
  try {
    let url: string;
    ({ pid, url } = await startLimited(home, env));
    const u = new URL(url);
    const closedAfter = (s: Socket, t0: number) => new Promise<number>((resolve) => s.once("close", () => resolve(Date.now() - t0)));
    // Silent, half-sent headers, and keep-alive after one answered request.
    const t0 = Date.now();
    const [silent, partial, kept] = await Promise.all([0, 1, 2].map(() => openMany(1, () => connect(Number(u.port), u.hostname), 1)));
    partial[0].write(`GET /health HTTP/1.1\r\nHost: ${u.host}\r\n`);
    let answered = 0;
    kept[0].on("data", () => (answered = Date.now()));
    kept[0].write(`GET /health HTTP/1.1\r\nHost: ${u.host}\r\nConnection: keep-alive\r\n\r\n`);
    const [a, b, c] = await Promise.all([closedAfter(silent[0], t0), closedAfter(partial[0], t0), closedAfter(kept[0], t0)]);
    assert.ok(answered > 0, "the keep-alive request was answered");
    for (const [what, ms] of [
      ["silent", a],
      ["half-sent headers", b],
      ["keep-alive", c],
    ] as const) {
      assert.ok(ms >= 700 && ms < 3000, `${what} connection closed after ${ms} ms (idle timeout 800 ms)`);
    }
    // A request that takes 3 idle timeouts to answer is answered.
    await waitFor("the slow module", async () => ((await (await fetch(`${url}/metadata`)).json()) as any)?.actorNames?.slow);
    const put = await fetch(`${url}/actors`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "slow", key: "k", runner_name_selector: "default", crash_policy: "sleep" }),
    });
    const created = (await put.json()) as any;
    assert.ok(created.actor, JSON.stringify(created));
    const id = created.actor.actor_id;
    const r = await fetch(`${url}/gateway/${id}/action/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ args: [2400] }),
    });
    assert.is(r.status, 200);
    assert.equal(await r.json(), { output: "done" });
  } finally {
    await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
    killQuietly(pid);
    cleanup();
  }
});

test.run();

import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isAlive } from "../../shared/process.js";
import { rpcConnect, runCli, spawnDaemon, startedHome, tempHome, waitFor } from "../helpers/cli.js";

test("a daemon starts, reports its status as JSON, and stops", async () => {
  const h = await startedHome();
  try {
    const status = await runCli(["daemon", "status", "--json"], { home: h.home });
    assert.is(status.code, 0, status.stderr);
    const info = JSON.parse(status.stdout);
    assert.is(info.running, true);
    assert.is(info.pid, h.pid);
    assert.is(info.home, h.home);
    assert.is(statSync(join(h.home, "daemon.sock")).mode & 0o777, 0o600);
    assert.is(readFileSync(join(h.home, "daemon.lock"), "utf8").split("\n")[0], String(h.pid));
    const stop = await runCli(["daemon", "stop", "--json"], { home: h.home });
    assert.is(stop.code, 0, stop.stderr);
    assert.is(JSON.parse(stop.stdout).stopped, true);
    const after = await runCli(["daemon", "status", "--json"], { home: h.home });
    assert.is(after.code, 3);
    assert.is(JSON.parse(after.stdout).running, false);
  } finally {
    await h.dispose();
  }
});

test("a daemon whose home is removed exits, without writing the home back", async () => {
  const h = await startedHome({ AGENT_HOME_CHECK_MS: "100" });
  try {
    rmSync(h.home, { recursive: true, force: true });
    await waitFor("the daemon to exit", () => (isAlive(h.pid) ? null : true), 10_000);
    assert.not.ok(existsSync(h.home), "nothing re-created the home");
  } finally {
    await h.dispose();
  }
});

test("status of a home without a daemon says so and exits 3 without starting one", async () => {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(["daemon", "status"], { home });
    assert.is(r.code, 3);
    assert.match(r.stdout, /not running/);
    assert.not.ok(require_exists(join(home, "daemon.lock")));
  } finally {
    cleanup();
  }
});

function require_exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

test("a second daemon on the same home refuses to start and names the running pid", async () => {
  const h = await startedHome();
  try {
    const second = await spawnDaemon(h.home).then(
      (d) => (d.kill(), null),
      (error: Error) => error.message,
    );
    assert.ok(second, "the second daemon must not become ready");
    assert.match(second!, new RegExp(`already running.*pid ${h.pid}`));
    const again = await runCli(["daemon", "start", "--json"], { home: h.home });
    assert.is(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout), { started: false, running: true, pid: h.pid });
    assert.is(readFileSync(join(h.home, "daemon.lock"), "utf8").split("\n")[0], String(h.pid));
  } finally {
    await h.dispose();
  }
});

test("after kill -9 a new start takes over the stale lock", async () => {
  const h = await startedHome();
  try {
    process.kill(h.pid, "SIGKILL");
    await waitFor("the killed daemon to die", () => !isAlive(h.pid));
    assert.is(readFileSync(join(h.home, "daemon.lock"), "utf8").split("\n")[0], String(h.pid), "the stale lock is left behind");
    const start = await runCli(["daemon", "start", "--json"], { home: h.home });
    assert.is(start.code, 0, start.stderr);
    const { pid, started } = JSON.parse(start.stdout);
    assert.is(started, true);
    assert.is.not(pid, h.pid);
    assert.is(readFileSync(join(h.home, "daemon.lock"), "utf8").split("\n")[0], String(pid));
    const status = await runCli(["daemon", "status", "--json"], { home: h.home });
    assert.is(JSON.parse(status.stdout).pid, pid);
  } finally {
    await h.dispose();
  }
});

test("SIGTERM stops accepting connections, lets an in-flight call finish, and exits 0", async () => {
  const { home, cleanup } = tempHome();
  const d = await spawnDaemon(home);
  try {
    const c = await rpcConnect(home);
    const inFlight = c.rpc.sendRequest("ping", { delayMs: 800 }) as Promise<{ pong: boolean }>;
    // The daemon handles a connection's requests in order: once a later ping is answered, the
    // delayed one has been received and is in flight.
    await c.rpc.sendRequest("ping", {});
    d.child.kill("SIGTERM");
    await waitFor(
      "the socket to close for new clients",
      () =>
        !existsSync(join(home, "daemon.sock")) ||
        rpcConnect(home).then(
          (x) => (x.close(), false),
          () => true,
        ),
    );
    const answer = await inFlight;
    assert.is(answer.pong, true);
    const exit = await d.exited;
    assert.equal(exit, { code: 0, signal: null });
    assert.not.ok(existsSync(join(home, "daemon.lock")), "the lock is released");
    c.close();
  } finally {
    d.kill();
    cleanup();
  }
});

test("a socket path too long for the OS gets a clear error naming the limit", async () => {
  const { home: base, cleanup } = tempHome();
  const home = join(base, "x".repeat(60), "y".repeat(40));
  mkdirSync(home, { recursive: true });
  try {
    const r = await runCli(["daemon", "start"], { home });
    assert.is(r.code, 69);
    assert.match(r.stderr, /socket path .* 107 bytes/);
    assert.not.match(r.stderr, /\n\s+at /, "no stack trace");
    const direct = await spawnDaemon(home).then(
      (d) => (d.kill(), ""),
      (e: Error) => e.message,
    );
    assert.match(direct, /107/);
    assert.match(direct, /shorter AGENT_HOME/);
  } finally {
    cleanup();
  }
});

test("under systemd the daemon writes journald priority-prefixed lines to stderr", async () => {
  const { home, cleanup } = tempHome();
  const d = await spawnDaemon(home, { INVOCATION_ID: "0123456789abcdef" });
  try {
    await waitFor("the ready line on stderr", () => d.stderr().includes("daemon ready"));
    const line = d
      .stderr()
      .split("\n")
      .find((l) => l.includes("daemon ready"))!;
    assert.match(line, /^<6>\{/);
    assert.is(JSON.parse(line.slice(3)).msg, "daemon ready");
    d.child.kill("SIGTERM");
    assert.is((await d.exited).code, 0);
  } finally {
    d.kill();
    cleanup();
  }
});

test.run();

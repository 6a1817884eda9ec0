// `agent update` of a git install (docs/debug-and-update.md): a local bare repository stands in
// as the install's origin; the install is a clone of it holding a copy of this build's dist/
// (gitignored, as in a real checkout). The install and build steps are injected
// (AGENT_UPDATE_INSTALL_COMMAND / AGENT_UPDATE_BUILD_COMMAND) so the test runs in seconds; git is
// real. A new commit on origin is reported by --check without changing anything, refused while
// a tracked file has local changes, then fast-forwarded, "installed" (with the daemon stopped:
// node_modules is never replaced under a running daemon), "built", and the home's daemon started
// again on it: the daemon's reported commit changes.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type CliResult, killQuietly, ROOT, tempHome } from "../helpers/cli.js";
import { missingCommand, testUnless } from "../helpers/skip.js";
import { waitFor } from "../helpers/wait.js";
import { connectDaemon } from "../../shared/client/index.js";

const gitTest = testUnless(missingCommand("git", ["--version"]));

/** Keys of the --json output are snake_case (docs/cli.md), as test/foundation/cli-json.test.ts checks for the other commands. */
function snakeOnly(value: unknown, path = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => snakeOnly(v, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [...(/^[a-z0-9]+(_[a-z0-9]+)*$/.test(k) ? [] : [`${path}.${k}`]), ...snakeOnly(v, `${path}.${k}`)]);
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.invalid",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: "utf8" }).trim();

const root = mkdtempSync(join(tmpdir(), "upd-"));
const origin = join(root, "origin.git");
const seed = join(root, "seed");
const app = join(root, "app");
const h = tempHome("updh");
const pids: number[] = [];

/** The install: a clone of origin with this build's dist/ and node_modules beside it (both ignored). */
function makeInstall(): void {
  mkdirSync(seed);
  git(root, "init", "-q", "--bare", "-b", "main", origin);
  git(seed, "init", "-q", "-b", "main");
  writeFileSync(join(seed, "package.json"), `${JSON.stringify({ name: "agent", version: "0.1.0", type: "module" }, null, 2)}\n`);
  writeFileSync(join(seed, ".gitignore"), "dist/\nnode_modules\n*.marker\n");
  writeFileSync(join(seed, "README.md"), "the install\n");
  git(seed, "add", "-A");
  git(seed, "commit", "-q", "-m", "first");
  git(seed, "remote", "add", "origin", origin);
  git(seed, "push", "-q", "origin", "main");
  git(root, "clone", "-q", origin, app);
  cpSync(join(ROOT, "dist"), join(app, "dist"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(app, "node_modules"));
}

/** The injected steps: each leaves a marker in the install, so the test sees they ran there. */
const STEPS = {
  AGENT_UPDATE_INSTALL_COMMAND: JSON.stringify([process.execPath, "-e", "require('fs').writeFileSync('install.marker', 'ran')"]),
  AGENT_UPDATE_BUILD_COMMAND: JSON.stringify([process.execPath, "-e", "require('fs').writeFileSync('build.marker', 'ran')"]),
};

/** The install's own CLI, as a user of that install runs it. */
function agent(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(app, "dist", "cli", "main.js"), ...args], {
      env: { ...process.env, ...GIT_ENV, AGENT_HOME: h.home, AGENT_GATEWAY_PORT: "0", NO_COLOR: "1", ...STEPS, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`agent ${args.join(" ")} timed out\n${stdout}\n${stderr}`));
    }, 60_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The running daemon's own status, over its socket. */
async function status(): Promise<{ pid: number; commit: string | null; app_dir: string }> {
  const client = await connectDaemon({ home: h.home, autostart: false });
  try {
    const s = await client.call("daemon.status", {});
    pids.push(s.pid);
    return s;
  } finally {
    client.close();
  }
}

let first = "";
let second = "";

test.after(async () => {
  await agent(["daemon", "stop"]).catch(() => undefined);
  for (const pid of pids) killQuietly(pid);
  h.cleanup();
  rmSync(root, { recursive: true, force: true });
});

gitTest("the daemon of a git install reports the commit it runs", async () => {
  makeInstall();
  first = git(app, "rev-parse", "HEAD");
  const started = await agent(["daemon", "start", "--json"]);
  assert.is(started.code, 0, started.stderr);
  const s = await status();
  assert.is(s.commit, first);
  assert.is(s.app_dir, app);
});

gitTest("--check reports the new commit on origin and changes nothing", async () => {
  writeFileSync(join(seed, "CHANGES.md"), "a change\n");
  git(seed, "add", "-A");
  git(seed, "commit", "-q", "-m", "the second commit");
  git(seed, "push", "-q", "origin", "main");
  second = git(seed, "rev-parse", "HEAD");
  const before = await status();
  const r = await agent(["update", "--check", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(snakeOnly(out), []);
  assert.is(out.kind, "git");
  assert.is(out.current, first);
  assert.is(out.available, second);
  assert.is(out.up_to_date, false);
  assert.is(out.updated, false);
  assert.is(out.commits.count, 1);
  assert.match(out.commits.log[0], /the second commit/);
  assert.is(git(app, "rev-parse", "HEAD"), first, "HEAD unchanged");
  assert.not.ok(existsSync(join(app, "CHANGES.md")));
  assert.not.ok(existsSync(join(app, "install.marker")) || existsSync(join(app, "build.marker")), "no step ran");
  assert.is((await status()).pid, before.pid, "the daemon was not restarted");
  const text = await agent(["update", "--check"]);
  assert.match(text.stdout, /is available \(installed: [0-9a-f]{12}\)\n1 new commit:\n {2}[0-9a-f]+ the second commit/);
});

gitTest("refused with a clear message while a tracked file has local changes; nothing changes", async () => {
  writeFileSync(join(app, "README.md"), "edited by hand\n");
  const before = await status();
  const r = await agent(["update"]);
  assert.is(r.code, 1, r.stdout);
  assert.match(r.stderr, /has local changes, so it cannot be fast-forwarded; commit or discard them first/);
  assert.match(r.stderr, /M README\.md/);
  assert.is(git(app, "rev-parse", "HEAD"), first);
  assert.is((await status()).pid, before.pid);
  git(app, "checkout", "--", "README.md");
});

gitTest("fast-forwarded, installed, built, and the daemon restarted on the new commit", async () => {
  const before = await status();
  // The install step notes whether the daemon still runs: it must be stopped before node_modules is replaced.
  // (A zombie left unreaped by the container's init counts as stopped: /proc says Z.)
  const install = `const fs = require('fs'); let s = 'stopped'; try { const st = fs.readFileSync('/proc/${before.pid}/stat', 'utf8'); if (!/^Z|^X/.test(st.slice(st.lastIndexOf(')') + 2))) s = 'alive'; } catch {} fs.writeFileSync('install.marker', 'ran, daemon ' + s);`;
  const r = await agent(["update", "--json"], { AGENT_UPDATE_INSTALL_COMMAND: JSON.stringify([process.execPath, "-e", install]) });
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(snakeOnly(out), []);
  assert.is(out.updated, true);
  assert.is(out.available, second);
  assert.is(git(app, "rev-parse", "HEAD"), second);
  assert.ok(existsSync(join(app, "CHANGES.md")));
  assert.is(readFileSync(join(app, "install.marker"), "utf8"), "ran, daemon stopped");
  assert.is(readFileSync(join(app, "build.marker"), "utf8"), "ran");
  assert.is(out.daemon.restarted, true);
  assert.is(out.daemon.commit, second);
  assert.is.not(out.daemon.pid, before.pid);
  const after = await status();
  assert.is(after.commit, second, "the daemon now runs the new commit");
  assert.is(after.pid, out.daemon.pid);
  // No desktop-control driver recorded in this home: the hook's probe says so and nothing is refreshed.
  assert.equal(out.hooks, [{ name: "desktop-control driver", ran: false, detail: "not installed" }]);
});

gitTest("once up to date: says so, and leaves the daemon alone", async () => {
  const before = await status();
  const r = await agent(["update"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /up to date/);
  assert.is((await status()).pid, before.pid);
});

gitTest("a failed install with the daemon running: the progress shows the stop, and the daemon is started again", async () => {
  writeFileSync(join(seed, "THIRD.md"), "a third change\n");
  git(seed, "add", "-A");
  git(seed, "commit", "-q", "-m", "the third commit");
  git(seed, "push", "-q", "origin", "main");
  const before = await status();
  const r = await agent(["update"], { AGENT_UPDATE_INSTALL_COMMAND: JSON.stringify([process.execPath, "-e", "process.exit(3)"]) });
  assert.is(r.code, 1, r.stdout);
  assert.match(r.stderr, new RegExp(`… stopping the daemon \\(pid ${before.pid}\\) before the install is replaced`));
  assert.match(r.stderr, /install failed \(.* exited with 3\)/);
  const again = /the daemon was started again \(pid (\d+)\)/.exec(r.stderr);
  assert.ok(again, r.stderr);
  const after = await status();
  assert.is(after.pid, Number(again![1]));
  assert.is.not(after.pid, before.pid);
});

/** An update interrupted by `signal` while its install step runs starts again the daemon it stopped. */
async function interruptedInstall(signal: NodeJS.Signals, change: string): Promise<void> {
  writeFileSync(join(seed, `${change}.md`), `a ${change} change\n`);
  git(seed, "add", "-A");
  git(seed, "commit", "-q", "-m", `the ${change} commit`);
  git(seed, "push", "-q", "origin", "main");
  const before = await status();
  rmSync(join(app, "install.marker"), { force: true });
  // An install that takes long; the signal goes to the CLI's process group while it runs.
  const slow = "require('fs').writeFileSync('install.marker', 'running'); setInterval(() => {}, 1000);";
  const child = spawn(process.execPath, [join(app, "dist", "cli", "main.js"), "update"], {
    env: {
      ...process.env,
      ...GIT_ENV,
      AGENT_HOME: h.home,
      AGENT_GATEWAY_PORT: "0",
      NO_COLOR: "1",
      ...STEPS,
      AGENT_UPDATE_INSTALL_COMMAND: JSON.stringify([process.execPath, "-e", slow]),
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  await waitFor(
    () => `the install step to run\n${stderr}`,
    () => existsSync(join(app, "install.marker")),
    30_000,
  );
  process.kill(-child.pid!, signal);
  await closed;
  const client = await waitFor(
    () => `a daemon running again after the interrupted update (${signal})\n${stderr}`,
    () => connectDaemon({ home: h.home, autostart: false }).catch(() => null),
    15_000,
  );
  const s = await client.call("daemon.status", {});
  client.close();
  pids.push(s.pid);
  assert.is.not(s.pid, before.pid);
}

gitTest("an update interrupted (Ctrl-C) while installing starts again the daemon it stopped", () => interruptedInstall("SIGINT", "fourth"));

gitTest("an update whose terminal closes (SIGHUP) while installing starts again the daemon it stopped", () => interruptedInstall("SIGHUP", "fifth"));

test.run();

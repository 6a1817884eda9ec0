// The updater's steps and refusals (daemon/update/updater.ts), in process with a scripted
// command runner standing in for git, npm and the new CLI: the order of the steps, the
// desktop-control hook run only when its probe says a driver is installed, the refusals (another
// branch, a diverged history) that run nothing after them, and a failed install that leaves the
// build and the restart undone and says so. The real git and npm paths are in update-git and
// update-package.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { AgentError } from "../../shared/errors.js";
import { type RunCommand, update, type UpdaterDeps } from "../../daemon/update/updater.js";

const A = "a".repeat(40);
const B = "b".repeat(40);
const appDir = mkdtempSync(join(tmpdir(), "ups-"));
// A home where no daemon runs: the restart step reports it and starts none.
const home = mkdtempSync(join(tmpdir(), "upsh-"));
test.after(() => {
  rmSync(appDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

interface Script {
  branch?: string;
  ancestor?: boolean;
  installCode?: number;
  probe?: { code: number; output: string };
}

function deps(script: Script, env: NodeJS.ProcessEnv = {}): { deps: UpdaterDeps; ran: string[]; steps: string[] } {
  const ran: string[] = [];
  const steps: string[] = [];
  const run: RunCommand = async (file, args) => {
    const line = [file === process.execPath ? "node" : file, ...args.map((a) => a.replace(appDir, "<app>"))].join(" ");
    ran.push(line);
    const ok = (output = "") => ({ code: 0, output });
    if (file === "git") {
      const [cmd, ...rest] = args;
      if (cmd === "rev-parse" && rest[0] === "--show-toplevel") return ok(`${appDir}\n`);
      if (cmd === "status") return ok("");
      if (cmd === "symbolic-ref") return ok(`${script.branch ?? "main"}\n`);
      if (cmd === "fetch") return ok();
      if (cmd === "rev-parse") return ok(rest[0] === "HEAD" ? A : B);
      if (cmd === "merge-base") return { code: script.ancestor === false ? 1 : 0, output: "" };
      if (cmd === "rev-list") return ok("2\n");
      if (cmd === "log") return ok("bbbbbbb second\nccccccc first\n");
      if (cmd === "merge") return ok();
    }
    if (file === "npm" && args[0] === "ci") return { code: script.installCode ?? 0, output: script.installCode ? "npm ERR! network\n" : "" };
    if (file === "npm") return ok();
    if (file === process.execPath && args.includes("status")) return script.probe ?? { code: 2, output: "" };
    if (file === process.execPath) return ok();
    throw new Error(`unexpected command ${line}`);
  };
  return {
    ran,
    steps,
    deps: {
      appDir,
      run,
      env: { ...process.env, AGENT_UPDATE_INSTALL_COMMAND: "", AGENT_UPDATE_BUILD_COMMAND: "", ...env },
      step: (s) => steps.push(s),
      stepDone: () => undefined,
    },
  };
}

async function refused(work: Promise<unknown>): Promise<AgentError> {
  try {
    await work;
  } catch (error) {
    assert.instance(error, AgentError);
    return error as AgentError;
  }
  throw new Error("expected a refusal");
}

test("steps in order: fetch, fast-forward, npm ci, build; the driver hook runs when its probe says installed", async () => {
  const d = deps({ probe: { code: 0, output: '{"display": ":99", "driver": {"version": "1.2.3", "installed": "1.2.3", "pinned": null}}' } });
  const r = await update({ home, check: false }, d.deps);
  assert.is(r.updated, true);
  assert.equal(r.commits, { count: 2, log: ["bbbbbbb second", "ccccccc first"] });
  assert.equal(d.steps, ["fetch", "fast-forward", "install", "build", "desktop-control driver"]);
  const order = d.ran.filter((l) => /^(git (fetch|merge) |npm|node)/.test(l));
  assert.equal(order, [
    "git fetch --quiet origin main",
    "git merge --ff-only --quiet FETCH_HEAD",
    "npm ci",
    "npm run build",
    "node <app>/dist/cli/main.js computer-use status --json",
    "node <app>/dist/cli/main.js computer-use install --upgrade",
  ]);
  assert.equal(r.hooks, [{ name: "desktop-control driver", ran: true, detail: "refreshed" }]);
  assert.is(r.daemon?.restarted, false);
  assert.match(r.daemon?.note ?? "", /no daemon was running/);
});

test("no driver installed: the hook's probe answers, nothing is refreshed", async () => {
  const d = deps({ probe: { code: 0, output: '{"display": ":99", "driver": {"version": "1.2.3", "installed": null, "pinned": null}}' } });
  const r = await update({ home, check: false }, d.deps);
  assert.equal(r.hooks, [{ name: "desktop-control driver", ran: false, detail: "not installed" }]);
  assert.not.ok(d.ran.some((l) => l.includes("--upgrade")));
});

test("--check stops after the report: no merge, no install, no hook", async () => {
  const d = deps({ probe: { code: 0, output: '{"driver": {"installed": "1.2.3"}}' } });
  const r = await update({ home, check: true }, d.deps);
  assert.is(r.updated, false);
  assert.is(r.available, B);
  assert.not.ok(
    d.ran.some((l) => /git merge |npm|node/.test(l)),
    d.ran.join("\n"),
  );
});

test("another branch checked out: refused before anything is fetched", async () => {
  const d = deps({ branch: "feature" });
  const e = await refused(update({ home, check: false }, d.deps));
  assert.is(e.code, "update.not_on_main");
  assert.match(e.message, /is on branch feature; a git install tracks main/);
  assert.not.ok(d.ran.some((l) => l.startsWith("git fetch")));
});

test("a diverged history: refused, nothing merged", async () => {
  const d = deps({ ancestor: false });
  const e = await refused(update({ home, check: false }, d.deps));
  assert.is(e.code, "update.diverged");
  assert.not.ok(d.ran.some((l) => l.startsWith("git merge ")));
});

test("npm ci fails: no build, no restart, and the message says where the work tree is and what to run", async () => {
  const d = deps({ installCode: 1 });
  const e = await refused(update({ home, check: false }, d.deps));
  assert.is(e.code, "update.step_failed");
  assert.match(e.message, /install failed \(npm ci exited with 1\):\nnpm ERR! network/);
  assert.match(e.message, new RegExp(`is now at ${B.slice(0, 12)} but not built\\. Fix the cause`));
  assert.not.ok(d.ran.some((l) => l.startsWith("npm run build") || l.startsWith("node")));
});

test("an injected command that is not a JSON array of strings: a clear usage error", async () => {
  const d = deps({}, { AGENT_UPDATE_BUILD_COMMAND: "npm run build" });
  const e = await refused(update({ home, check: false }, d.deps));
  assert.is(e.code, "usage.invalid");
  assert.match(e.message, /AGENT_UPDATE_BUILD_COMMAND must be a JSON array of strings/);
});

test.run();

/**
 * `agent update` (docs/debug-and-update.md). Runs in the update process (update-main.ts), not
 * in the daemon: an update must work while no daemon runs, and it restarts the daemon itself.
 *
 * - A **git install** (the app's folder is the top of a git work tree) tracks `main`: refuse on
 *   local changes (tracked files), on another branch, or when the history diverged; fetch
 *   `origin main`, fast-forward, install the dependencies (`npm ci`), build (`npm run build`).
 * - A **package install** tracks tagged releases: the registry's `latest` (`npm view`, which
 *   honours the user's npm config, registry included), installed with `npm install -g`.
 * - The home's daemon, when one runs, is stopped gracefully (as `agent daemon stop` does it:
 *   kanban workers are left running and adopted by the next daemon) BEFORE the install is
 *   replaced (the fast-forward, `npm ci`, the build, `npm install -g`), and started again after;
 *   then the post-update hooks run (post-update-hooks.ts). A replacement that fails starts the
 *   stopped daemon again and says so.
 *
 * Every child goes through the one process module (spawnGroup), with its argv as a list: no
 * shell line is ever built. The install and build commands are injectable (AGENT_UPDATE_*).
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { connectDaemon } from "../../shared/client/index.js";
import { startDaemon, stopDaemonAndWait } from "../../shared/client/daemon-process.js";
import { envValue } from "../../shared/config/env.js";
import type { ErrorCode } from "../../shared/error-codes.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { appRoot, packageInfo } from "../../shared/install-info.js";
import type { UpdateHookOutcome, UpdateRequest, UpdateResult } from "../../shared/update.js";
import { type ProcessGroup, spawnGroup } from "../process/process-group.js";
import { POST_UPDATE_HOOKS } from "./post-update-hooks.js";

/** Output kept of a step (its tail is shown when it fails). */
const OUTPUT_TAIL = 64 * 1024;

export interface StepOutcome {
  code: number;
  output: string;
}

/** Runs one command (argv, never a shell line) to its end. */
export type RunCommand = (file: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; label: string }) => Promise<StepOutcome>;

export interface UpdaterDeps {
  appDir: string;
  run: RunCommand;
  /** Progress: a step begins, a step is over. */
  step(step: string, detail: string): void;
  stepDone(step: string, ms: number): void;
  env: NodeJS.ProcessEnv;
}

/** The one running child, so an interrupt can stop its group. */
let current: ProcessGroup | null = null;

/** The default runner: spawnGroup, output collected (bounded), exit code returned. */
export const runCommand: RunCommand = (file, args, options) =>
  new Promise((resolve, reject) => {
    const { child, group } = spawnGroup(file, args, { cwd: options.cwd, env: options.env, label: options.label, record: false });
    current = group;
    let output = "";
    const take = (d: Buffer) => {
      output += d.toString("utf8");
      if (output.length > OUTPUT_TAIL * 2) output = output.slice(-OUTPUT_TAIL);
    };
    child.stdout?.on("data", take);
    child.stderr?.on("data", take);
    child.once("error", (error) => {
      current = null;
      reject(new AgentError("update.step_failed", `could not run ${options.label}: ${error.message}`));
    });
    child.once("close", (code, signal) => {
      current = null;
      group?.forget({ killLeftovers: false });
      resolve({ code: code ?? (signal ? 128 : 1), output: output.slice(-OUTPUT_TAIL) });
    });
  });

/** Stop the running step's whole process group (the CLI was interrupted). */
export function stopCurrentStep(): void {
  current?.stop();
}

/** A command from an AGENT_UPDATE_* variable: a JSON array of strings (argv), else the default. */
function commandFrom(name: "AGENT_UPDATE_INSTALL_COMMAND" | "AGENT_UPDATE_BUILD_COMMAND", fallback: string[], env: NodeJS.ProcessEnv): string[] {
  const raw = envValue(name, env)?.trim();
  if (!raw) return fallback;
  let argv: unknown;
  try {
    argv = JSON.parse(raw);
  } catch {}
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string" && a !== ""))
    throw new AgentError("usage.invalid", `${name} must be a JSON array of strings (the command and its arguments), e.g. ["npm","ci"]`);
  return argv as string[];
}

export function npmCommand(env: NodeJS.ProcessEnv): string {
  return envValue("AGENT_UPDATE_NPM", env)?.trim() || "npm";
}

function tail(text: string, lines = 15): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

/** Runs a step that must succeed; its output's tail is in the error. */
async function must(
  deps: UpdaterDeps,
  step: string,
  detail: string,
  argv: readonly string[],
  code: ErrorCode = "update.step_failed",
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  deps.step(step, detail);
  const began = performance.now();
  const r = await deps.run(argv[0]!, argv.slice(1), { cwd: deps.appDir, env: env ?? deps.env, label: argv.join(" ") });
  if (r.code !== 0) throw new AgentError(code, `${step} failed (${argv.join(" ")} exited with ${r.code})${r.output.trim() ? `:\n${tail(r.output)}` : ""}`);
  deps.stepDone(step, performance.now() - began);
  return r.output;
}

async function git(deps: UpdaterDeps, args: string[]): Promise<StepOutcome> {
  return deps.run("git", args, { cwd: deps.appDir, env: { ...deps.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" }, label: `git ${args.join(" ")}` });
}

async function gitOut(deps: UpdaterDeps, args: string[]): Promise<string> {
  const r = await git(deps, args);
  if (r.code !== 0) throw new AgentError("update.step_failed", `git ${args.join(" ")} failed (exit ${r.code}): ${tail(r.output, 5)}`);
  return r.output.trim();
}

/** Whether the app's folder is the top of a git work tree (an install from a clone). */
export async function isGitInstall(deps: Pick<UpdaterDeps, "appDir" | "run" | "env">): Promise<boolean> {
  const r = await deps
    .run("git", ["rev-parse", "--show-toplevel"], { cwd: deps.appDir, env: { ...deps.env, LC_ALL: "C" }, label: "git rev-parse" })
    .catch(() => null);
  if (r?.code !== 0) return false;
  try {
    return realpathSync(r.output.trim()) === realpathSync(deps.appDir);
  } catch {
    return false;
  }
}

/** Set once `update` begins stopping the home's daemon: starts it again (once). */
let startStoppedDaemon: (() => Promise<unknown>) | null = null;

/**
 * An interrupted update (Ctrl-C, SIGTERM: update-main.ts) starts again the daemon it stopped, on
 * whatever code is there now, before the process leaves; a start already under way is awaited.
 * Without it the home would be left with no daemon (no cron, no chat bridges) until the next command.
 */
export async function startDaemonAfterInterrupt(): Promise<void> {
  await startStoppedDaemon?.().catch(() => undefined);
}

export async function update(request: UpdateRequest, deps: UpdaterDeps): Promise<UpdateResult> {
  const kind = (await isGitInstall(deps)) ? "git" : "package";
  // The running daemon is stopped before anything of the install is replaced (its code and
  // node_modules are read while it runs: a module it loads lazily must not come from a half-
  // replaced tree), and started again once the new code is in place.
  let stopped: StoppedDaemon | null = null;
  // One start of the stopped daemon, whoever asks first: the failure path, the end, or an
  // interrupted update (startDaemonAfterInterrupt, from update-main's SIGINT/SIGTERM handler).
  let starting: Promise<NonNullable<UpdateResult["daemon"]>> | null = null;
  const startAgain = (was: StoppedDaemon) => {
    starting ??= startDaemonAfterUpdate(request.home, deps, was);
    return starting;
  };
  const beforeReplace = async () => {
    stopped = await stopDaemonForUpdate(request.home, deps, (pid) => {
      startStoppedDaemon = () => startAgain({ pid, note: null });
    });
  };
  let base: UpdateResult;
  try {
    base = kind === "git" ? await updateGit(request, deps, beforeReplace) : await updatePackage(request, deps, beforeReplace);
  } catch (error) {
    const was = stopped as StoppedDaemon | null;
    if (was?.pid === null || was === null) throw error;
    // Failed after the daemon was stopped: it is started again (on whatever code is there now).
    const e = toAgentError(error);
    const again = await startAgain(was).catch((startError) => ({ note: toAgentError(startError).message, pid: null }));
    const said = again.pid !== null ? `the daemon was started again (pid ${again.pid})` : `the daemon could not be started again: ${again.note}`;
    throw new AgentError(e.code, `${e.message}\n${said}`, e.metadata);
  }
  if (request.check || !base.updated) return base;
  const daemon = await startAgain(stopped ?? { pid: null, note: null });
  const hooks = await runHooks(request.home, deps);
  return { ...base, daemon, hooks };
}

async function updateGit(request: UpdateRequest, deps: UpdaterDeps, beforeReplace: () => Promise<void>): Promise<UpdateResult> {
  const changed = await gitOut(deps, ["status", "--porcelain", "--untracked-files=no"]);
  if (changed)
    throw new AgentError(
      "update.local_changes",
      `${deps.appDir} has local changes, so it cannot be fast-forwarded; commit or discard them first (git -C ${deps.appDir} status):\n${changed
        .split("\n")
        .slice(0, 20)
        .map((l) => `  ${l}`)
        .join("\n")}`,
      { files: changed.split("\n").map((l) => l.slice(3)) },
    );
  const branch = (await git(deps, ["symbolic-ref", "--short", "-q", "HEAD"])).output.trim();
  if (branch !== "main")
    throw new AgentError(
      "update.not_on_main",
      `${deps.appDir} is on ${branch ? `branch ${branch}` : "a detached HEAD"}; a git install tracks main: \`git -C ${deps.appDir} switch main\`, then update`,
    );
  await must(deps, "fetch", "fetching origin main", ["git", "fetch", "--quiet", "origin", "main"], "update.check_failed", {
    ...deps.env,
    GIT_TERMINAL_PROMPT: "0",
  });
  const current = await gitOut(deps, ["rev-parse", "HEAD"]);
  const available = await gitOut(deps, ["rev-parse", "FETCH_HEAD"]);
  const result: UpdateResult = {
    kind: "git",
    app_dir: deps.appDir,
    check: request.check,
    current,
    available,
    up_to_date: current === available,
    updated: false,
    commits: { count: 0, log: [] },
    daemon: null,
    hooks: [],
  };
  if (result.up_to_date) return result;
  if ((await git(deps, ["merge-base", "--is-ancestor", "HEAD", "FETCH_HEAD"])).code !== 0)
    throw new AgentError(
      "update.diverged",
      `${deps.appDir}'s main has commits that origin/main does not (${current.slice(0, 12)} is not behind ${available.slice(0, 12)}); it cannot be fast-forwarded: rebase or reset it by hand`,
    );
  const count = Number(await gitOut(deps, ["rev-list", "--count", "HEAD..FETCH_HEAD"]));
  const log = (await gitOut(deps, ["log", "--no-decorate", "--format=%h %s", "-n", "20", "HEAD..FETCH_HEAD"])).split("\n").filter(Boolean);
  result.commits = { count, log };
  if (request.check) return result;
  await beforeReplace();
  await must(deps, "fast-forward", `fast-forwarding ${current.slice(0, 12)} → ${available.slice(0, 12)} (${count} commit${count === 1 ? "" : "s"})`, [
    "git",
    "merge",
    "--ff-only",
    "--quiet",
    "FETCH_HEAD",
  ]);
  const install = commandFrom("AGENT_UPDATE_INSTALL_COMMAND", [npmCommand(deps.env), "ci"], deps.env);
  const build = commandFrom("AGENT_UPDATE_BUILD_COMMAND", [npmCommand(deps.env), "run", "build"], deps.env);
  try {
    await must(deps, "install", `installing dependencies (${install.join(" ")})`, install);
    await must(deps, "build", `building (${build.join(" ")})`, build);
  } catch (error) {
    const e = toAgentError(error);
    // The work tree is at the new commit; the running daemon keeps its old code until this is fixed.
    throw new AgentError(
      e.code,
      `${e.message}\n${deps.appDir} is now at ${available.slice(0, 12)} but not built. Fix the cause, then run \`${install.join(" ")} && ${build.join(" ")}\` there and \`agent daemon restart\``,
      e.metadata,
    );
  }
  return { ...result, updated: true };
}

async function updatePackage(request: UpdateRequest, deps: UpdaterDeps, beforeReplace: () => Promise<void>): Promise<UpdateResult> {
  const { name, version } = packageInfo(deps.appDir);
  if (!name || !version) throw new AgentError("update.failed", `${join(deps.appDir, "package.json")} has no name or version: this install cannot be updated`);
  const npm = npmCommand(deps.env);
  const out = await must(deps, "check", `asking the registry for ${name}@latest`, [npm, "view", `${name}@latest`, "version", "--json"], "update.check_failed");
  let latest: unknown;
  try {
    latest = JSON.parse(out.trim());
  } catch {}
  if (Array.isArray(latest)) latest = latest[latest.length - 1];
  if (typeof latest !== "string" || !latest)
    throw new AgentError("update.check_failed", `the registry's answer for ${name}@latest is not a version: ${tail(out, 3)}`);
  const semver = (await import("semver")).default;
  const newer = semver.valid(latest) && semver.valid(version) ? semver.gt(latest, version) : latest !== version;
  const result: UpdateResult = {
    kind: "package",
    app_dir: deps.appDir,
    check: request.check,
    current: version,
    available: latest,
    up_to_date: !newer,
    updated: false,
    commits: null,
    daemon: null,
    hooks: [],
  };
  if (!newer || request.check) return result;
  await beforeReplace();
  await must(deps, "install", `installing ${name}@${latest} (${npm} install -g)`, [npm, "install", "-g", `${name}@${latest}`]);
  return { ...result, updated: true };
}

/** The daemon `update` stopped: its pid (null: none was running), or why it was left alone. */
interface StoppedDaemon {
  pid: number | null;
  note: string | null;
}

/**
 * Stops the home's daemon gracefully, as `agent daemon stop` does (kanban workers are left
 * running and adopted by the next daemon), before the install is replaced. None running: nothing to do.
 */
async function stopDaemonForUpdate(home: string, deps: UpdaterDeps, onStopping: (pid: number) => void): Promise<StoppedDaemon> {
  let client: Awaited<ReturnType<typeof connectDaemon>>;
  try {
    client = await connectDaemon({ home, autostart: false });
  } catch (error) {
    const e = toAgentError(error);
    if (e.code === "daemon.not_running") return { pid: null, note: "no daemon was running; the next command starts one on the new code" };
    if (e.code === "rpc.protocol_mismatch") return { pid: null, note: `${e.message}` };
    throw e;
  }
  const pid = client.daemon.pid;
  deps.step("stop", `stopping the daemon (pid ${pid}) before the install is replaced; running kanban workers are adopted by the next one`);
  const began = performance.now();
  onStopping(pid);
  await stopDaemonAndWait(client, 60_000);
  deps.stepDone("stop", performance.now() - began);
  return { pid, note: null };
}

/** The home's daemon on the new code, when `update` stopped one. Not running before: left so (it starts on next use). */
async function startDaemonAfterUpdate(home: string, deps: UpdaterDeps, stopped: StoppedDaemon): Promise<NonNullable<UpdateResult["daemon"]>> {
  if (stopped.pid === null) return { restarted: false, pid: null, version: null, commit: null, note: stopped.note };
  deps.step("start", "starting the daemon again");
  const began = performance.now();
  const started = await startDaemon({ home, env: deps.env });
  deps.stepDone("start", performance.now() - began);
  // The new daemon's own word on what it runs (its protocol may be newer than this process's).
  try {
    const c = await connectDaemon({ home, autostart: false });
    try {
      const s = await c.call("daemon.status", {});
      return { restarted: true, pid: s.pid, version: s.version, commit: s.commit ?? null, note: null };
    } finally {
      c.close();
    }
  } catch (error) {
    return { restarted: true, pid: started.pid, version: null, commit: null, note: toAgentError(error).message };
  }
}

async function runHooks(home: string, deps: UpdaterDeps): Promise<UpdateHookOutcome[]> {
  const cli = join(deps.appDir, "dist", "cli", "main.js");
  const env = { ...deps.env, AGENT_HOME: home };
  const out: UpdateHookOutcome[] = [];
  for (const hook of POST_UPDATE_HOOKS) {
    const probe = await deps.run(process.execPath, [cli, ...hook.probe], { cwd: deps.appDir, env, label: `agent ${hook.probe.join(" ")}` }).catch(() => null);
    const applies = probe?.code === 0 && hook.applies(probe.output);
    if (!applies) {
      out.push({ name: hook.name, ran: false, detail: probe?.code === 0 ? "not installed" : "not available in this version" });
      continue;
    }
    deps.step(hook.name, `agent ${hook.run.join(" ")}`);
    const began = performance.now();
    const r = await deps.run(process.execPath, [cli, ...hook.run], { cwd: deps.appDir, env, label: `agent ${hook.run.join(" ")}` });
    deps.stepDone(hook.name, performance.now() - began);
    out.push({ name: hook.name, ran: true, detail: r.code === 0 ? "refreshed" : `failed (exit ${r.code}): ${tail(r.output, 3)}` });
  }
  return out;
}

/** The updater as the update process runs it. */
export function defaultDeps(report: Pick<UpdaterDeps, "step" | "stepDone">): UpdaterDeps {
  return { appDir: appRoot(), run: runCommand, env: process.env, ...report };
}

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runCli, tempHome, type CliResult } from "../helpers/cli.js";

/**
 * A temp AGENT_HOME and a temp HOME (aliases go to `$HOME/.local/bin`), with `cli` running the
 * built CLI against both; the daemon starts on demand with that environment.
 */
export function profileHome(extraEnv: NodeJS.ProcessEnv = {}) {
  const { home, cleanup } = tempHome("ap");
  const userHome = mkdtempSync(join(tmpdir(), "apu-"));
  const env: NodeJS.ProcessEnv = { HOME: userHome, AGENT_PROFILE: "", ...extraEnv };
  return {
    home,
    userHome,
    env,
    cli: (args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<CliResult> =>
      runCli(args, { home, env: { ...env, ...opts.env }, input: opts.input }),
    dispose: async () => {
      await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
      cleanup();
      rmSync(userHome, { recursive: true, force: true });
    },
  };
}

/** Write files (relative path → text) under `dir`. */
export function writeTree(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

/** A real git repository holding `files`, committed. */
export function gitRepo(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  writeTree(dir, files);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main", ...args], { cwd: dir, stdio: "pipe" });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "distribution");
}

/** No stack trace in a CLI's error output. */
export const hasStack = (stderr: string) => /\n\s+at .+\(.*:\d+:\d+\)/.test(stderr) || /\n\s+at file:/.test(stderr);

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = join(ROOT, "dist", "cli", "main.js");
export const DAEMON = join(ROOT, "dist", "daemon", "main.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh AGENT_HOME in a short temp path (Unix socket paths are limited to 107 bytes). */
export function tempHome(prefix = "ah"): { home: string; cleanup: () => void } {
  const home = mkdtempSync(join(tmpdir(), `${prefix}-`));
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** Run the built CLI as a user would. */
export function runCli(args: string[], options: { home: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, AGENT_HOME: options.home, NO_COLOR: "1", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`agent ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/** Stop the home's daemon if one runs (test cleanup; never throws). */
export async function stopDaemon(home: string): Promise<void> {
  await runCli(["daemon", "stop"], { home }).catch(() => undefined);
}

/** A started daemon on a fresh home, with cleanup that stops it and removes the home. */
export async function startedHome(env?: NodeJS.ProcessEnv): Promise<{ home: string; pid: number; dispose: () => Promise<void> }> {
  const { home, cleanup } = tempHome();
  const r = await runCli(["daemon", "start", "--json"], { home, env });
  if (r.code !== 0) throw new Error(`daemon start failed: ${r.stderr}`);
  const { pid } = JSON.parse(r.stdout) as { pid: number };
  return {
    home,
    pid,
    dispose: async () => {
      await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
      cleanup();
    },
  };
}

import { spawnSync } from "node:child_process";
import { test } from "uvu";

/**
 * The one way a test says it did not run. uvu counts a test that returns early as passed, so a
 * skip is a marker line on stdout that scripts/run-tests.mjs counts: each marker moves one test
 * from "passed" to "skipped", and its reason is listed at the end of the run.
 *
 * Keep the marker in step with the pattern in scripts/run-tests.mjs.
 */
export const SKIP_MARKER = "[test skipped]";

/**
 * Report the running test as skipped, with why; the test then returns without asserting. For
 * a reason found only while the test runs (a mount refused here, say). Call it once per test.
 */
export function skip(reason: string): void {
  // A line of its own: uvu writes its progress dots without line breaks.
  process.stdout.write(`\n${SKIP_MARKER} ${reason.replace(/\s+/g, " ").trim()}\n`);
}

type Body = () => void | Promise<void>;

/**
 * `test`, or, when `reason` is a string, a test of the same name that reports itself skipped with
 * that reason: `const withTmux = testUnless(missingCommand("tmux", ["-V"]));`.
 */
export function testUnless(reason: string | null): (name: string, body: Body) => void {
  if (reason === null) return (name, body) => test(name, body);
  return (name) => test(name, () => skip(`${name}: ${reason}`));
}

/** Null when `command args` runs and exits 0 here; otherwise why not ("tmux is not installed"). */
export function missingCommand(command: string, args: string[] = ["--version"]): string | null {
  const r = spawnSync(command, args, { stdio: "ignore" });
  if (r.error) return (r.error as NodeJS.ErrnoException).code === "ENOENT" ? `${command} is not installed` : `${command} cannot run (${r.error.message})`;
  return r.status === 0 ? null : `${command} ${args.join(" ")} exits ${r.status ?? r.signal}`;
}

/** Null when this process runs as root; otherwise the reason naming what needs it. */
export function needsRoot(what: string): string | null {
  return process.getuid?.() === 0 ? null : `${what} needs root`;
}

import { exitCodeFor } from "./error-codes.js";
import { toAgentError } from "./errors.js";
import { envValue } from "./config/env.js";

/**
 * How a command that failed says so (the CLI, a kanban worker): one line on stderr, or
 * `{"error": …}` with --json; the stack too for an unexpected error or with --debug /
 * AGENT_DEBUG=1. Returns the exit code for the error.
 */
export function reportFailure(error: unknown, argv: string[]): number {
  const e = toAgentError(error);
  const debug = argv.includes("--debug") || envValue("AGENT_DEBUG") === "1";
  if (argv.includes("--json")) process.stderr.write(`${JSON.stringify({ error: e.toJSON() })}\n`);
  else process.stderr.write(`agent: ${e.expected ? e.message : `unexpected error: ${e.message}`}\n`);
  const stack = (error as Error)?.stack;
  if (stack && (debug || !e.expected)) process.stderr.write(`${stack}\n`);
  return exitCodeFor(e);
}

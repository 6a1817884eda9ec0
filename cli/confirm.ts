import { createInterface } from "node:readline/promises";
import type { ErrorCode } from "../shared/error-codes.js";
import { AgentError } from "../shared/errors.js";

/**
 * Ask before a destructive change; `-y` skips the question. Without a terminal to ask on, the
 * change is refused (`code`, exit 1) rather than made silently; a "no" changes nothing.
 */
export async function confirmChange(question: string, yes: boolean, code: ErrorCode): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY) throw new AgentError(code, `${question} Nothing was changed: confirm with -y when not running in a terminal`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const ok = /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
    if (!ok) process.stderr.write("cancelled; nothing was changed\n");
    return ok;
  } finally {
    rl.close();
  }
}

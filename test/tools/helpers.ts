import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ToolContext } from "../../daemon/tools/types.js";

/** A temp directory with the given files (path → content), removed by cleanup(). */
export function tempTree(files: Record<string, string | Buffer> = {}): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "tools-"));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function ctxFor(cwd: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return { cwd, sessionId: "test", signal: new AbortController().signal, env: { ...process.env }, ...overrides };
}

/** The output of a result as a plain record (tests read its fields). */
export function out(result: { output: unknown }): Record<string, any> {
  return result.output as Record<string, any>;
}

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFIG_DEFAULTS, type AgentConfig } from "../../shared/config/defaults.js";
import type { Logger } from "../../daemon/log/logger.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The exact-pinned dev dependencies, used through `lsp.servers.<id>.command`. */
export const TSLS = [join(ROOT, "node_modules", ".bin", "typescript-language-server"), "--stdio"];
export const PYRIGHT = [join(ROOT, "node_modules", ".bin", "pyright-langserver"), "--stdio"];
export const FAKE_LSP = join(ROOT, "test", "fixtures", "fake-lsp-server.mjs");

/** A fresh git worktree (a real `git init`) in a temp directory. */
export function tempRepo(prefix = "lsp"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  execFileSync("git", ["init", "-q", dir]);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function tempDir(prefix = "nolsp"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function lspSettings(overrides: Partial<AgentConfig["lsp"]> = {}): AgentConfig["lsp"] {
  return { ...structuredClone(CONFIG_DEFAULTS.lsp), install_strategy: "off", ...overrides } as AgentConfig["lsp"];
}

/** A logger that keeps its records, for assertions. */
export function memoryLogger(): Logger & { records: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> } {
  const records: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const logger = {
    records,
    debug: (msg: string, fields?: Record<string, unknown>) => void records.push({ level: "debug", msg, fields }),
    info: (msg: string, fields?: Record<string, unknown>) => void records.push({ level: "info", msg, fields }),
    warn: (msg: string, fields?: Record<string, unknown>) => void records.push({ level: "warn", msg, fields }),
    error: (msg: string, fields?: Record<string, unknown>) => void records.push({ level: "error", msg, fields }),
    component: () => logger,
  };
  return logger;
}

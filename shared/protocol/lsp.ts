import { z } from "zod";
import { rpc } from "./define.js";

/** What a write hands back to the LSP tier: the step to run once the write is done. */
export interface LspPendingDiagnostics {
  /** The `lsp_diagnostics` block for the written file, or undefined when there is none. */
  after(lintClean: boolean): Promise<string | undefined>;
  /** The write failed: release what was held for it. */
  cancel(): void;
  /**
   * After `after`: why this write got no language-server diagnostics when the reason is worth
   * telling the model (the server is being installed, still starting, broken), else undefined.
   */
  note?(): string | undefined;
}

export interface LspStatus {
  enabled: boolean;
  install_strategy: string;
  wait_mode: string;
  wait_timeout: number;
  /** Running servers, one per (server, git worktree). */
  servers: Array<{ id: string; root: string; state: string; pid: number | null; command: string[]; source: string; open_documents: number; idle_ms: number }>;
  /** (server, worktree) pairs skipped until `agent lsp restart`. */
  broken: Array<{ id: string; root: string; reason: string; since: string }>;
  /** Package sets being installed now. */
  installing: string[];
}

export interface LspServerInfo {
  id: string;
  name: string;
  extensions: string[];
  packages: string[];
  /** Whether the command resolves without a project (config, $AGENT_HOME/lsp or PATH). */
  installed: boolean;
  command: string[] | null;
  source: string | null;
  disabled: boolean;
}

export interface LspWhich {
  path: string;
  server: string | null;
  language_id: string | null;
  matched_by: string | null;
  workspace: string | null;
  command: string[] | null;
  source: string | null;
  /** lsp: the language-server tier runs after a write; syntax: only the syntax check. */
  tier: "lsp" | "syntax";
  reason: string;
}

export interface LspInstallResult {
  ids: string[];
  packages: string[];
  dir: string;
  ms: number;
}

export interface LspRestartResult {
  stopped: Array<{ id: string; root: string }>;
  cleared: Array<{ id: string; root: string }>;
}

const serverId = z.string().regex(/^[a-z0-9_-]{1,64}$/, "must be a server id (see agent lsp list)");

export const lspMethods = {
  "lsp.status": rpc<LspStatus>()(() => z.object({}).strict()),
  "lsp.list": rpc<{ servers: LspServerInfo[] }>()(() => z.object({}).strict()),
  /** Installs into $AGENT_HOME/lsp with npm; answers when npm is done. */
  "lsp.install": rpc<LspInstallResult>()(() => z.object({ id: serverId }).strict()),
  "lsp.install_all": rpc<LspInstallResult>()(() => z.object({}).strict()),
  /** Stops the servers (all, or one id's) and clears their broken marks. */
  "lsp.restart": rpc<LspRestartResult>()(() => z.object({ id: serverId.optional() }).strict()),
  /** `path` must be absolute (the CLI resolves it against its own working directory). */
  "lsp.which": rpc<LspWhich>()(() =>
    z
      .object({
        path: z
          .string()
          .min(1)
          .max(4096)
          .refine((p) => p.startsWith("/"), "must be an absolute path"),
      })
      .strict(),
  ),
};

import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { ServerSpec } from "./servers.js";

export interface ResolvedCommand {
  command: string[];
  /** Where it was found: config, lsp-home, workspace, path. */
  source: "config" | "lsp-home" | "workspace" | "path";
  detail: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where a server's executable comes from, first match wins (the README states this order):
 *   1. `lsp.servers.<id>.command` from the config, as given;
 *   2. `$AGENT_HOME/lsp/node_modules/.bin/<bin>`, where `agent lsp install` puts it;
 *   3. `<workspace>/node_modules/.bin/<bin>`, the project's own copy;
 *   4. `<bin>` on the daemon's PATH.
 */
export function resolveCommand(
  spec: ServerSpec,
  opts: { override?: string[]; lspHome: string; workspace: string | null; path: string | undefined },
): ResolvedCommand | null {
  if (opts.override && opts.override.length > 0) return { command: opts.override, source: "config", detail: `lsp.servers.${spec.id}.command` };
  const home = join(opts.lspHome, "node_modules", ".bin", spec.bin);
  if (executable(home)) return { command: [home, ...spec.args], source: "lsp-home", detail: home };
  if (opts.workspace) {
    const local = join(opts.workspace, "node_modules", ".bin", spec.bin);
    if (executable(local)) return { command: [local, ...spec.args], source: "workspace", detail: local };
  }
  for (const dir of (opts.path ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, spec.bin);
    if (executable(candidate)) return { command: [candidate, ...spec.args], source: "path", detail: candidate };
  }
  return null;
}

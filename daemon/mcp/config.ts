import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { McpServerEntry } from "../../shared/config/defaults.js";
import { mcpEntryProblems } from "../../shared/config/mcp-schema.js";
import { AgentError } from "../../shared/errors.js";

/** One server as the client manager uses it: merged, checked, `${VAR}` expanded. */
export interface McpServerSpec {
  name: string;
  /** Where it was defined: config.yaml, mcp.json, or both. */
  source: "config.yaml" | "mcp.json" | "mcp.json+config.yaml";
  transport: "stdio" | "http";
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  headers: Record<string, string>;
  /** Per tool call, ms. */
  timeoutMs: number;
  /** To initialize, ms. */
  connectTimeoutMs: number;
  enabled: boolean;
  parallel: boolean;
  include: string[] | null;
  exclude: string[];
}

export const MCP_DEFAULTS = Object.freeze({ timeoutS: 120, connectTimeoutS: 30 });

/**
 * The profile's `mcp.json` (the `{"mcpServers": {...}}` shape other MCP clients use), checked
 * like config.yaml: a broken file is an error naming the file, a bad entry names server and key.
 */
export async function readMcpJson(profileDir: string): Promise<Record<string, McpServerEntry>> {
  const file = join(profileDir, "mcp.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new AgentError("config.invalid_value", `${file}: cannot be read: ${(error as Error).message}`, { file });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new AgentError("config.invalid_value", `${file}: not valid JSON: ${(error as Error).message}`, { file });
  }
  const servers = (data as { mcpServers?: unknown })?.mcpServers;
  if (!data || typeof data !== "object" || Array.isArray(data) || servers === undefined)
    throw new AgentError("config.invalid_value", `${file}: must be an object with an "mcpServers" mapping`, { file });
  if (!servers || typeof servers !== "object" || Array.isArray(servers))
    throw new AgentError("config.invalid_value", `${file}: mcpServers must be a mapping of server names to entries`, { file });
  const out: Record<string, McpServerEntry> = {};
  const problems: AgentError[] = [];
  for (const [name, entry] of Object.entries(servers)) {
    // Other clients write `type` ("stdio", "http", "sse"); the transport follows from command or url here.
    const { type: _type, ...rest } = (entry && typeof entry === "object" ? entry : {}) as Record<string, unknown>;
    const found = mcpEntryProblems(name, entry && typeof entry === "object" ? rest : entry, file);
    if (found.length) problems.push(...found);
    else out[name] = rest as McpServerEntry;
  }
  throwAll(problems, file);
  return out;
}

function throwAll(problems: AgentError[], file: string): void {
  if (problems.length === 1) throw problems[0];
  if (problems.length > 1)
    throw new AgentError("config.invalid_value", `${file}: ${problems.length} invalid values:\n${problems.map((p) => `  ${p.message}`).join("\n")}`, {
      key: String(problems[0]!.metadata?.key),
      file,
    });
}

/** `${VAR}` from the profile's environment (its `.env` over the daemon's); a missing one is an error naming server and key. */
function expand(value: string, env: NodeJS.ProcessEnv, server: string, key: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    const v = env[name];
    if (v === undefined)
      throw new AgentError("mcp.invalid_config", `mcp_servers.${server}.${key}: \${${name}} is not set (put it in the profile's .env or the environment)`, {
        server,
        key,
      });
    return v;
  });
}

function expandMap(map: Record<string, string> | undefined, env: NodeJS.ProcessEnv, server: string, field: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map ?? {})) out[k] = expand(v, env, server, `${field}.${k}`);
  return out;
}

/**
 * The servers of a profile: its mcp.json's, with config.yaml's `mcp_servers` (home and profile
 * layers, already merged) over them field by field. An entry that ends up with neither command
 * nor url (only `approve` or `enabled`, for a server defined nowhere) is an error naming it.
 */
export function mergeServers(
  fromConfig: Record<string, McpServerEntry>,
  fromJson: Record<string, McpServerEntry>,
  env: NodeJS.ProcessEnv,
): { servers: McpServerSpec[]; errors: Array<{ name: string; error: AgentError }> } {
  const names = [...new Set([...Object.keys(fromJson), ...Object.keys(fromConfig)])].sort();
  const servers: McpServerSpec[] = [];
  const errors: Array<{ name: string; error: AgentError }> = [];
  for (const name of names) {
    const j = fromJson[name];
    const c = fromConfig[name];
    const e: McpServerEntry = { ...(j ?? {}), ...(c ?? {}) };
    // config.yaml's own transport replaces mcp.json's (a url entry does not inherit a command).
    if (c?.command !== undefined) delete e.url;
    if (c?.url !== undefined) delete e.command;
    const source = j && c ? "mcp.json+config.yaml" : j ? "mcp.json" : "config.yaml";
    try {
      if (e.command === undefined && e.url === undefined)
        throw new AgentError("mcp.invalid_config", `mcp_servers.${name} needs command (a stdio server) or url (an HTTP server)`, { server: name });
      servers.push({
        name,
        source,
        transport: e.url !== undefined ? "http" : "stdio",
        command: e.command,
        args: e.args ?? [],
        env: expandMap(e.env, env, name, "env"),
        cwd: e.cwd,
        url: e.url,
        headers: expandMap(e.headers, env, name, "headers"),
        timeoutMs: Math.round((e.timeout ?? MCP_DEFAULTS.timeoutS) * 1000),
        connectTimeoutMs: Math.round((e.connect_timeout ?? MCP_DEFAULTS.connectTimeoutS) * 1000),
        enabled: e.enabled ?? true,
        parallel: e.supports_parallel_tool_calls ?? false,
        include: e.include_tools ?? null,
        exclude: e.exclude_tools ?? [],
      });
    } catch (error) {
      errors.push({ name, error: error instanceof AgentError ? error : new AgentError("mcp.invalid_config", String(error), { server: name }) });
    }
  }
  return { servers, errors };
}

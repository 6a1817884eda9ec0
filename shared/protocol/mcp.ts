import { z } from "zod";
import { MCP_SERVER_FIELDS, MCP_SERVER_NAME } from "../config/mcp-schema.js";
import { rpc } from "./define.js";

/**
 * The MCP group (docs/mcp.md): the servers of the connection's profile (`-p`), their state and
 * tools, and the config.yaml entries that define them.
 */

export interface McpServerInfo {
  name: string;
  transport: "stdio" | "http";
  source: "config.yaml" | "mcp.json" | "mcp.json+config.yaml";
  state: "idle" | "connecting" | "ready" | "failed" | "disabled";
  tools: number;
  last_error: string | null;
  pid: number | null;
  stderr_tail: string | null;
  /** Tools skipped (an invalid inputSchema), each with why. */
  warnings: string[];
}

export interface McpToolInfo {
  /** The server's name for it. */
  name: string;
  /** What the model calls it: `mcp_<server>_<tool>`. */
  model_name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface McpTestResult {
  server: string;
  ok: boolean;
  error: string | null;
  stderr_tail: string | null;
  tools: string[];
  warnings: string[];
  timings: { connect_ms?: number; list_ms?: number; total_ms: number };
}

const server = z.string().regex(MCP_SERVER_NAME, "a server name is letters, digits, _ and -, at most 64");
const entry = z
  .object(
    Object.fromEntries(Object.keys(MCP_SERVER_FIELDS).map((k) => [k, z.unknown().optional()])) as Record<
      keyof typeof MCP_SERVER_FIELDS,
      z.ZodOptional<z.ZodUnknown>
    >,
  )
  .strict();

export const mcpMethods = {
  /** The servers of the connection's profile, or of `profile` (the TUI's profile view). */
  "mcp.list": rpc<{ profile: string; servers: McpServerInfo[] }>()(() => z.object({ profile: z.string().min(1).max(64).optional() }).strict()),
  "mcp.tools": rpc<{ profile: string; server: McpServerInfo; tools: McpToolInfo[] }>()(() => z.object({ server }).strict()),
  "mcp.test": rpc<McpTestResult & { profile: string }>()(() => z.object({ server }).strict()),
  "mcp.restart": rpc<{ profile: string; server: McpServerInfo }>()(() => z.object({ server }).strict()),
  /** Add (or replace, with `replace`) `mcp_servers.<name>` in the profile's config.yaml, comments kept. */
  "mcp.add": rpc<{ profile: string; file: string; server: string; replaced: boolean }>()(() =>
    z.object({ server, entry, replace: z.boolean().optional() }).strict(),
  ),
  /**
   * Set `mcp_servers.<name>.enabled` in the profile's config.yaml (it wins over mcp.json): how a
   * distribution's servers, installed off, are turned on.
   */
  "mcp.enable": rpc<{ profile: string; file: string; server: string; enabled: boolean }>()(() => z.object({ server, enabled: z.boolean() }).strict()),
  /** Remove `mcp_servers.<name>` from the profile's config.yaml, comments kept. */
  "mcp.remove": rpc<{ profile: string; file: string; server: string }>()(() => z.object({ server }).strict()),
};

import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolDefinition } from "../tools/definition.js";
import type { McpServerEntry } from "../../shared/config/defaults.js";

/** Who answers a server's elicitation request during a call (declines when absent). */
export type Elicit = (request: { server: string; message: string; schema: unknown }, signal: AbortSignal) => Promise<ElicitResult>;

/** One MCP tool offered to a turn: what the registry runs, and its server (for parallel dispatch). */
export interface McpTurnTool {
  definition: ToolDefinition<Record<string, unknown>>;
  server: string;
  parallel: boolean;
}

/**
 * What the MCP feature offers other features through the service registry
 * (`services.get("mcp")`): the MCP tools a turn of a profile is offered, with notices for the
 * servers left out. McpManager (daemon/mcp/manager.ts) implements it. Declared here, importing
 * nothing of the feature's own, so daemon/context.ts reaches no implementation through it.
 */
export interface McpApi {
  turnTools(profile: string, taken: Iterable<string>, elicit?: Elicit): Promise<{ tools: McpTurnTool[]; notices: string[] }>;
  /**
   * The profile's server entries as written (mcp.json under config.yaml, field by field, `${VAR}`
   * not expanded): what the coder runtime copies into its own server's config.
   */
  serverEntries(profile: string): Promise<Record<string, McpServerEntry>>;
}

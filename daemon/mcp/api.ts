import type { Elicit } from "./connection.js";
import type { McpTurnTool } from "./manager.js";

export type { Elicit, McpTurnTool };

/**
 * What the MCP feature offers other features through the service registry
 * (`services.get("mcp")`): the MCP tools a turn of a profile is offered, with notices for the
 * servers left out. McpManager (daemon/mcp/manager.ts) implements it.
 */
export interface McpApi {
  turnTools(profile: string, taken: Iterable<string>, elicit?: Elicit): Promise<{ tools: McpTurnTool[]; notices: string[] }>;
}

import { AgentError } from "../../shared/errors.js";
import type { CliEnv } from "../command.js";

/** `agent mcp serve`: not built yet (docs/mcp.md says so). */
export async function serveMcp(_env: CliEnv): Promise<number> {
  throw new AgentError("usage.invalid", "agent mcp serve is not available in this build yet");
}

import { AgentError } from "../../shared/errors.js";
import type { CliEnv } from "../command.js";

// Replaced by the logs command (foundation issue, step 7).
export async function run(_argv: string[], _env: CliEnv): Promise<number> {
  throw new AgentError("usage.not_available", "agent logs is not available yet");
}

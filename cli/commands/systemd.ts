import { AgentError } from "../../shared/errors.js";
import type { CliEnv } from "../command.js";

// Replaced by the systemd unit writer (foundation issue, step 4).
export async function installUnit(_env: CliEnv, _o: { print: boolean; json: boolean }): Promise<number> {
  throw new AgentError("usage.not_available", "agent daemon install is not available yet");
}
export async function uninstallUnit(_env: CliEnv, _o: { json: boolean }): Promise<number> {
  throw new AgentError("usage.not_available", "agent daemon uninstall is not available yet");
}

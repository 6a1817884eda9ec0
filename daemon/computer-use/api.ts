import type { AgentConfig } from "../../shared/config/defaults.js";
import type { DesktopDriver } from "./desktop-driver.js";

/**
 * What the computer-use feature offers other features (`services.get("computerUse")`): the
 * agent's `computer_use` tool asks it for a profile's settings and the desktop to drive. The
 * desktops (the private Xvfb, the helper processes) belong to the feature and stop with it.
 */
export interface ComputerUseApi {
  config(profile: string | undefined): AgentConfig["computer_use"];
  /** The desktop of the profile's `computer_use.display` (the daemon's private Xvfb when empty). */
  driver(profile: string | undefined): DesktopDriver;
  /** One line in the daemon log (component computer-use) for an action of a session. */
  logAction(sessionId: string, line: string): void;
}

/** The tool (the agent feature registers it; it reaches this feature through the service at each call). */
export { computerUseTool } from "./computer-use-tool.js";

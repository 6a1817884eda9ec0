import { z } from "zod";
import { rpc } from "./define.js";

/** `agent computer-use status` (docs/computer-use.md). */
export interface ComputerUseStatus {
  profile: string;
  enabled: boolean;
  /** The configured display, or "private" (an Xvfb the daemon starts on first use). */
  display: string;
  /**
   * The private Xvfb's display, session bus and Xauthority file (the cookie a client needs to
   * connect; null for a configured display) once running; null before first use or for a configured display.
   */
  running: { display: string; bus: string | null; xauthority: string | null; private: boolean; pids: number[] } | null;
  /** The driver version this agent ships, the one recorded by `install`, and a pin (AGENT_CUA_DRIVER_VERSION). */
  driver: { version: string; installed: string | null; pinned: string | null; packages: Record<string, string | null> };
  /** Whether the accessibility bus answers on the display (null: not checked, the display is not running). */
  accessibility: { reachable: boolean | null; why?: string; apps?: number };
  /** Commands, packages or files that are missing; empty when the driver is complete. */
  missing: string[];
}

export interface ComputerUseInstallResult {
  /** ran: apt-get ran as root; command: not root, run this yourself; pinned: refused by AGENT_CUA_DRIVER_VERSION. */
  outcome: "ran" | "command";
  command: string;
  version: string;
  packages: Record<string, string | null>;
  /** The last lines apt printed. */
  output?: string;
}

export const computerUseMethods = {
  /** Checks the display and the accessibility bus (`check`: start the private display to do so). */
  "computer-use.status": rpc<ComputerUseStatus>()(() => z.object({ profile: z.string().optional(), check: z.boolean().optional() }).strict()),
  "computer-use.install": rpc<ComputerUseInstallResult>()(() => z.object({ upgrade: z.boolean().optional() }).strict()),
};

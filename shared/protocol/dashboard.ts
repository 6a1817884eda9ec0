import { z } from "zod";
import { rpc } from "./define.js";

/** The web dashboard (docs/dashboard.md). */

export interface DashboardOpen {
  /** Where the dashboard is served (no sign-in code). */
  url: string;
  /** `url` with a one-time sign-in code: valid for one use or until `expires_at`. */
  sign_in_url: string;
  /** ISO time the code stops working (5 minutes after it was minted). */
  expires_at: string;
  /** True when signing in also asks for the gateway token (a non-loopback bind). */
  token_required: boolean;
  /**
   * A local page (mode 0600, removed when the code expires) that takes the browser to
   * `sign_in_url`: what `agent dashboard` opens, so the code is never on a command line
   * (xdg-open's or the browser's argv, readable by other users in /proc).
   */
  open_file: string;
}

export const dashboardMethods = {
  /** Serve the dashboard (on the gateway's server, or on `port` of its own) and mint a one-time sign-in code. */
  "dashboard.open": rpc<DashboardOpen>()(() => z.object({ port: z.number().int().min(0).max(65535).optional() }).strict()),
};

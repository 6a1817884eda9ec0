import { z } from "zod";
import { rpc } from "./define.js";

/**
 * The API server group (docs/api-server.md): the daemon's OpenAI-compatible endpoint, started
 * by `api_server.enabled` in config or by hand, and stopped by hand.
 */

export interface ApiServerStatus {
  running: boolean;
  /** `http://host:port/v1` while running, else null. */
  url: string | null;
  host: string | null;
  port: number | null;
  /** Whether callers must send API_SERVER_KEY as a bearer. */
  key_required: boolean;
  /** What started it: the config (`api_server.enabled`) or `agent api-server start`. */
  started_by: "config" | "cli" | null;
  /** The model ids it advertises, each with the profile it runs. */
  models: Array<{ id: string; profile: string }>;
  /** Turns running through it now. */
  active_requests: number;
  /** Why it is not running when it should be (a refused bind), else null. */
  error: string | null;
}

export const apiServerMethods = {
  /** Start it (on the config's host and port unless given); a running server on the same address is left as is. */
  "api_server.start": rpc<ApiServerStatus>()(() =>
    z
      .object({
        host: z.string().min(1).max(255).optional(),
        port: z.number().int().min(0).max(65535).optional(),
      })
      .strict(),
  ),
  /** Stop it; turns running through it are interrupted. */
  "api_server.stop": rpc<ApiServerStatus & { stopped: boolean }>()(() => z.object({}).strict()),
  "api_server.status": rpc<ApiServerStatus>()(() => z.object({}).strict()),
};

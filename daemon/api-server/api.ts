import type { ApiServerStatus } from "../../shared/protocol/api-server.js";

/**
 * The OpenAI-compatible API server (docs/api-server.md), as other features see it through the
 * registry (`services.get("apiServer")`). ApiServerService (api-server-service.ts) implements it.
 */
export interface ApiServerApi {
  /** Start listening (the config's host and port unless given); a running server on the same address is left as is. */
  start(options?: { host?: string; port?: number; by?: "config" | "cli" }): Promise<ApiServerStatus>;
  /** Stop listening; turns running through it are interrupted. */
  stop(): Promise<boolean>;
  status(): Promise<ApiServerStatus>;
}

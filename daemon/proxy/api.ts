import type { ProxyStatus } from "../../shared/protocol/proxy.js";

/**
 * What the proxy feature offers through the service registry (`services.get("proxy")`): the
 * local OpenAI-compatible proxy the daemon owns (docs/proxy.md).
 */
export interface ProxyApi {
  /** Start (or restart with new settings) the listener; throws on a refused bind or a busy port. */
  start(options: { provider?: string; host?: string; port?: number }): Promise<ProxyStatus>;
  stop(): Promise<boolean>;
  status(): ProxyStatus;
}

import type { IncomingMessage, ServerResponse } from "node:http";
import type { HeaderMap } from "./access.js";

/**
 * Routes a feature serves on the daemon's HTTP listener under a path prefix (the dashboard
 * plugin APIs, `/api/plugins/<name>/`). The listener runs its access rules (Host, Origin,
 * token: access.ts) before a plugin sees the request, and turns what a plugin throws into its
 * usual error response; `trusted` says whether the caller presented the gateway token.
 */
export interface PluginCall {
  method: string;
  path: string;
  search: string;
  cors: HeaderMap | null;
  trusted: boolean;
}

export type PluginHandler = (req: IncomingMessage, res: ServerResponse, call: PluginCall) => Promise<void>;

export class HttpPlugins {
  private readonly routes = new Map<string, PluginHandler>();

  /** Serve every path under `prefix` (which ends with `/`); returns the unmount. */
  mount(prefix: string, handler: PluginHandler): () => void {
    this.routes.set(prefix, handler);
    return () => {
      if (this.routes.get(prefix) === handler) this.routes.delete(prefix);
    };
  }

  match(path: string): PluginHandler | undefined {
    if (this.routes.size === 0 || !path.startsWith("/api/")) return undefined;
    for (const [prefix, handler] of this.routes) if (path.startsWith(prefix) || path === prefix.slice(0, -1)) return handler;
    return undefined;
  }
}

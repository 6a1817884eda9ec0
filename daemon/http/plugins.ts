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

/**
 * A route that authenticates each request itself (a platform webhook checks its signature, a
 * media link is an unguessable expiring token), served before the listener's access rules: the
 * one, explicit exemption from access.ts's Host, Origin and token rules (see its header). Such a
 * handler gets no CORS grant and is never `trusted`.
 */
export type OpenRouteHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

/** Prefixes an open route may use: a platform's own path, never the gateway's, the API's or the dashboard's. */
const OPEN_PREFIX = /^\/(line|telegram|discord|matrix|teams|msgraph)\/$/;

export class HttpPlugins {
  private readonly routes = new Map<string, PluginHandler>();
  private readonly open = new Map<string, OpenRouteHandler>();

  /**
   * Serve every path under `prefix` (`/line/`, one of the platform prefixes) WITHOUT the
   * listener's access rules: the handler must authenticate every request itself (access.ts,
   * "Exemption"). Returns the unmount.
   */
  mountOpen(prefix: string, handler: OpenRouteHandler): () => void {
    if (!OPEN_PREFIX.test(prefix)) throw new Error(`an open route must be a platform prefix such as /line/, not ${prefix}`);
    this.open.set(prefix, handler);
    return () => {
      if (this.open.get(prefix) === handler) this.open.delete(prefix);
    };
  }

  /** The open route serving `path`, if any (checked before the access rules). */
  matchOpen(path: string): OpenRouteHandler | undefined {
    if (this.open.size === 0) return undefined;
    for (const [prefix, handler] of this.open) if (path.startsWith(prefix)) return handler;
    return undefined;
  }

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

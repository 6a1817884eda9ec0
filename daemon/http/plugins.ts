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
  /** About the listener that took the request: its bind is loopback; `tokenMatches` checks a token given in a form (constant time). */
  listener: { loopback: boolean; tokenRequired: boolean; tokenMatches(token: string): boolean };
}

/**
 * A signed-in browser (the dashboard's session cookie): asked by the listener, only for a
 * same-origin request (no CORS grant), whether the request stands for the token holder.
 */
export type SessionCheck = (req: IncomingMessage) => boolean;

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

/** The session cookies' names start so (`agent_dashboard_<port>`, daemon/dashboard/sign-in-codes.ts). */
export const SESSION_COOKIE_PREFIX = "agent_dashboard_";

/**
 * Removes the session cookies from a request handed to an actor's own code (onRequest,
 * onWebSocket), as the gateway token is removed: a signed-in browser's session is not the actor's.
 */
export function stripSessionCookie(req: IncomingMessage): void {
  const cookie = req.headers.cookie;
  if (!cookie?.includes(SESSION_COOKIE_PREFIX)) return;
  const kept = cookie
    .split(";")
    .filter((part) => !part.trim().startsWith(SESSION_COOKIE_PREFIX))
    .join(";")
    .trim();
  if (kept) req.headers.cookie = kept;
  else delete req.headers.cookie;
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if (raw[i].toLowerCase() !== "cookie") continue;
    if (kept) raw[i + 1] = kept;
    else raw.splice(i, 2);
  }
}

/** Prefixes a page may be mounted on besides `/api/`: the dashboard's app. */
const PAGE_PREFIX = "/dashboard/";

export class HttpPlugins {
  private readonly routes = new Map<string, PluginHandler>();
  private session: SessionCheck | null = null;
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

  /**
   * Let a signed-in browser's session stand for the gateway token (the dashboard). The listener
   * asks only for same-origin requests (access.ts's rules ran first); returns the unset.
   */
  setSessionCheck(check: SessionCheck): () => void {
    this.session = check;
    return () => {
      if (this.session === check) this.session = null;
    };
  }

  /** True when the request carries a live session (see setSessionCheck). */
  sessionTrusted(req: IncomingMessage): boolean {
    return this.session?.(req) === true;
  }

  /**
   * True for a browser's top-level navigation (GET, `Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest:
   * document`, no Origin) to the dashboard's sign-in link `/dashboard/?code=…`, while the
   * dashboard is mounted: the one request a cross-site browser context may make (access.ts,
   * `check`), since `agent dashboard` opens the link from a local file.
   */
  isSignInNavigation(req: IncomingMessage): boolean {
    if (!this.routes.has(PAGE_PREFIX) || req.method !== "GET" || req.headers.origin !== undefined) return false;
    if (req.headers["sec-fetch-mode"] !== "navigate" || req.headers["sec-fetch-dest"] !== "document") return false;
    const url = req.url ?? "";
    const q = url.indexOf("?");
    return q >= 0 && url.slice(0, q) === PAGE_PREFIX && new URLSearchParams(url.slice(q)).has("code");
  }

  /** True for the page prefix (`/dashboard`, `/dashboard/...`): served without the token, each route deciding what it shows. */
  isPage(path: string): boolean {
    return path === PAGE_PREFIX.slice(0, -1) || path.startsWith(PAGE_PREFIX);
  }

  match(path: string): PluginHandler | undefined {
    if (this.routes.size === 0 || !(path.startsWith("/api/") || this.isPage(path))) return undefined;
    for (const [prefix, handler] of this.routes) if (path.startsWith(prefix) || path === prefix.slice(0, -1)) return handler;
    return undefined;
  }
}

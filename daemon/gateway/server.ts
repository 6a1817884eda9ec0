/**
 * The actor HTTP gateway on node:http (RivetKit's routes, docs/actor-gateway.md): the server's
 * lifecycle (listen, reload settings, stop) and the dispatch of each request: the Host, Origin
 * and token rules (daemon/http/access.ts) before anything else, then encoding, path check and
 * router.ts; anything thrown becomes the error response here (http-error.ts).
 *
 * The routes: management-routes.ts (/actors, /metadata, /health), actor-routes.ts (action,
 * queue, health), request-forwarding.ts (onRequest), inspector-routes.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { AgentError } from "../../shared/errors.js";
import type { ActorRuntime } from "../actors/api.js";
import type { Logger } from "../log/logger.js";
import { AccessGuard, answerPreflight, isLoopbackHost, isPreflight, tokensFromRequest } from "../http/access.js";
import type { InspectorAuthSettings } from "./auth.js";
import type { GatewayContext } from "./gateway-request.js";
import { parseEncoding, type Encoding } from "../http/encoding.js";
import { classifyError, encodeErrorBody } from "./http-error.js";
import { checkPath, decodeSegment } from "../http/path.js";
import { closeAfterResponse, writeRaw, type HeaderMap } from "../http/response.js";
import { route } from "./router.js";
import { GatewaySockets, upgradeTarget } from "./websocket.js";
import type { Duplex } from "node:stream";
import { type HttpPlugins, stripSessionCookie } from "../http/plugins.js";
import { ConnectionCap } from "../limits/connection-cap.js";

/** Who may call: see daemon/http/access.ts and the README's "Security" section. */
export interface GatewayAccess {
  /** Origins allowed besides the gateway's own (`gateway.cors_origins`). */
  corsOrigins: readonly string[];
  /** Host names served besides the loopback names (`gateway.allowed_hosts`). */
  allowedHosts: readonly string[];
  /** `gateway.token` / AGENT_GATEWAY_TOKEN; "" = none (the product's own actors are then unreachable over HTTP). */
  token: string;
}

export interface GatewaySettings {
  host: string;
  port: number;
  maxBodyBytes: number;
  inspector: InspectorAuthSettings;
  /** Default: no listed origins or hosts, no token. */
  access?: GatewayAccess;
  /** Open connections (HTTP and WebSocket) at most (docs/limits.md); the oldest idle one goes first. Default 1024. */
  maxConnections?: number;
  /** An HTTP connection with no request in flight for this long is closed (ms). Default 5000. */
  idleTimeoutMs?: number;
}

export interface GatewayOptions {
  settings: GatewaySettings;
  /** Looked up per request so the gateway never holds a stale runtime. */
  runtime: () => ActorRuntime | undefined;
  log: Logger;
  /** Feature routes under `/api/` (daemon/http/plugins.ts), behind the same access rules. */
  plugins?: HttpPlugins;
}

export class GatewayServer {
  private server: Server | null = null;
  private settings: GatewaySettings;
  private readonly sockets = new Set<Socket>();
  /** What the routes see of this server: the runtime and the current settings. */
  private readonly context: GatewayContext;
  private guard: AccessGuard;
  url: string | null = null;
  /** WebSockets on this port (connections and raw sockets). */
  private readonly sockets_: GatewaySockets;
  /** Every connection in the order of its last activity: the cap and the idle sweep (limits/connection-cap.ts). */
  private readonly cap: ConnectionCap<Socket>;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly options: GatewayOptions) {
    this.settings = options.settings;
    this.guard = guardFor(options.settings);
    this.sockets_ = new GatewaySockets(() => this.context.runtime(), options.log);
    this.cap = new ConnectionCap<Socket>(options.settings.maxConnections ?? 1024, (socket, reason) => {
      if (reason === "cap") this.cap.warnReached(this.options.log, "gateway");
      // A connection already closing after a refused body (response.ts, closeAfterResponse) ends by itself within its linger.
      if ((socket as Socket & { gatewayLinger?: boolean }).gatewayLinger) return;
      socket.destroy();
    });
    const server = this;
    this.context = {
      runtime() {
        const runtime = options.runtime();
        if (!runtime) throw new AgentError("internal.runtime_unavailable", "the actor runtime is not running", undefined, { expected: false });
        return runtime;
      },
      runtimeIfRunning: () => options.runtime(),
      get maxBodyBytes() {
        return server.settings.maxBodyBytes;
      },
      get inspectorAuth() {
        return server.settings.inspector;
      },
      log: options.log,
    };
  }

  /** The bind address needs a restart; everything else applies to the next request. */
  updateSettings(settings: Partial<Pick<GatewaySettings, "maxBodyBytes" | "inspector" | "access" | "maxConnections" | "idleTimeoutMs">>): void {
    const next = { ...this.settings, ...settings };
    this.guard = guardFor(next);
    this.settings = next;
    this.cap.max = next.maxConnections ?? 1024;
    this.applyIdleTimeout();
  }

  private get idleMs(): number {
    return this.settings.idleTimeoutMs ?? 5000;
  }

  /** Node's own keep-alive and header timers, and the sweep that closes idle connections (silent ones included). */
  private applyIdleTimeout(): void {
    const server = this.server;
    if (!server) return;
    const idle = this.idleMs;
    server.keepAliveTimeout = idle;
    server.headersTimeout = idle * 2;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = setInterval(() => this.cap.sweep(idle), Math.max(50, Math.min(1000, Math.floor(idle / 4))));
    this.sweeper.unref();
  }

  /** The token in force (for a reload that must keep it). */
  currentToken(): string {
    return this.settings.access?.token ?? "";
  }

  async start(): Promise<string> {
    const server = createServer({ keepAlive: true, noDelay: true, connectionsCheckingInterval: 1000 }, (req, res) => {
      this.handle(req, res);
    });
    server.on("connection", (socket: Socket) => {
      // At the cap with every connection busy: refused at once, before it costs anything more.
      if (!this.cap.admit(socket)) {
        this.cap.warnReached(this.options.log, "gateway");
        const body = JSON.stringify({ group: "gateway", code: "too_many_connections", message: "the gateway has too many open connections; try again" });
        socket.end(
          `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n${body}`,
        );
        setTimeout(() => socket.destroy(), 1000).unref();
        return;
      }
      this.sockets.add(socket);
      socket.once("close", () => {
        this.sockets.delete(socket);
        this.cap.remove(socket);
      });
    });
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
      if (socket.writable && error.code !== "ECONNRESET") {
        const body = JSON.stringify({ group: "request", code: "invalid", message: "malformed HTTP request" });
        socket.end(
          `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      } else {
        socket.destroy();
      }
    });
    const { host, port } = this.settings;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) => {
        server.off("listening", onListening);
        if (error.code === "EADDRINUSE") {
          reject(
            new AgentError(
              "gateway.port_in_use",
              `the actor gateway cannot listen on ${host}:${port}: port ${port} is already in use. Stop what uses it, or choose another port with gateway.port in config.yaml or AGENT_GATEWAY_PORT (0 picks a free port).`,
              { host, port },
            ),
          );
        } else if (error.code === "EACCES") {
          reject(
            new AgentError(
              "gateway.port_denied",
              `the actor gateway may not listen on ${host}:${port} (permission denied); set gateway.port or AGENT_GATEWAY_PORT to a port above 1024`,
              { host, port },
            ),
          );
        } else {
          reject(new AgentError("gateway.listen_failed", `the actor gateway cannot listen on ${host}:${port}: ${error.message}`, { host, port }));
        }
      };
      const onListening = () => {
        server.off("error", onError);
        resolve();
      };
      server.once("error", onError);
      server.once("listening", onListening);
      server.listen(port, host);
    });
    server.on("error", (error) => this.options.log.error("gateway server error", { error }));
    this.server = server;
    this.applyIdleTimeout();
    const address = server.address() as AddressInfo;
    const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
    this.url = `http://${shownHost}:${address.port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    this.sockets_.closeAll();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // In-flight requests get a moment to finish, then their sockets go.
      setTimeout(() => {
        for (const socket of this.sockets) socket.destroy();
      }, 2_000).unref();
    });
  }

  // ---------- dispatch ----------

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    this.cap.begin(socket);
    res.once("close", () => this.cap.end(socket));
    let encoding: Encoding = "json";
    let cors: HeaderMap | null = null;
    try {
      // The one exemption from the access rules (access.ts, "Exemption"): a platform's open
      // route (/line/...) authenticates each request itself (webhook signature, media token).
      const open = this.options.plugins?.matchOpen(pathOf(req.url));
      if (open) {
        checkPath(pathOf(req.url));
        open(req, res, pathOf(req.url)).catch((error) => this.fail(req, res, error, encoding, null));
        return;
      }
      // Host and Origin first: nothing is read or routed for a request that fails them.
      cors = this.guard.check(req, { signInNavigation: this.options.plugins?.isSignInNavigation(req) === true });
      if (isPreflight(req)) {
        answerPreflight(req, res, cors);
        return;
      }
      const method = req.method ?? "GET";
      encoding = parseEncoding(req.headers["x-rivet-encoding"]);
      const url = req.url ?? "/";
      const q = url.indexOf("?");
      const path = q < 0 ? url : url.slice(0, q);
      const search = q < 0 ? "" : url.slice(q);
      checkPath(path);
      const trusted = this.authorize(req, method, path, cors);
      // What the actor's own handlers get never carries the gateway token: by path
      // (`/gateway/<id>/request/...`) or by header routing (`x-rivet-target: actor`, `/request/...`).
      const toActorCode =
        (path.startsWith("/gateway/") && /^\/gateway\/[^/]+\/request(\/|$)/.test(path)) ||
        (req.headers["x-rivet-target"] !== undefined && /^\/request(\/|$)/.test(path));
      if (toActorCode) {
        if (trusted) this.guard.stripToken(req);
        stripSessionCookie(req);
      }
      const plugin = this.options.plugins?.match(path);
      if (plugin) {
        const guard = this.guard;
        const listener = {
          loopback: isLoopbackHost(this.settings.host),
          tokenRequired: guard.tokenRequired,
          tokenMatches: (t: string) => guard.tokenMatches(t),
        };
        plugin(req, res, { method, path, search, cors, trusted, listener }).catch((error) => this.fail(req, res, error, encoding, cors));
        return;
      }
      const pending = route(this.context, { req, res, method, path, search, encoding, cors, trusted });
      if (pending) pending.catch((error) => this.fail(req, res, error, encoding, cors));
    } catch (error) {
      this.fail(req, res, error, encoding, cors);
    }
  }

  /** A WebSocket upgrade: the same Host, Origin and token rules as a request, before anything runs. */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => undefined);
    // A WebSocket is not idle in the HTTP sense: the idle sweep leaves it (the cap still counts it).
    this.cap.pin(req.socket);
    try {
      const cors = this.guard.checkUpgrade(req);
      const url = req.url ?? "/";
      const q = url.indexOf("?");
      const path = q < 0 ? url : url.slice(0, q);
      checkPath(path);
      const trusted = this.authorize(req, "GET", path, cors);
      if (trusted) this.guard.stripToken(req);
      stripSessionCookie(req);
      this.sockets_.upgrade(req, socket, head, upgradeTarget(path, q < 0 ? "" : url.slice(q)), trusted);
    } catch (error) {
      GatewaySockets.refuse(socket, error, this.options.log);
    }
  }

  /**
   * With a token configured every call needs it (401 otherwise), except the service's own
   * `/health` and the dashboard's pages (`/dashboard/...`: its sign-in and its static app, which
   * decide for themselves). Returns whether the caller presented it: only then are the product's
   * own (internal) actors visible. Without a configured token they never are, except to a
   * signed-in dashboard: its session cookie (daemon/dashboard/) stands for the token, but only on
   * a same-origin request (`cors` null: no listed foreign origin may use it).
   */
  private authorize(req: IncomingMessage, method: string, path: string, cors: HeaderMap | null): boolean {
    const guard = this.guard;
    const plugins = this.options.plugins;
    const session = cors === null && plugins !== undefined && plugins.sessionTrusted(req);
    if (!guard.tokenRequired) return session;
    if (session) return true;
    let pathToken: string | undefined;
    if (path.startsWith("/gateway/")) {
      const end = path.indexOf("/", 9);
      const segment = end < 0 ? path.slice(9) : path.slice(9, end);
      const at = segment.indexOf("@");
      if (at >= 0) pathToken = decodeSegment(segment.slice(at + 1));
    }
    if (guard.anyTokenMatches(tokensFromRequest(req, pathToken))) return true;
    if (path === "/health" && (method === "GET" || method === "HEAD") && req.headers["x-rivet-target"] === undefined) return false;
    if (plugins?.isPage(path) && req.headers["x-rivet-target"] === undefined) return false;
    throw guard.unauthorized();
  }

  /** The one place a thrown error becomes the response (or ends a response already begun). */
  private fail(req: IncomingMessage, res: ServerResponse, error: unknown, encoding: Encoding, cors: HeaderMap | null): void {
    const classified = classifyError(error);
    if (classified.internal) {
      this.options.log.error("gateway request failed", { method: req.method, path: (req.url ?? "").split("?")[0].slice(0, 300), error });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Refused before its body was read: close rather than drain whatever the client still sends.
    if (classified.group === "auth" && (req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined)) closeAfterResponse(req);
    const { body, contentType } = encodeErrorBody(classified, encoding);
    writeRaw(res, classified.status, body, contentType, cors);
  }
}

function guardFor(settings: GatewaySettings): AccessGuard {
  const access = settings.access;
  return new AccessGuard({ bindHost: settings.host, corsOrigins: access?.corsOrigins, allowedHosts: access?.allowedHosts, token: access?.token });
}

function pathOf(url: string | undefined): string {
  const u = url ?? "/";
  const q = u.indexOf("?");
  return q < 0 ? u : u.slice(0, q);
}

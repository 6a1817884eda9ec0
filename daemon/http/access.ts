/**
 * Who may talk to an HTTP listener of the daemon: the Host, Origin and token rules shared by
 * every listener it owns (the actor gateway today; the dashboard plugin API, the local proxy and
 * the API server reuse them). The README's "Security" section states the threat model.
 *
 * Usage: build one `AccessGuard` from the listener's settings (again on reload), then per request
 *
 *   const cors = guard.check(req);            // Host + Origin; throws 403 before anything runs
 *   if (isPreflight(req)) return answerPreflight(req, res, cors);
 *   if (guard.tokenRequired && !guard.anyTokenMatches(tokensFromRequest(req))) throw guard.unauthorized();
 *
 * A listener that serves callers by key (the local proxy, the API server) builds its key and
 * guard together with `listenerAccess`, which first refuses a non-loopback bind without a key
 * and `cors_origins: ["*"]` without a key (at start and on every reload).
 *
 * Exemption (the only one): routes a feature mounts with `HttpPlugins.mountOpen` under a
 * platform prefix (`/line/`: the LINE webhook and its media links) are served BEFORE these rules.
 * The platform's servers call them from the internet through a reverse proxy, with their own
 * Host and no token, so the Host/Origin/token rules cannot apply; instead each such request
 * authenticates itself: a webhook by its HMAC signature (401 before anything else runs), a media
 * link by an unguessable, expiring token. Nothing else may be mounted that way (plugins.ts
 * checks the prefix), and such a handler never gets the gateway's trust or a CORS grant.
 *
 * The Graph change-notification listener (daemon/messaging/teams/msgraph-webhook.ts) is the one
 * listener of its own port with other rules (`NotificationListenerAccess`): Microsoft Graph posts
 * from the internet with no Origin, no token and its own Host (a public name, or the reverse
 * proxy's), so the Host rule does not apply and a non-loopback bind is allowed. Instead, a
 * request with an Origin or a browser's `Sec-Fetch-Site` is refused (Graph is no browser), the
 * TCP peer must be inside the allowed source networks (CIDRs, parsed by ipaddr.js; the
 * X-Forwarded-For header is never trusted), and every notification must carry the
 * subscription's client state (constant time). A non-loopback bind without a client state refuses
 * to start: the client state is that listener's key.
 *
 * Errors are `AgentError`s with `auth.forbidden_host` / `auth.forbidden_origin` (HTTP 403) and
 * `auth.unauthorized` (401); `accessStatus(code)` maps them, so a listener with its own error
 * format needs nothing else from here.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import { normalizeHostEntry, normalizeOrigin } from "../../shared/config/web-origins.js";
import { AgentError } from "../../shared/errors.js";

export type HeaderMap = Record<string, string | number | string[]>;

export interface AccessSettings {
  /** The address the listener binds (decides whether the Host rule applies). */
  bindHost: string;
  /** Origins allowed besides the listener's own: exact `scheme://host[:port]`, or `*`. */
  corsOrigins?: readonly string[];
  /** Host names (optionally `name:port`) accepted besides the loopback names. */
  allowedHosts?: readonly string[];
  /** The shared secret; "" = none. */
  token?: string;
  /** Where the listener's settings live, for error messages (default: `gateway`, `AGENT_GATEWAY_TOKEN`). */
  names?: { configSection: string; tokenEnv: string };
}

/** HTTP status of the errors this module throws. */
export function accessStatus(code: string): number | undefined {
  return code === "auth.unauthorized"
    ? 401
    : code === "auth.forbidden_origin" || code === "auth.forbidden_host" || code === "auth.forbidden_source"
      ? 403
      : undefined;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** `127.0.0.0/8`, `::1` (also IPv4-mapped) and `localhost`: only this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(h);
  return false;
}

/**
 * A listener on a non-loopback address must have a token: without one, anything on the
 * network could drive it. `names` says where the token is set, for the error.
 */
export function assertBindAllowed(bindHost: string, token: string, names: ListenerNames): void {
  if (token || isLoopbackHost(bindHost)) return;
  throw new AgentError(
    `${names.listener}.token_required`,
    `${names.hostKey} is ${bindHost}, which is not a loopback address, and no token is set: anything on the network could drive the daemon. ` +
      `Set ${names.config} (or ${names.env} in $AGENT_HOME/.env), or bind ${names.hostKey} to 127.0.0.1.`,
    { host: bindHost },
  );
}

/**
 * `cors_origins: ["*"]` lets every web page read the listener's answers; with no key as well,
 * every page the user opens could drive the agent (run turns, spend the provider's quota). A
 * listener that serves callers by key (the proxy, the API server) refuses that pair: at start
 * (nothing listens) and on reload (the running listener keeps its previous settings).
 */
export function assertOriginsAllowed(corsOrigins: readonly string[], key: string, names: KeyedListenerNames): void {
  if (key || !corsOrigins.some((o) => o.trim() === "*")) return;
  throw new AgentError(
    `${names.listener}.cors_wildcard_needs_key`,
    `${names.listener}.cors_origins lists "*" and no key is set: every web page could drive the agent through it. ` +
      `Set ${names.config} (or ${names.env} in $AGENT_HOME/.env), or list the exact origins (scheme://host:port) in ${names.listener}.cors_origins.`,
    { listener: names.listener },
  );
}

/** Where a listener's key and host are set, for its errors. */
export interface ListenerNames {
  config: string;
  env: string;
  listener: "gateway" | "proxy" | "api_server" | "msgraph_webhook";
  hostKey: string;
}

/** The listeners that serve callers by key (the gateway has its own token rules). */
export type KeyedListenerNames = ListenerNames & { listener: "proxy" | "api_server" };

/**
 * Everything a keyed listener (the proxy, the API server) checks before it serves, built in one
 * step at start and on every reload: the bind rule (`assertBindAllowed`), the wildcard-origin
 * rule (`assertOriginsAllowed`), then its `ListenerKey` and `AccessGuard`. Throws, having built
 * nothing, when a rule refuses the settings; the caller then starts nothing or keeps what runs.
 */
export function listenerAccess(settings: {
  bindHost: string;
  key: string;
  corsOrigins: readonly string[];
  allowedHosts: readonly string[];
  names: KeyedListenerNames;
}): { key: ListenerKey; guard: AccessGuard } {
  const { bindHost, key, corsOrigins, allowedHosts, names } = settings;
  assertBindAllowed(bindHost, key, names);
  assertOriginsAllowed(corsOrigins, key, names);
  return {
    key: new ListenerKey(bindHost, key, names),
    guard: new AccessGuard({ bindHost, corsOrigins, allowedHosts, names: { configSection: names.listener, tokenEnv: names.env } }),
  };
}

/**
 * The key rule of a listener that serves clients with a bearer key (the local proxy, the API
 * server): a non-loopback bind without a key refuses to start (`assertBindAllowed`), and when a
 * key is set every request must carry it as `Authorization: Bearer <key>`, compared in constant
 * time. `required` is false on a loopback bind with no key: then every request passes.
 */
export class ListenerKey {
  readonly required: boolean;
  private readonly keyDigest: Buffer | null;

  constructor(
    bindHost: string,
    key: string,
    readonly names: ListenerNames,
  ) {
    assertBindAllowed(bindHost, key, names);
    this.keyDigest = key ? digest(key) : null;
    this.required = this.keyDigest !== null;
  }

  /** True when no key is set, or the request's bearer value equals it (constant time). */
  allows(req: IncomingMessage): boolean {
    if (this.keyDigest === null) return true;
    const match = /^Bearer\s+(.+)$/i.exec((req.headers.authorization ?? "").trim());
    // A missing bearer is still hashed and compared, so timing tells nothing.
    return timingSafeEqual(digest(match ? match[1].trim() : "\0"), this.keyDigest);
  }

  /** 401 `auth.unauthorized`, naming where the key is set (never the key). */
  unauthorized(): AgentError {
    return new AgentError("auth.unauthorized", `missing or wrong key: send it as Authorization: Bearer <key> (${this.names.config} / ${this.names.env})`);
  }
}

/** `name` without the port, lower-cased (`[::1]:80` → `[::1]`). */
function hostName(host: string): string {
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return end < 0 ? host : host.slice(0, end + 1);
  }
  const colon = host.indexOf(":");
  return colon < 0 ? host : host.slice(0, colon);
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

export class AccessGuard {
  readonly tokenRequired: boolean;
  private readonly loopback: boolean;
  private readonly origins: ReadonlySet<string>;
  private readonly anyOrigin: boolean;
  private readonly hosts: ReadonlySet<string>;
  private readonly tokenDigest: Buffer | null;
  private readonly names: { configSection: string; tokenEnv: string };

  constructor(settings: AccessSettings) {
    this.names = settings.names ?? { configSection: "gateway", tokenEnv: "AGENT_GATEWAY_TOKEN" };
    this.loopback = isLoopbackHost(settings.bindHost);
    const origins = (settings.corsOrigins ?? []).map(normalizeOrigin);
    this.anyOrigin = origins.includes("*");
    this.origins = new Set(origins.filter((o) => o !== "*"));
    this.hosts = new Set((settings.allowedHosts ?? []).map(normalizeHostEntry));
    this.tokenDigest = settings.token ? digest(settings.token) : null;
    this.tokenRequired = this.tokenDigest !== null;
  }

  /**
   * The Host and Origin rules, run first for every request (preflights included). Returns the
   * CORS headers a listed origin gets, or null (no Origin, or the listener's own origin).
   */
  check(req: IncomingMessage, options: { signInNavigation?: boolean } = {}): HeaderMap | null {
    const host = req.headers.host?.toLowerCase();
    if (host !== undefined) this.checkHost(host);
    const origin = req.headers.origin;
    if (origin === undefined) {
      // A browser's cross-site request without Origin (an <img>, a link, a navigation) still
      // says where it comes from: refuse it like a foreign Origin. curl and Node clients send neither.
      // The one exception: the top-level navigation to the dashboard's sign-in link
      // (`signInNavigation`, HttpPlugins.isSignInNavigation), which `agent dashboard` opens from a
      // local file (the code never goes on a command line): it carries no credential but its
      // one-time code, gets no CORS grant, and is answered with a page that reloads same-origin.
      const site = req.headers["sec-fetch-site"];
      if ((site === "cross-site" || site === "same-site") && !options.signInNavigation) throw this.forbiddenOrigin(`a ${site} browser request`);
      return null;
    }
    const lower = origin.toLowerCase();
    if (host !== undefined && (lower === `http://${host}` || lower === `https://${host}`)) return null;
    if (this.origins.has(lower)) {
      return { "access-control-allow-origin": origin, "access-control-allow-credentials": "true", "access-control-expose-headers": "*", vary: "Origin" };
    }
    // `*` grants no credentials: a browser sends no cookies or auth to a wildcard.
    if (this.anyOrigin) return { "access-control-allow-origin": "*", "access-control-expose-headers": "*" };
    throw this.forbiddenOrigin(`origin ${origin.slice(0, 200)}`);
  }

  /**
   * `check` for a WebSocket upgrade. A browser sends its cookies with every WebSocket and no
   * CORS applies to it, so an upgrade is a credentialed request: `*` (which grants no
   * credentials) does not admit it; the origin must be the listener's own or listed exactly.
   */
  checkUpgrade(req: IncomingMessage): HeaderMap | null {
    const cors = this.check(req);
    if (cors?.["access-control-allow-origin"] === "*") {
      throw this.forbiddenOrigin(
        `a WebSocket from origin ${String(req.headers.origin).slice(0, 200)} ("*" grants no credentials, and a WebSocket always carries them)`,
      );
    }
    return cors;
  }

  /**
   * Removes the gateway token from a request that is handed to an actor's own code (onRequest,
   * onWebSocket): `x-rivet-token`, and `Authorization` when it carries the gateway token (an
   * app's own Authorization stays). Headers and raw headers both, in place.
   */
  stripToken(req: IncomingMessage): void {
    const carriesToken = (name: string, value: string) => {
      if (name === "x-rivet-token") return true;
      if (name !== "authorization") return false;
      const match = /^Bearer\s+(.+)$/i.exec(value.trim());
      return match !== null && this.tokenMatches(match[1].trim());
    };
    const raw = req.rawHeaders;
    for (let i = raw.length - 2; i >= 0; i -= 2) if (carriesToken(raw[i].toLowerCase(), raw[i + 1])) raw.splice(i, 2);
    const h = req.headers;
    if (h["x-rivet-token"] !== undefined) delete h["x-rivet-token"];
    if (typeof h.authorization === "string" && carriesToken("authorization", h.authorization)) delete h.authorization;
  }

  private forbiddenOrigin(what: string): AgentError {
    return new AgentError(
      "auth.forbidden_origin",
      `${what} may not call this service; list the origin in ${this.names.configSection}.cors_origins to allow it`,
    );
  }

  /** 401 `auth.unauthorized`, naming where the token is set (never the token). */
  unauthorized(): AgentError {
    return new AgentError(
      "auth.unauthorized",
      `missing or wrong token: send it as Authorization: Bearer <token> or x-rivet-token (${this.names.configSection}.token / ${this.names.tokenEnv})`,
    );
  }

  /**
   * DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 reaches a
   * loopback listener with `Host: evil.example`. On a loopback bind only loopback names (any
   * port) and the listed hosts are served; elsewhere a non-empty list is enforced the same way.
   */
  private checkHost(host: string): void {
    if (!this.loopback && this.hosts.size === 0) return;
    if (this.hosts.has(host)) return;
    const name = hostName(host);
    if (LOOPBACK_NAMES.has(name) || this.hosts.has(name)) return;
    throw new AgentError("auth.forbidden_host", `host ${host.slice(0, 200)} is not allowed; list it in ${this.names.configSection}.allowed_hosts to serve it`);
  }

  /** Constant time: both sides are equal-length SHA-256 digests. False when no token is configured. */
  tokenMatches(given: string | undefined): boolean {
    if (this.tokenDigest === null || given === undefined) return false;
    return timingSafeEqual(digest(given), this.tokenDigest);
  }

  /** True when any of the request's tokens (see `tokensFromRequest`) matches. */
  anyTokenMatches(tokens: ReadonlyArray<string | undefined>): boolean {
    let ok = false;
    // Every distinct candidate is compared (no early exit), so timing does not tell which one
    // matched; the RivetKit client sends the same token twice (path and header), hashed once.
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (i > 0 && tokens.indexOf(t) < i) continue;
      if (this.tokenMatches(t)) ok = true;
    }
    return ok;
  }
}

/** Every place a client may send the token: `Authorization: Bearer`, `x-rivet-token`, or `extra` (the gateway's `<id>@<token>`). */
export function tokensFromRequest(req: IncomingMessage, extra?: string): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (match) out.push(match[1].trim());
  }
  const header = req.headers["x-rivet-token"];
  if (typeof header === "string") out.push(header);
  if (extra !== undefined) out.push(extra);
  return out;
}

const PREFLIGHT_ALLOW_HEADERS = [
  "Content-Type",
  "User-Agent",
  "Authorization",
  "x-rivet-query",
  "x-rivet-encoding",
  "x-rivet-conn-params",
  "x-rivet-actor",
  "x-rivet-target",
  "x-rivet-namespace",
  "x-rivet-token",
].join(", ");
const PREFLIGHT_METHODS = "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS";

export function isPreflight(req: IncomingMessage): boolean {
  return req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
}

/**
 * Answers a preflight that passed `check`: the grant goes only with `cors` (a listed origin);
 * without it (no Origin, or the listener's own) the answer carries no CORS headers.
 */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, cors: HeaderMap | null): void {
  const headers: HeaderMap = { "content-length": "0" };
  if (cors) {
    const requested = req.headers["access-control-request-headers"];
    Object.assign(headers, cors, {
      "access-control-allow-methods": PREFLIGHT_METHODS,
      // A listed origin is trusted with the headers it asks for (an actor's onRequest may read its own).
      "access-control-allow-headers": typeof requested === "string" && requested.length < 4096 ? requested : PREFLIGHT_ALLOW_HEADERS,
      "access-control-max-age": "86400",
    });
  }
  res.writeHead(204, headers);
  res.end();
}

/** One parsed CIDR (ipaddr.js's own types, kept opaque here). */
type ParsedCidr = [unknown, number];

/**
 * Source networks a listener admits: a list of CIDRs (`10.0.0.0/8`, `2603:1000::/25`, or a plain
 * address) parsed and matched by ipaddr.js (no hand-written CIDR math). An IPv4-mapped IPv6 peer
 * (`::ffff:1.2.3.4`, what a dual-stack socket reports) is matched as its IPv4 address. The empty
 * list admits every source. ipaddr.js is loaded by `SourceNetworks.parse`, when a listener that
 * uses it starts (not at daemon start).
 */
export class SourceNetworks {
  private constructor(
    private readonly ipaddr: typeof import("ipaddr.js") | null,
    private readonly ranges: ParsedCidr[],
    /** The list as given (for messages). */
    readonly text: readonly string[],
  ) {}

  /** Parses `list`; a malformed entry throws `config.invalid_value` naming `setting`. */
  static async parse(list: readonly string[], setting: string): Promise<SourceNetworks> {
    if (list.length === 0) return new SourceNetworks(null, [], []);
    const mod = await import("ipaddr.js");
    const ipaddr = ((mod as { default?: typeof import("ipaddr.js") }).default ?? mod) as typeof import("ipaddr.js");
    const ranges: ParsedCidr[] = [];
    for (const entry of list) {
      try {
        ranges.push(entry.includes("/") ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), ipaddr.parse(entry).kind() === "ipv4" ? 32 : 128]);
      } catch {
        throw new AgentError("config.invalid_value", `${setting}: ${JSON.stringify(entry.slice(0, 100))} is not a CIDR (like 52.96.0.0/14) or an address`);
      }
    }
    return new SourceNetworks(ipaddr, ranges, [...list]);
  }

  /** True when the list is empty or `address` (a socket's remoteAddress) is inside one of its networks. */
  allows(address: string | undefined): boolean {
    if (this.ipaddr === null) return true;
    if (!address) return false;
    let ip: ReturnType<typeof import("ipaddr.js").parse>;
    try {
      ip = this.ipaddr.process(address);
    } catch {
      return false;
    }
    for (const [net, bits] of this.ranges) {
      const n = net as typeof ip;
      if (n.kind() === ip.kind() && ip.match(n as never, bits)) return true;
    }
    return false;
  }
}

/**
 * The access rules of the Graph change-notification listener (see the header): bind, browsers,
 * source networks and the client state. Build it with `create` when the listener starts.
 */
export class NotificationListenerAccess {
  private readonly stateDigest: Buffer | null;

  private constructor(
    readonly sources: SourceNetworks,
    clientState: string,
  ) {
    this.stateDigest = clientState ? digest(clientState) : null;
  }

  /**
   * Refuses (`msgraph_webhook.token_required`) a non-loopback `bindHost` without a client state;
   * parses the CIDRs.
   */
  static async create(opts: { bindHost: string; clientState: string; cidrs: readonly string[] }): Promise<NotificationListenerAccess> {
    assertBindAllowed(opts.bindHost, opts.clientState, {
      config: "MSGRAPH_WEBHOOK_CLIENT_STATE",
      env: "MSGRAPH_WEBHOOK_CLIENT_STATE",
      listener: "msgraph_webhook",
      hostKey: "MSGRAPH_WEBHOOK_HOST",
    });
    return new NotificationListenerAccess(await SourceNetworks.parse(opts.cidrs, "MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS"), opts.clientState);
  }

  /**
   * Run first for every request: a browser's request (an Origin, or `Sec-Fetch-Site` of another
   * site) → `auth.forbidden_origin`; a TCP peer outside the source networks → `auth.forbidden_source`.
   * Any Host is served (the client state, not the name, authenticates).
   */
  check(req: IncomingMessage): void {
    const origin = req.headers.origin;
    const site = req.headers["sec-fetch-site"];
    if (origin !== undefined || site === "cross-site" || site === "same-site") {
      throw new AgentError("auth.forbidden_origin", "a browser request may not call the Graph notification listener");
    }
    const peer = req.socket.remoteAddress;
    if (!this.sources.allows(peer)) {
      throw new AgentError("auth.forbidden_source", `source ${String(peer).slice(0, 60)} is outside MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS`);
    }
  }

  /** Constant time (equal-length digests). False when no client state is configured: nothing is accepted then. */
  clientStateMatches(given: unknown): boolean {
    const d = digest(typeof given === "string" ? given : "\0");
    if (this.stateDigest === null) return false;
    return timingSafeEqual(d, this.stateDigest);
  }
}

/**
 * `/gateway/{id}/request/...`: forwards an HTTP request to the actor's `onRequest` as a fetch
 * `Request` and streams its `Response` back.
 *
 * The response comes back as the actor made it, with two exceptions that keep an actor's page
 * away from the dashboard, which is served from the same origin (host:port, daemon/dashboard/):
 * it is sandboxed (`Content-Security-Policy: sandbox ...` without `allow-same-origin`: an opaque
 * origin, so its script sends no dashboard cookie and may not call `/api/rpc/...`, whose Origin
 * rule refuses the `null` origin), and a `Set-Cookie` for a dashboard session cookie is dropped.
 * An actor opts out of the first by sending its own `Content-Security-Policy` with a `sandbox`
 * directive (its flags are then used as given, `allow-same-origin` included: docs/actor-gateway.md).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { requireActor, type GatewayContext } from "./gateway-request.js";
import { readBody } from "../http/request-body.js";
import { invalidRequest } from "../http/request-errors.js";
import { readConnParams } from "./request-values.js";
import type { HeaderMap } from "../http/response.js";
import { SESSION_COOKIE_PREFIX } from "../http/plugins.js";

/** What an actor's page gets unless it sets its own sandbox: scripts, forms and popups run, in an opaque origin. */
export const ACTOR_PAGE_SANDBOX = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads";

/**
 * True when a `Content-Security-Policy` value (one policy or several, comma-joined) has a
 * `sandbox` directive as a browser parses it: only ASCII whitespace separates a directive's name
 * (`sandbox\xa0allow-scripts` is one unknown directive name to a browser, so no sandbox at all).
 */
function hasSandbox(csp: string | undefined): boolean {
  return csp !== undefined && /(^|[;,])[\t\n\f\r ]*sandbox([\t\n\f\r ;,]|$)/i.test(csp);
}

/**
 * True when a `Set-Cookie` would give the browser a cookie it sends as a dashboard session
 * cookie: one so named, or a nameless one (`=agent_dashboard_…=x`, no name before the first `=`),
 * which a browser sends as its bare value: `Cookie: agent_dashboard_…=x`.
 */
function setsSessionCookie(setCookie: string): boolean {
  const pair = setCookie.split(";", 1)[0];
  const eq = pair.indexOf("=");
  const name = eq < 0 ? "" : pair.slice(0, eq).trim();
  const sent = name === "" ? pair.slice(eq + 1).trim() : name;
  return sent.startsWith(SESSION_COOKIE_PREFIX);
}

/** Hop-by-hop headers not forwarded to an actor's `onRequest`. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer", "host", "content-length"]);

export async function forwardRequest(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  actorId: string,
  subpath: string,
  search: string,
  cors: HeaderMap | null,
  trusted: boolean,
): Promise<void> {
  const method = req.method ?? "GET";
  const runtime = ctx.runtime();
  requireActor(runtime, actorId, trusted);
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(name)) continue;
    try {
      headers.append(name, raw[i + 1]);
    } catch {
      // A header value undici refuses is dropped.
    }
  }
  let body: Buffer | undefined;
  if (method !== "GET" && method !== "HEAD") {
    body = await readBody(req, ctx.maxBodyBytes);
  }
  let request: Request;
  try {
    request = new Request(`http://actor/${subpath}${search}`, {
      method,
      headers,
      ...(body !== undefined && body.length > 0 ? { body } : {}),
    });
  } catch (error) {
    throw invalidRequest(`the request cannot be forwarded: ${(error as Error).message}`);
  }
  const connParams = readConnParams(req);
  const response = await runtime.request(actorId, request, connParams === undefined ? { source: "gateway" } : { source: "gateway", connParams });
  await writeActorResponse(ctx, res, response, cors);
}

async function writeActorResponse(ctx: GatewayContext, res: ServerResponse, response: Response, cors: HeaderMap | null): Promise<void> {
  const out: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === "set-cookie") return;
    out[name] = value;
  });
  const csp = typeof out["content-security-policy"] === "string" ? out["content-security-policy"] : undefined;
  if (!hasSandbox(csp)) out["content-security-policy"] = csp ? [csp, ACTOR_PAGE_SANDBOX] : ACTOR_PAGE_SANDBOX;
  // The dashboard's session cookie is the daemon's, never an actor's to set (or to replace with its own).
  const cookies = response.headers.getSetCookie().filter((c) => !setsSessionCookie(c));
  if (cookies.length) out["set-cookie"] = cookies;
  if (cors) for (const [k, v] of Object.entries(cors)) if (!(k in out)) out[k] = String(v);
  delete out["transfer-encoding"];
  delete out.connection;
  const body = response.body;
  if (!body || res.req.method === "HEAD") {
    res.writeHead(response.status, response.statusText || undefined, out);
    res.end();
    await body?.cancel().catch(() => undefined);
    return;
  }
  // Streamed through as it comes (server-sent events and long bodies work); a client that
  // goes away cancels the handler's stream.
  res.writeHead(response.status, response.statusText || undefined, out);
  const reader = body.getReader();
  const onClose = () => void reader.cancel().catch(() => undefined);
  res.once("close", onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value))
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      if (res.destroyed) break;
    }
    res.end();
  } catch (error) {
    ctx.log.warn("actor response stream failed", { error });
    res.destroy();
  } finally {
    res.off("close", onClose);
  }
}

/**
 * The dashboard's HTTP routes on the daemon's listener (the gateway's server), behind its
 * access rules (daemon/http/access.ts: Host and Origin for every request; the gateway token, or
 * a signed-in session, for everything but the pages):
 *
 *   GET  /dashboard/                  the app (index.html); `?code=` signs in: sets the session
 *                                     cookie and redirects to /dashboard/ (the code leaves the
 *                                     address bar); on a non-loopback bind a form asks for the token too
 *   POST /dashboard/sign-in           the form: code (+ token)
 *   POST /dashboard/sign-out          ends the session
 *   GET  /dashboard/assets/<file>     the bundled app (dist/dashboard/)
 *   GET  /api/events                  the live stream (event-stream.ts)
 *   GET  /api/logs?component=&lines=  the last lines of a component's log, and which components have logs
 *   POST /api/rpc/<method>            a method of the RPC table (the list below), params as the JSON body:
 *                                     the same answers the CLI gets over the socket
 */
import { readdirSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AgentError } from "../../shared/errors.js";
import { readLastLines } from "../../shared/log-follow.js";
import type { PluginCall, PluginHandler } from "../http/plugins.js";
import { readBody } from "../http/request-body.js";
import { sendValue } from "../http/response.js";
import { type DashboardSignIn, sessionCookie, setCookieHeader } from "./sign-in-codes.js";
import { type EventStream, parseLine } from "./event-stream.js";

/** Methods the HTTP door serves: what the dashboard's views read and the board actions they take. */
export const HTTP_RPC_METHODS = new Set([
  "daemon.status",
  "sessions.list",
  "sessions.search",
  "sessions.show",
  "sessions.window",
  "cron.list",
  "cron.logs",
  "actors.list",
  "kanban.stats",
  "kanban.boards.list",
  "kanban.runs",
  "kanban.comment",
  "kanban.assign",
  "kanban.block",
  "kanban.unblock",
  "kanban.schedule",
  "kanban.archive",
  "kanban.log",
]);

const MAX_BODY = 1024 * 1024;
const COMPONENT = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const ASSET = /^[a-z0-9][a-z0-9_.-]*\.(js|css|svg|map)$/;
const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  map: "application/json",
  html: "text/html; charset=utf-8",
};

/** The built app: dist/dashboard/ (this file is dist/daemon/dashboard/dashboard-routes.js). */
export const ASSETS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dashboard");

/** Headers of every page and asset: nothing framed, nothing from elsewhere, no Referer (a code URL never leaks). */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

export interface DashboardRouteDeps {
  signIn: DashboardSignIn;
  events: EventStream;
  logsDir: string;
  invoke(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
}

function unauthorized(): AgentError {
  return new AgentError(
    "auth.unauthorized",
    "not signed in: run `agent dashboard` and open the link it prints (or send the gateway token as Authorization: Bearer <token>)",
  );
}

/** `/dashboard/...`: the sign-in and the app. */
export function pageRoutes(deps: DashboardRouteDeps): PluginHandler {
  return async (req, res, call) => {
    const { method, path } = call;
    if (path === "/dashboard") return redirect(res, "/dashboard/");
    const rest = path.slice("/dashboard/".length);
    if (rest === "" && (method === "GET" || method === "HEAD")) {
      const code = new URLSearchParams(call.search).get("code");
      if (code === null) return sendFile(res, "index.html", "no-store");
      if (needsToken(call)) return page(res, 200, tokenForm(code));
      return signIn(req, res, deps, code);
    }
    if (rest === "sign-in" && method === "POST") {
      const form = new URLSearchParams((await readBody(req, 16 * 1024)).toString("utf8"));
      if (needsToken(call) && !call.listener.tokenMatches(form.get("token") ?? "")) {
        return page(res, 401, message("Wrong token", "The gateway token does not match. Run <code>agent dashboard</code> again for a new link."));
      }
      return signIn(req, res, deps, form.get("code") ?? "");
    }
    if (rest === "sign-out" && method === "POST") {
      deps.signIn.revoke(sessionCookie(req));
      res.writeHead(204, { "set-cookie": setCookieHeader(req, null), "cache-control": "no-store" });
      return void res.end();
    }
    if (rest.startsWith("assets/") && (method === "GET" || method === "HEAD")) {
      const name = rest.slice("assets/".length);
      if (ASSET.test(name)) return sendFile(res, name, "no-cache");
    }
    throw new AgentError("route.not_found", `no route ${method} ${path.slice(0, 200)}`);
  };
}

/** A non-loopback bind: the code alone does not sign in; the token must come with it. */
function needsToken(call: PluginCall): boolean {
  return !call.listener.loopback && call.listener.tokenRequired;
}

function signIn(req: IncomingMessage, res: ServerResponse, deps: DashboardRouteDeps, code: string): void {
  const token = code ? deps.signIn.redeem(code) : null;
  if (!token) {
    page(
      res,
      401,
      message("This sign-in link no longer works", "A sign-in code works once, for five minutes. Run <code>agent dashboard</code> again for a new link."),
    );
    return;
  }
  const site = req.headers["sec-fetch-site"];
  if (site === "cross-site" || site === "same-site") {
    // Opened from elsewhere (the local file `agent dashboard` opens): a redirect would keep the
    // navigation cross-site (and refused), so this page reloads the bare URL itself, same-origin.
    const html = message("Signed in", 'Opening the dashboard… <a href="/dashboard/">continue</a>').replace(
      "<title>",
      '<meta http-equiv="refresh" content="0;url=/dashboard/"><title>',
    );
    res.writeHead(200, {
      "content-type": TYPES.html,
      "content-length": Buffer.byteLength(html),
      "set-cookie": setCookieHeader(req, token),
      "cache-control": "no-store",
      ...PAGE_HEADERS,
    });
    res.end(html);
    return;
  }
  // 303 to the bare URL: the code leaves the address bar and the history.
  res.writeHead(303, { location: "/dashboard/", "set-cookie": setCookieHeader(req, token), "cache-control": "no-store", ...PAGE_HEADERS });
  res.end();
}

/** `/api/events`, `/api/logs`, `/api/rpc/<method>`: the signed-in browser's (or the token holder's) API. */
export function apiRoutes(deps: DashboardRouteDeps, prefix: "events" | "logs" | "rpc"): PluginHandler {
  return async (req, res, call) => {
    if (!call.trusted) throw unauthorized();
    const { method, path } = call;
    if (prefix === "events" && path === "/api/events" && method === "GET") return deps.events.attach(req, res, call.cors);
    if (prefix === "logs" && path === "/api/logs" && method === "GET") return sendValue(res, 200, readLogs(deps.logsDir, call.search), "json", call.cors);
    if (prefix === "rpc" && path.startsWith("/api/rpc/") && method === "POST") {
      const name = path.slice("/api/rpc/".length);
      if (!HTTP_RPC_METHODS.has(name))
        throw new AgentError("route.not_found", `${name.slice(0, 100)} is not served over HTTP; these are: ${[...HTTP_RPC_METHODS].join(", ")}`);
      const raw = (await readBody(req, MAX_BODY)).toString("utf8");
      let params: unknown = {};
      try {
        params = raw.trim() ? JSON.parse(raw) : {};
      } catch {
        throw new AgentError("api.bad_request", "the body is not JSON");
      }
      // A follow would hold the request open: the HTTP door reads, the event stream follows.
      if (name === "kanban.log" && params && typeof params === "object") (params as Record<string, unknown>).follow = false;
      const abort = new AbortController();
      res.once("close", () => abort.abort());
      return sendValue(res, 200, await deps.invoke(name, params, abort.signal), "json", call.cors);
    }
    throw new AgentError("route.not_found", `no route ${method} ${path.slice(0, 200)}`);
  };
}

function readLogs(dir: string, search: string): { components: string[]; component: string; records: Array<Record<string, unknown>> } {
  const q = new URLSearchParams(search);
  const component = q.get("component") ?? "daemon";
  if (!COMPONENT.test(component)) throw new AgentError("api.bad_request", `invalid component name ${JSON.stringify(component.slice(0, 100))}`);
  const lines = Math.min(2000, Math.max(0, Number(q.get("lines") ?? 200) || 0));
  let components: string[] = [];
  try {
    components = readdirSync(dir)
      .filter((n) => n.endsWith(".log"))
      .map((n) => n.slice(0, -4))
      .sort();
  } catch {}
  const records = components.includes(component)
    ? readLastLines(join(dir, `${component}.log`), lines)
        .lines.filter((l) => l.trim())
        .map(parseLine)
    : [];
  return { components, component, records };
}

function sendFile(res: ServerResponse, name: string, cache: string): void {
  let body: Buffer;
  try {
    body = readFileSync(join(ASSETS_DIR, name));
  } catch {
    if (name === "index.html") {
      page(res, 503, message("The dashboard is not built", "Run <code>npm run build</code> in the agent's directory, then reload."));
      return;
    }
    throw new AgentError("route.not_found", `no asset ${name}`);
  }
  const ext = name.slice(name.lastIndexOf(".") + 1);
  res.writeHead(200, { "content-type": TYPES[ext] ?? "application/octet-stream", "content-length": body.byteLength, "cache-control": cache, ...PAGE_HEADERS });
  res.end(body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(308, { location, "content-length": 0 });
  res.end();
}

function page(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { "content-type": TYPES.html, "content-length": Buffer.byteLength(html), "cache-control": "no-store", ...PAGE_HEADERS });
  res.end(html);
}

function message(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · agent</title><link rel="stylesheet" href="/dashboard/assets/app.css"></head><body class="notice"><main><h1>${title}</h1><p>${body}</p></main></body></html>`;
}

function tokenForm(code: string): string {
  const safe = code.replace(/[^A-Za-z0-9_-]/g, "");
  return message(
    "Sign in",
    `This daemon listens beyond this machine, so signing in also needs the gateway token.</p>
<form method="post" action="/dashboard/sign-in"><input type="hidden" name="code" value="${safe}">
<label for="token">Gateway token</label> <input id="token" name="token" type="password" autocomplete="off" required autofocus>
<button type="submit">Sign in</button></form><p>`,
  );
}

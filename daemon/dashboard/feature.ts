/**
 * The web dashboard (docs/dashboard.md): the app and its API on the gateway's server (or, with
 * `agent dashboard --port`, on a port of its own with the same routes and access rules), the
 * one-time sign-in codes `dashboard.open` mints, and the live event stream.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../store/atomic-file.js";
import type { MethodName } from "../../shared/protocol/index.js";
import { isLoopbackHost } from "../http/access.js";
import type { DaemonContext, Feature } from "../context.js";
import { apiRoutes, pageRoutes, type DashboardRouteDeps } from "./dashboard-routes.js";
import { EventStream } from "./event-stream.js";
import { DashboardSignIn, sessionCookie } from "./sign-in-codes.js";

export function dashboardFeature(): Feature {
  const undo: Array<() => void> = [];
  let events: EventStream | null = null;
  return {
    name: "dashboard",
    needs: { start: ["httpPlugins", "gatewayListeners", "kanban"] },
    async start(ctx: DaemonContext) {
      const signIn = new DashboardSignIn(join(ctx.paths.data, "dashboard", "sessions.json"));
      const openDir = join(ctx.paths.data, "dashboard", "open");
      // Pages of codes minted by an earlier daemon: their codes died with it.
      rmSync(openDir, { recursive: true, force: true });
      undo.push(() => rmSync(openDir, { recursive: true, force: true }));
      const stream = new EventStream({
        onKanban: (listener) => ctx.services.get("kanban").onEvent(listener),
        onBroadcast: (listener) => ctx.rpc.tap(listener),
        logsDir: ctx.paths.logs,
        startedAt: ctx.startedAt,
      });
      events = stream;
      const deps: DashboardRouteDeps = {
        signIn,
        events: stream,
        logsDir: ctx.paths.logs,
        // Only the door's own list reaches here (dashboard-routes.ts, HTTP_RPC_METHODS); the params are checked by the method's schema.
        invoke: (method, params, signal) => ctx.rpc.invoke(method as MethodName, params as never, { signal }),
      };
      const plugins = ctx.services.get("httpPlugins");
      undo.push(
        plugins.setSessionCheck((req) => signIn.valid(sessionCookie(req))),
        plugins.mount("/dashboard/", pageRoutes(deps)),
        plugins.mount("/api/events/", apiRoutes(deps, "events")),
        plugins.mount("/api/logs/", apiRoutes(deps, "logs")),
        plugins.mount("/api/rpc/", apiRoutes(deps, "rpc")),
      );
      const log = ctx.log.component("dashboard");
      ctx.rpc.register({
        "dashboard.open": async ({ port }) => {
          const listeners = ctx.services.get("gatewayListeners");
          const base = port === undefined ? listeners.localUrl() : await listeners.listen(port);
          const gw = ctx.config.current().gateway;
          const tokenRequired = !isLoopbackHost(gw.host || "127.0.0.1") && Boolean(String(gw.token ?? ""));
          const { code, expiresAt } = signIn.mintCode();
          const url = `${base}/dashboard/`;
          log.info("dashboard sign-in code minted", { url, expires_at: new Date(expiresAt).toISOString() });
          const signInUrl = `${url}?code=${code}`;
          const openFile = await writeOpenPage(openDir, signInUrl, expiresAt - Date.now());
          return { url, sign_in_url: signInUrl, expires_at: new Date(expiresAt).toISOString(), token_required: tokenRequired, open_file: openFile };
        },
      });
      ctx.components.set("dashboard", { status: "ok", detail: `${ctx.services.get("gatewayListeners").localUrl()}/dashboard/` });
    },
    async stop() {
      events?.close();
      events = null;
      for (const u of undo.splice(0)) u();
    },
  };
}

/**
 * The local page `agent dashboard` opens instead of the sign-in link: a redirect to it, in a
 * file only this user can read, removed when the code expires. The browser then has the code in
 * its address bar (and the sign-in takes it out), never on a command line.
 */
async function writeOpenPage(dir: string, signInUrl: string, ttlMs: number): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `sign-in-${randomBytes(8).toString("hex")}.html`);
  const href = signInUrl.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${href}"><title>agent dashboard</title></head><body><p><a href="${href}">Open the agent dashboard</a></p></body></html>\n`;
  await writeFileAtomic(file, html, { mode: 0o600 });
  setTimeout(() => rmSync(file, { force: true }), Math.max(0, ttlMs)).unref();
  return file;
}

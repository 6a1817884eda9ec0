/**
 * The web dashboard (docs/dashboard.md): the app and its API on the gateway's server (or, with
 * `agent dashboard --port`, on a port of its own with the same routes and access rules), the
 * one-time sign-in codes `dashboard.open` mints, and the live event stream.
 */
import { join } from "node:path";
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
          return { url, sign_in_url: `${url}?code=${code}`, expires_at: new Date(expiresAt).toISOString(), token_required: tokenRequired };
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

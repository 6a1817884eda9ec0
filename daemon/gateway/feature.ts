/** The actor gateway feature: serves the actor HTTP API on gateway.host:gateway.port. */
import type { AgentConfig } from "../../shared/config/defaults.js";
import { AgentError } from "../../shared/errors.js";
import type { DaemonContext, Feature } from "../context.js";
import { assertBindAllowed, isLoopbackHost } from "../http/access.js";
import { HttpPlugins } from "../http/plugins.js";
import { connectionCaps } from "../limits/open-files.js";
import { GatewayServer, type GatewaySettings } from "./server.js";

/** Where the gateway token is set, for error messages. */
const TOKEN_NAMES = { config: "gateway.token", env: "AGENT_GATEWAY_TOKEN", listener: "gateway" as const, hostKey: "gateway.host" };

function settingsFrom(config: AgentConfig, env: NodeJS.ProcessEnv = process.env): GatewaySettings {
  const gw = config.gateway;
  return {
    host: gw.host || "127.0.0.1",
    port: Number(gw.port),
    maxBodyBytes: Number(gw.max_body_bytes) > 0 ? Number(gw.max_body_bytes) : 8 * 1024 * 1024,
    inspector: { token: String(gw.inspector_token ?? ""), production: env.AGENT_ENV === "production" },
    access: { corsOrigins: gw.cors_origins ?? [], allowedHosts: gw.allowed_hosts ?? [], token: String(gw.token ?? "") },
    maxConnections: connectionCaps({ gateway: Number(gw.max_connections) || 0, socket: 0 }).gateway,
    idleTimeoutMs: Number(gw.idle_timeout_ms) > 0 ? Number(gw.idle_timeout_ms) : 5000,
  };
}

/** A URL a browser on this machine can open: a wildcard bind (0.0.0.0, ::) is reached on loopback. */
function localUrl(url: string): string {
  return url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, "http://127.0.0.1");
}

export function gatewayFeature(): Feature {
  let server: GatewayServer | null = null;
  let bound: GatewaySettings | null = null;
  /** Extra listeners (`listen(port)`), by port. */
  const extra = new Map<number, GatewayServer>();
  return {
    name: "gateway",
    provides: ["httpPlugins", "gatewayListeners"],
    needs: { start: ["actors"] },
    async start(ctx: DaemonContext) {
      const settings = settingsFrom(ctx.config.current());
      // Refuse before listening: a non-loopback bind without a token is never served.
      assertBindAllowed(settings.host, settings.access!.token, TOKEN_NAMES);
      const log = ctx.log.component("gateway");
      const plugins = new HttpPlugins();
      ctx.services.provide("httpPlugins", plugins);
      server = new GatewayServer({
        settings,
        runtime: () => ctx.services.get("actors"),
        log,
        plugins,
      });
      const url = await server.start();
      bound = settings;
      ctx.services.provide("gatewayListeners", {
        localUrl: () => localUrl(url),
        async listen(port: number) {
          if (!bound) throw new AgentError("gateway.not_running", "the actor gateway is not running");
          // The gateway's own port is the gateway; 0 asks for a free port of its own.
          if (port === Number(new URL(url).port)) return localUrl(url);
          const known = port > 0 ? extra.get(port) : undefined;
          if (known?.url) return localUrl(known.url);
          const current = settingsFrom(ctx.config.current());
          const other = new GatewayServer({
            settings: { ...current, host: bound.host, port, access: { ...current.access!, token: server?.currentToken() ?? "" } },
            runtime: () => ctx.services.get("actors"),
            log,
            plugins,
          });
          const otherUrl = await other.start();
          extra.set(Number(new URL(otherUrl).port), other);
          log.info("gateway also listening", { url: otherUrl });
          return localUrl(otherUrl);
        },
      });
      ctx.gatewayUrl = url;
      ctx.components.set("gateway", { status: "ok", detail: url });
      log.info("actor gateway listening", {
        url,
        inspector: settings.inspector.token ? "token" : settings.inspector.production ? "disabled" : "open",
        token_set: Boolean(settings.access!.token),
        cors_origins: settings.access!.corsOrigins,
        allowed_hosts: settings.access!.allowedHosts,
        max_connections: settings.maxConnections,
        idle_timeout_ms: settings.idleTimeoutMs,
      });
    },
    async stop() {
      await Promise.all([...extra.values()].map((s) => s.stop()));
      extra.clear();
      await server?.stop();
      server = null;
    },
    async reload(ctx: DaemonContext) {
      if (!server || !bound) return;
      const next = settingsFrom(ctx.config.current());
      const log = ctx.log.component("gateway");
      let access = next.access!;
      // The bind address stays until a restart; dropping the token of a non-loopback bind is refused.
      if (!access.token && !isLoopbackHost(bound.host)) {
        log.error("reload would remove the gateway token of a non-loopback bind; keeping the previous token", { host: bound.host });
        access = { ...access, token: server.currentToken() };
      }
      try {
        for (const s of [server, ...extra.values()])
          s.updateSettings({
            maxBodyBytes: next.maxBodyBytes,
            inspector: next.inspector,
            access,
            maxConnections: next.maxConnections,
            idleTimeoutMs: next.idleTimeoutMs,
          });
      } catch (error) {
        log.error("gateway access settings not applied; keeping the previous ones", { error });
      }
    },
  };
}

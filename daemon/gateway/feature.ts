/** The actor gateway feature: serves the actor HTTP API on gateway.host:gateway.port. */
import type { AgentConfig } from "../../shared/config/defaults.js";
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

export function gatewayFeature(): Feature {
  let server: GatewayServer | null = null;
  let bound: GatewaySettings | null = null;
  return {
    name: "gateway",
    provides: ["httpPlugins"],
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
        server.updateSettings({
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

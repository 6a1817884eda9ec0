/** The actor gateway feature: serves the actor HTTP API on gateway.host:gateway.port. */
import type { AgentConfig } from "../../shared/config/defaults.js";
import type { DaemonContext, Feature } from "../context.js";
import { GatewayServer, type GatewaySettings } from "./server.js";

function settingsFrom(config: AgentConfig, env: NodeJS.ProcessEnv = process.env): GatewaySettings {
  const gw = config.gateway;
  return {
    host: gw.host || "127.0.0.1",
    port: Number(gw.port),
    maxBodyBytes: Number(gw.max_body_bytes) > 0 ? Number(gw.max_body_bytes) : 8 * 1024 * 1024,
    inspector: { token: String(gw.inspector_token ?? ""), production: env.AGENT_ENV === "production" },
  };
}

export function gatewayFeature(): Feature {
  let server: GatewayServer | null = null;
  return {
    name: "gateway",
    async start(ctx: DaemonContext) {
      const settings = settingsFrom(ctx.config.current());
      const log = ctx.log.component("gateway");
      server = new GatewayServer({
        settings,
        runtime: () => ctx.services.find("actors"),
        log,
      });
      const url = await server.start();
      ctx.gatewayUrl = url;
      const hasRuntime = ctx.services.has("actors");
      ctx.components.set("gateway", hasRuntime ? { status: "ok", detail: url } : { status: "degraded", detail: `${url} (actor runtime not running)` });
      log.info("actor gateway listening", { url, inspector: settings.inspector.token ? "token" : settings.inspector.production ? "disabled" : "open" });
    },
    async stop() {
      await server?.stop();
      server = null;
    },
    async reload(ctx: DaemonContext) {
      const next = settingsFrom(ctx.config.current());
      server?.updateSettings({ maxBodyBytes: next.maxBodyBytes, inspector: next.inspector });
    },
  };
}

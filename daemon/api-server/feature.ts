import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import type { ApiServerService } from "./api-server-service.js";

/**
 * The OpenAI-compatible API server (docs/api-server.md): started at boot when
 * `api_server.enabled` is true, or by `agent api-server start`; the `api_server.*` RPC group.
 * Its listener module loads on first start, so a daemon that never serves it pays nothing.
 */
export function apiServerFeature(): Feature {
  let service: ApiServerService | null = null;
  let ctxRef: DaemonContext | null = null;
  const get = async (): Promise<ApiServerService> => {
    if (!service) {
      const { ApiServerService } = await import("./api-server-service.js");
      service ??= new ApiServerService(ctxRef!);
    }
    return service;
  };
  return {
    name: "api_server",
    provides: ["apiServer"],
    needs: { serve: ["chat", "profiles", "approvals"] },
    async start(ctx: DaemonContext) {
      ctxRef = ctx;
      ctx.services.provide("apiServer", {
        start: async (options) => (await get()).start(options),
        stop: async () => (service ? service.stop() : false),
        status: async () => (await get()).status(),
      });
      ctx.rpc.register(handlers(get, () => service));
      if (ctx.config.current().api_server.enabled) {
        // A refused start (a non-loopback bind without API_SERVER_KEY, a taken port) is reported, and the daemon runs on.
        await (await get()).start({ by: "config" }).catch((error: Error) => ctx.log.warn(`API server not started: ${error.message}`));
      } else ctx.components.set("api_server", { status: "disabled", detail: "api_server.enabled is false (agent api-server start)" });
    },
    async reload() {
      if (service || ctxRef?.config.current().api_server.enabled) await (await get()).reload();
    },
    async stop() {
      await service?.stop();
    },
  };
}

function handlers(get: () => Promise<ApiServerService>, current: () => ApiServerService | null): Partial<Handlers> {
  return {
    "api_server.start": async ({ host, port }) => (await get()).start({ host, port, by: "cli" }),
    "api_server.stop": async () => {
      const stopped = (await current()?.stop()) ?? false;
      return { ...(await (await get()).status()), stopped };
    },
    "api_server.status": async () => (await get()).status(),
  };
}

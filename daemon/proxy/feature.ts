/**
 * The proxy feature (docs/proxy.md): the local OpenAI-compatible proxy, owned by the daemon so it
 * outlives the CLI that started it. Started by `agent proxy start` or, with `proxy.enabled`, at boot.
 */
import type { AgentConfig } from "../../shared/config/defaults.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { ProxyProvider, ProxyStatus } from "../../shared/protocol/proxy.js";
import type { DaemonContext, Feature } from "../context.js";
import { credentialsFor } from "../models/credentials.js";
import { type ProviderConfig, resolveProvider } from "../models/resolve.js";
import type { ProxyApi } from "./api.js";
import type { ProxySettings } from "./proxy-server.js";
import type { ProxyThreadHost } from "./proxy-thread-host.js";

function settingsFrom(config: AgentConfig, options: { host?: string; port?: number }): ProxySettings {
  const p = config.proxy;
  return {
    host: options.host ?? (p.host || "127.0.0.1"),
    port: options.port ?? Number(p.port),
    token: String(p.token ?? ""),
    maxBodyBytes: Number(p.max_body_bytes) > 0 ? Number(p.max_body_bytes) : 16 * 1024 * 1024,
    upstreamTimeoutMs: Math.max(1, Number(p.upstream_timeout) * 1000 || 120_000),
    corsOrigins: p.cors_origins ?? [],
    allowedHosts: p.allowed_hosts ?? [],
  };
}

export function proxyFeature(): Feature {
  let server: ProxyThreadHost | null = null;
  let provider: string | null = null;
  let context: DaemonContext | null = null;

  const resolve = (ctx: DaemonContext, name: string | null) => {
    const config = ctx.config.current();
    return resolveProvider(config, ctx.config.env(), ctx.home, name ? { provider: name } : {});
  };

  const status = (): ProxyStatus => {
    const addr = server?.address();
    if (!server || !addr || !context) {
      return {
        running: false,
        url: null,
        host: null,
        port: null,
        provider: null,
        upstream: null,
        method: null,
        key_required: false,
        requests: 0,
        started_at: null,
      };
    }
    let upstream: string | null = null;
    let method: ProxyStatus["method"] = null;
    let name = provider;
    try {
      const p = resolve(context, provider);
      upstream = p.baseUrl;
      name = p.name;
      method = p.credentials.method === "oauth" ? "oauth" : p.apiKey === "not-needed" ? "none" : "api_key";
    } catch {
      // Reported as unknown; the proxy answers its requests with the reason.
    }
    const host = addr.address.includes(":") ? `[${addr.address}]` : addr.address;
    return {
      running: true,
      url: `http://${host}:${addr.port}/v1`,
      host: addr.address,
      port: addr.port,
      provider: name,
      upstream,
      method,
      key_required: server.keyRequired,
      requests: server.requests,
      started_at: new Date(server.startedAt).toISOString(),
    };
  };

  // Starts and stops run one at a time, in the order they came: a stop that arrives while a start
  // is under way (loading the module, starting the thread, binding) stops what that start
  // started, rather than finding nothing to stop and leaving the proxy running after it.
  let queue: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(op: () => Promise<T>): Promise<T> => {
    const run = queue.then(op, op);
    queue = run.catch(() => undefined);
    return run;
  };

  const api: ProxyApi = {
    start: (options) => inTurn(() => start(options)),
    stop: () => inTurn(stop),
    status,
  };

  async function start(options: Parameters<ProxyApi["start"]>[0]): Promise<ProxyStatus> {
    const ctx = context!;
    if (options.provider) resolve(ctx, options.provider); // an unknown provider is refused now, not per request
    const settings = settingsFrom(ctx.config.current(), options);
    const chosen = options.provider ?? (ctx.config.current().proxy.provider || null);
    // The host module (and its thread, with node:http and node:https) is loaded on first start, not at daemon boot.
    const { ProxyThreadHost } = await import("./proxy-thread-host.js");
    // Resolved again whenever the config or environment changes (a reload); the credential
    // itself is resolved by the source on every request.
    let cached: { config: unknown; env: unknown; upstream: { baseUrl: string; credentials: ProviderConfig["credentials"] } } | null = null;
    const log = ctx.log.component("proxy");
    const next: ProxyThreadHost = new ProxyThreadHost(
      settings,
      () => {
        const config = ctx.config.current();
        const env = ctx.config.env();
        if (cached?.config !== config || cached.env !== env) {
          const p = resolve(ctx, chosen);
          cached = { config, env, upstream: { baseUrl: p.baseUrl, credentials: p.credentials } };
        }
        return cached.upstream;
      },
      log,
      (error) => {
        if (server !== next) return;
        server = null;
        ctx.components.set("proxy", { status: "error", detail: `its thread stopped: ${error.message}` });
      },
    );
    // Same address: the old listener must let go of the port first.
    const old = server;
    server = null;
    await old?.close();
    await next.listen();
    server = next;
    provider = chosen;
    ctx.components.set("proxy", { status: "ok", detail: status().url ?? undefined });
    ctx.log.info("proxy started", { url: status().url, provider: chosen ?? "(default)" });
    return status();
  }

  async function stop(): Promise<boolean> {
    const old = server;
    server = null;
    await old?.close();
    context?.components.set("proxy", { status: "disabled", detail: "agent proxy start" });
    return old !== null;
  }

  return {
    name: "proxy",
    provides: ["proxy"],
    needs: { start: [], serve: [] },
    async start(ctx: DaemonContext) {
      context = ctx;
      ctx.services.provide("proxy", api);
      ctx.rpc.register(handlers(ctx, api));
      if (ctx.config.current().proxy.enabled) {
        try {
          await api.start({});
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          ctx.log.warn(`proxy: not started: ${message}`);
          ctx.components.set("proxy", { status: "error", detail: message });
        }
      } else ctx.components.set("proxy", { status: "disabled", detail: "agent proxy start" });
    },
    async reload(ctx: DaemonContext) {
      // A rotated key (proxy.token / AGENT_PROXY_TOKEN) or new origins and hosts apply to the
      // running proxy at once; a key removed while it serves a non-loopback address stops it;
      // cors_origins "*" with no key is refused and the proxy keeps its previous settings.
      if (!server) return;
      try {
        // Throws at once when refused; resolves once the thread has the new key (the next request sees it).
        await server.setAccess(settingsFrom(ctx.config.current(), { host: server.settings.host }));
        ctx.components.set("proxy", { status: "ok", detail: status().url ?? undefined });
      } catch (error) {
        const e = toAgentError(error);
        if (e.code === "proxy.cors_wildcard_needs_key") {
          ctx.log.error(`proxy: the reloaded settings are refused, the previous ones stay: ${e.message}`);
          ctx.components.set("proxy", { status: "degraded", detail: `reload refused: ${e.message}` });
          return;
        }
        ctx.log.warn(`proxy stopped: ${e.message}`);
        await api.stop();
        ctx.components.set("proxy", { status: "error", detail: e.message });
      }
    },
    async stop() {
      await api.stop();
    },
  };
}

function handlers(ctx: DaemonContext, api: ProxyApi): Partial<Handlers> {
  return {
    "proxy.start": (params) => api.start(params),
    "proxy.stop": async () => ({ stopped: await api.stop() }),
    "proxy.status": () => api.status(),
    "proxy.providers": () => {
      const config = ctx.config.current();
      const env = ctx.config.env();
      const entries = (config.providers ?? {}) as Record<string, { base_url?: string; api_key_env?: string }>;
      const store = credentialsFor(ctx.home);
      let defaultName: string | null = null;
      try {
        defaultName = resolveProvider(config, env, ctx.home).name;
      } catch {
        // No default provider.
      }
      const chosen = config.proxy.provider || defaultName;
      const providers: ProxyProvider[] = Object.entries(entries).map(([name, e]) => ({
        name,
        base_url: e.base_url ?? "",
        method: store.hasOAuth(name) ? "oauth" : e.api_key_env && env[e.api_key_env] ? "api_key" : "none",
        default: name === chosen,
      }));
      if (!providers.length && defaultName === null)
        throw new AgentError("model.not_configured", `no providers are configured in ${ctx.home}/config.yaml (see agent setup)`);
      return { providers };
    },
  };
}

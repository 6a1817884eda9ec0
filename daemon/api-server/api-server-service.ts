/**
 * The OpenAI-compatible API server's listener (docs/api-server.md): `GET /v1/models` and
 * `POST /v1/chat/completions` on node:http, behind the daemon's shared access rules
 * (daemon/http/access.ts): the Host and Origin rules first, then the key (API_SERVER_KEY as a
 * bearer, compared in constant time; required to bind a non-loopback address).
 */
import { mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { envValue } from "../../shared/config/env.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { profilePaths } from "../../shared/paths.js";
import type { ApiServerStatus } from "../../shared/protocol/api-server.js";
import type { DaemonContext } from "../context.js";
import { type AccessGuard, answerPreflight, isPreflight, type ListenerKey, listenerAccess, type HeaderMap } from "../http/access.js";
import { readBody } from "../http/request-body.js";
import type { ApiServerApi } from "./api.js";

/**
 * Where an API-server turn works: a folder of its own in the profile, not the profile (or home)
 * itself, so a caller's turn does not start among the home's .env and auth.json.
 */
function apiWorkspace(profileDir: string): string {
  const dir = join(profileDir, "api-server-workspace");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
import { openAiError, parseCompletionRequest, runCompletion, sendJson } from "./completions.js";
import { modelIds, profileForModel, type ModelIdEntry } from "./model-ids.js";
import { closeServer } from "../http/server-close.js";

const KEY_NAMES = { config: "API_SERVER_KEY in $AGENT_HOME/.env", env: "API_SERVER_KEY", listener: "api_server" as const, hostKey: "api_server.host" };

interface Running {
  server: Server;
  host: string;
  port: number;
  by: "config" | "cli";
  guard: AccessGuard;
  key: ListenerKey;
  maxBodyBytes: number;
}

export class ApiServerService implements ApiServerApi {
  private running: Running | null = null;
  private starting: Promise<ApiServerStatus> | null = null;
  private lastError: string | null = null;
  private readonly active = { count: 0 };

  constructor(private readonly ctx: DaemonContext) {}

  private models(): Promise<ModelIdEntry[]> {
    const profiles = this.ctx.services.get("profiles");
    return modelIds({
      profiles: () => profiles.names(),
      homeEnv: () => this.ctx.config.env(),
      profileEnv: async (name) => (await profiles.config(name)).env(),
    });
  }

  async status(): Promise<ApiServerStatus> {
    const r = this.running;
    const models = await this.models().catch(() => []);
    const urlHost = r?.host.includes(":") ? `[${r.host}]` : r?.host;
    return {
      running: r !== null,
      url: r ? `http://${urlHost}:${r.port}/v1` : null,
      host: r?.host ?? null,
      port: r?.port ?? null,
      key_required: r ? r.key.required : Boolean(envValue("API_SERVER_KEY", this.ctx.config.env())),
      started_by: r?.by ?? null,
      models,
      active_requests: this.active.count,
      error: r ? null : this.lastError,
    };
  }

  start(options: { host?: string; port?: number; by?: "config" | "cli" } = {}): Promise<ApiServerStatus> {
    // One start at a time: a second waits for the first, then sees it running.
    const previous = this.starting ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.startNow(options));
    this.starting = next;
    void next
      .finally(() => {
        if (this.starting === next) this.starting = null;
      })
      .catch(() => undefined);
    return next;
  }

  private async startNow(options: { host?: string; port?: number; by?: "config" | "cli" }): Promise<ApiServerStatus> {
    const config = this.ctx.config.current().api_server;
    const host = options.host ?? config.host;
    const port = options.port ?? config.port;
    if (this.running && this.running.host === host && (port === 0 || this.running.port === port)) return this.status();
    try {
      // Refuses before listening (and before a running server is moved): a non-loopback bind,
      // or cors_origins "*", without a key is never served.
      const { key, guard } = this.access(host);
      if (this.running) await this.stop();
      const server = createServer((req, res) => void this.handle(req, res));
      const bound = await listen(server, host, port);
      this.running = { server, host, port: bound, by: options.by ?? "cli", guard, key, maxBodyBytes: config.max_body_bytes };
      this.lastError = null;
      this.ctx.components.set("api_server", { status: "ok", detail: `http://${host.includes(":") ? `[${host}]` : host}:${bound}/v1` });
      this.ctx.log.info("API server listening", { host, port: bound, key_required: key.required });
      return this.status();
    } catch (error) {
      const e = toAgentError(error);
      // A refused move leaves the running server as it was.
      if (!this.running) {
        this.lastError = e.message;
        this.ctx.components.set("api_server", { status: "error", detail: e.message });
      }
      throw e;
    }
  }

  async stop(): Promise<boolean> {
    const r = this.running;
    if (!r) return false;
    this.running = null;
    // Open streams close, which interrupts their turns (completions.ts).
    await closeServer(r.server);
    this.ctx.components.set("api_server", { status: "disabled", detail: "stopped" });
    this.ctx.log.info("API server stopped", { host: r.host, port: r.port });
    return true;
  }

  /** The key and access guard the current config and environment give a listener on `host` (throws when a rule refuses them). */
  private access(host: string): { key: ListenerKey; guard: AccessGuard } {
    const config = this.ctx.config.current().api_server;
    return listenerAccess({
      bindHost: host,
      key: envValue("API_SERVER_KEY", this.ctx.config.env()) ?? "",
      corsOrigins: config.cors_origins,
      allowedHosts: config.allowed_hosts,
      names: KEY_NAMES,
    });
  }

  /** After a config reload: `api_server.enabled` starts or stops it (one started by hand stays). */
  async reload(): Promise<void> {
    const r = this.running;
    if (r) {
      // A rotated API_SERVER_KEY (or new origins and hosts) applies to the running server at once;
      // a key removed while it serves a non-loopback address stops it.
      // cors_origins "*" with no key is refused: the server keeps its previous settings.
      try {
        ({ key: r.key, guard: r.guard } = this.access(r.host));
        this.ctx.components.set("api_server", { status: "ok", detail: `http://${r.host.includes(":") ? `[${r.host}]` : r.host}:${r.port}/v1` });
      } catch (error) {
        const e = toAgentError(error);
        if (e.code === "api_server.cors_wildcard_needs_key") {
          this.ctx.log.error(`API server: the reloaded settings are refused, the previous ones stay: ${e.message}`);
          this.ctx.components.set("api_server", { status: "degraded", detail: `reload refused: ${e.message}` });
        } else {
          this.ctx.log.warn(`API server stopped: ${e.message}`);
          await this.stop();
          this.lastError = e.message;
          this.ctx.components.set("api_server", { status: "error", detail: e.message });
          return;
        }
      }
    }
    const enabled = this.ctx.config.current().api_server.enabled;
    if (enabled && !this.running) await this.start({ by: "config" }).catch((error: Error) => this.ctx.log.warn(`API server not started: ${error.message}`));
    else if (!enabled && this.running?.by === "config") await this.stop();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const r = this.running;
    let cors: HeaderMap | null = null;
    try {
      if (!r) throw new AgentError("api_server.not_found", "the API server is stopping");
      cors = r.guard.check(req);
      if (isPreflight(req)) return answerPreflight(req, res, cors);
      if (!r.key.allows(req)) throw r.key.unauthorized();
      const path = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
      if (path === "/v1/models" && (req.method === "GET" || req.method === "HEAD")) {
        const data = (await this.models()).map((m) => ({ id: m.id, object: "model", created: 0, owned_by: "agent", profile: m.profile }));
        return sendJson(res, 200, { object: "list", data }, cors ?? {});
      }
      if (path === "/v1/chat/completions" && req.method === "POST") {
        const body = await readBody(req, r.maxBodyBytes).catch((error) => {
          const e = toAgentError(error);
          throw e.code === "request.body_too_large"
            ? new AgentError("request.body_too_large", `request body exceeds the limit of ${r.maxBodyBytes} bytes (api_server.max_body_bytes)`)
            : e;
        });
        const request = parseCompletionRequest(body);
        let profile: string | undefined;
        if (request.model !== undefined) {
          const models = await this.models();
          profile = profileForModel(models, request.model);
          if (profile === undefined)
            throw new AgentError(
              "api_server.model_not_found",
              `no model ${JSON.stringify(request.model.slice(0, 100))}: the models are ${models.map((m) => m.id).join(", ")} (GET /v1/models)`,
            );
        }
        return await runCompletion(
          { chat: this.ctx.services.get("chat"), cwdFor: (p) => apiWorkspace(profilePaths(this.ctx.home, p).dir), active: this.active },
          req,
          res,
          request,
          profile,
          cors,
        );
      }
      throw new AgentError(
        "api_server.not_found",
        `no route for ${req.method} ${path.slice(0, 200)}: the API server serves GET /v1/models and POST /v1/chat/completions`,
      );
    } catch (error) {
      const { status, body } = openAiError(error);
      if (status >= 500) this.ctx.log.warn("API server request failed", { code: body.error.code, message: body.error.message });
      if (!res.headersSent) sendJson(res, status, body, { ...(cors ?? {}), ...(status === 401 ? { "www-authenticate": "Bearer" } : {}) });
      else if (!res.writableEnded) res.end();
    }
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      const why =
        error.code === "EADDRINUSE"
          ? `port ${port} is already in use; choose another with api_server.port or agent api-server start --port`
          : error.code === "EACCES"
            ? "permission denied; choose a port above 1024"
            : error.message;
      reject(new AgentError("api_server.bind_failed", `the API server cannot listen on ${host}:${port}: ${why}`, { host, port }));
    };
    const onListening = () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}

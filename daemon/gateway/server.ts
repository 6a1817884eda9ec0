/**
 * The actor HTTP gateway on node:http (spec/actor-service.md, DECISIONS.md A): the server's
 * lifecycle (listen, reload settings, stop) and the dispatch of each request: CORS, encoding,
 * path check, then router.ts; anything thrown becomes the error response here (http-error.ts).
 *
 * The routes: management-routes.ts (/actors, /metadata, /health), actor-routes.ts (action,
 * queue, health), request-forwarding.ts (onRequest), inspector-routes.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { AgentError } from "../../shared/errors.js";
import type { ActorRuntime } from "../actors/types.js";
import type { Logger } from "../log/logger.js";
import type { InspectorAuthSettings } from "./auth.js";
import type { GatewayContext } from "./context.js";
import { answerPreflight, corsHeadersFor, isPreflight } from "./cors.js";
import { parseEncoding, type Encoding } from "./encoding.js";
import { classifyError, encodeErrorBody } from "./http-error.js";
import { checkPath } from "./path.js";
import { writeRaw, type HeaderMap } from "./response.js";
import { route } from "./router.js";

export interface GatewaySettings {
  host: string;
  port: number;
  maxBodyBytes: number;
  inspector: InspectorAuthSettings;
}

export interface GatewayOptions {
  settings: GatewaySettings;
  /** Looked up per request so the gateway never holds a stale runtime. */
  runtime: () => ActorRuntime | undefined;
  log: Logger;
}

export class GatewayServer {
  private server: Server | null = null;
  private settings: GatewaySettings;
  private readonly sockets = new Set<Socket>();
  /** What the routes see of this server: the runtime and the current settings. */
  private readonly context: GatewayContext;
  url: string | null = null;

  constructor(private readonly options: GatewayOptions) {
    this.settings = options.settings;
    const server = this;
    this.context = {
      runtime() {
        const runtime = options.runtime();
        if (!runtime) throw new AgentError("internal.runtime_unavailable", "the actor runtime is not running", undefined, { expected: false });
        return runtime;
      },
      runtimeIfRunning: () => options.runtime(),
      get maxBodyBytes() {
        return server.settings.maxBodyBytes;
      },
      get inspectorAuth() {
        return server.settings.inspector;
      },
      log: options.log,
    };
  }

  updateSettings(settings: Partial<Pick<GatewaySettings, "maxBodyBytes" | "inspector">>): void {
    this.settings = { ...this.settings, ...settings };
  }

  async start(): Promise<string> {
    const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => {
      this.handle(req, res);
    });
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
      if (socket.writable && error.code !== "ECONNRESET") {
        const body = JSON.stringify({ group: "request", code: "invalid", message: "malformed HTTP request" });
        socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      } else {
        socket.destroy();
      }
    });
    const { host, port } = this.settings;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) => {
        server.off("listening", onListening);
        if (error.code === "EADDRINUSE") {
          reject(
            new AgentError(
              "gateway.port_in_use",
              `the actor gateway cannot listen on ${host}:${port}: port ${port} is already in use. Stop what uses it, or choose another port with gateway.port in config.yaml or AGENT_GATEWAY_PORT (0 picks a free port).`,
              { host, port },
            ),
          );
        } else if (error.code === "EACCES") {
          reject(new AgentError("gateway.port_denied", `the actor gateway may not listen on ${host}:${port} (permission denied); set gateway.port or AGENT_GATEWAY_PORT to a port above 1024`, { host, port }));
        } else {
          reject(new AgentError("gateway.listen_failed", `the actor gateway cannot listen on ${host}:${port}: ${error.message}`, { host, port }));
        }
      };
      const onListening = () => {
        server.off("error", onError);
        resolve();
      };
      server.once("error", onError);
      server.once("listening", onListening);
      server.listen(port, host);
    });
    server.on("error", (error) => this.options.log.error("gateway server error", { error }));
    this.server = server;
    const address = server.address() as AddressInfo;
    const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
    this.url = `http://${shownHost}:${address.port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // In-flight requests get a moment to finish, then their sockets go.
      setTimeout(() => {
        for (const socket of this.sockets) socket.destroy();
      }, 2_000).unref();
    });
  }

  // ---------- dispatch ----------

  private handle(req: IncomingMessage, res: ServerResponse): void {
    let encoding: Encoding = "json";
    const origin = req.headers.origin;
    const cors = corsHeadersFor(origin);
    try {
      const method = req.method ?? "GET";
      if (isPreflight(req, method, origin)) {
        answerPreflight(req, res, cors);
        return;
      }
      encoding = parseEncoding(req.headers["x-rivet-encoding"]);
      const url = req.url ?? "/";
      const q = url.indexOf("?");
      const path = q < 0 ? url : url.slice(0, q);
      const search = q < 0 ? "" : url.slice(q);
      checkPath(path);
      const pending = route(this.context, { req, res, method, path, search, encoding, cors });
      if (pending) pending.catch((error) => this.fail(req, res, error, encoding, cors));
    } catch (error) {
      this.fail(req, res, error, encoding, cors);
    }
  }

  /** The one place a thrown error becomes the response (or ends a response already begun). */
  private fail(req: IncomingMessage, res: ServerResponse, error: unknown, encoding: Encoding, cors: HeaderMap | null): void {
    const classified = classifyError(error);
    if (classified.internal) {
      this.options.log.error("gateway request failed", { method: req.method, path: (req.url ?? "").split("?")[0].slice(0, 300), error });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const { body, contentType } = encodeErrorBody(classified, encoding);
    writeRaw(res, classified.status, body, contentType, cors);
  }
}

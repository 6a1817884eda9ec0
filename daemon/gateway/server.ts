/**
 * The actor HTTP gateway on node:http: management API, gateway to actors, inspector and
 * `GET /metadata` (spec/actor-service.md, DECISIONS.md A). Routing is a hand-written split on
 * `/` (no framework): the hot path (POST /gateway/{id}/action/{name}) is a few string
 * operations, one body read, one decode, the runtime call and one encode.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { AgentError } from "../../shared/errors.js";
import { APP_VERSION } from "../../shared/version.js";
import type { ActorRecord, ActorRuntime, CrashPolicy } from "../actors/types.js";
import type { Logger } from "../log/logger.js";
import { checkInspectorAuth, type InspectorAuthSettings } from "./auth.js";
import { BareError, decodeActionRequest, decodeQueueSendRequest, encodeActionResponse, encodeQueueSendResponse } from "./bare.js";
import {
  CONTENT_TYPE,
  cborDecodeStrict,
  cborEncodeValue,
  decodeGenericBody,
  encodeGenericBody,
  jsonParse,
  jsonStringifyCompat,
  parseEncoding,
  type Encoding,
} from "./encoding.js";
import { classifyError, encodeErrorBody } from "./http-error.js";

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

const CRASH_POLICIES = new Set<string>(["restart", "sleep", "destroy"]);
const MAX_KEY_BYTES = 128;
const MAX_INPUT_BYTES = 4 * 1024 * 1024;
const MAX_ACTOR_IDS = 32;
const ID_PATTERN = /^[A-Za-z0-9._~-]{1,128}$/;
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CORS_ALLOW_HEADERS = [
  "Content-Type",
  "User-Agent",
  "Authorization",
  "x-rivet-query",
  "x-rivet-encoding",
  "x-rivet-conn-params",
  "x-rivet-actor",
  "x-rivet-target",
  "x-rivet-namespace",
  "x-rivet-token",
].join(", ");
const CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS";
/** Hop-by-hop headers not forwarded to an actor's `onRequest`. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer", "host", "content-length"]);

type HeaderMap = Record<string, string | number | string[]>;

function badRequest(message: string, metadata?: Record<string, unknown>): AgentError {
  return new AgentError("api.bad_request", message, metadata);
}

function invalidRequest(message: string): AgentError {
  return new AgentError("request.invalid", message);
}

function notFoundRoute(method: string, path: string): AgentError {
  return new AgentError("route.not_found", `no route for ${method} ${path.slice(0, 200)}`);
}

function actorNotFound(id: string): AgentError {
  return new AgentError("actor.not_found", `actor ${id.slice(0, 130)} was not found`, { actor_id: id.slice(0, 130) });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidRequest("malformed percent-encoding in the path");
  }
}

/** Rejects dot segments (raw or percent-encoded, also inside an encoded segment) and NUL bytes. */
function checkPath(path: string): void {
  if (path.length === 0 || path[0] !== "/") throw invalidRequest("the path must start with /");
  if (path.length > 8192) throw invalidRequest("path too long");
  if (path.includes("%") || path.includes(".") || path.includes("\\")) {
    for (const raw of path.split("/")) {
      const seg = decodeSegment(raw);
      if (seg.includes("\0")) throw invalidRequest("NUL bytes are not allowed in the path");
      for (const part of seg.split(/[\\/]/)) {
        if (part === "." || part === "..") throw invalidRequest("path traversal segments are not allowed");
      }
    }
  }
}

function parseActorIdSegment(raw: string): { actorId: string; token?: string } {
  const at = raw.indexOf("@");
  const idPart = at < 0 ? raw : raw.slice(0, at);
  const actorId = decodeSegment(idPart);
  if (!ID_PATTERN.test(actorId)) throw actorNotFound(actorId);
  return at < 0 ? { actorId } : { actorId, token: decodeSegment(raw.slice(at + 1)) };
}

function strictBase64Decode(text: string, what: string): Buffer {
  if (!BASE64_PATTERN.test(text)) throw badRequest(`${what} is not valid base64`);
  return Buffer.from(text, "base64");
}

function parseIntegerParam(params: URLSearchParams, name: string, fallback: number): number {
  const raw = params.get(name);
  if (raw === null || raw === "") return fallback;
  if (!/^\d{1,16}$/.test(raw)) throw badRequest(`query parameter ${name} must be a non-negative integer`);
  return Number(raw);
}

export class GatewayServer {
  private server: Server | null = null;
  private settings: GatewaySettings;
  private readonly sockets = new Set<Socket>();
  url: string | null = null;

  constructor(private readonly options: GatewayOptions) {
    this.settings = options.settings;
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

  // ---------- request handling ----------

  private handle(req: IncomingMessage, res: ServerResponse): void {
    let encoding: Encoding = "json";
    const origin = req.headers.origin;
    const cors: HeaderMap | null = origin
      ? { "access-control-allow-origin": origin, "access-control-allow-credentials": "true", "access-control-expose-headers": "*", vary: "Origin" }
      : null;
    try {
      const method = req.method ?? "GET";
      if (method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined && (origin || req.headers["access-control-request-headers"])) {
        this.preflight(req, res, cors);
        return;
      }
      encoding = parseEncoding(req.headers["x-rivet-encoding"]);
      const url = req.url ?? "/";
      const q = url.indexOf("?");
      const path = q < 0 ? url : url.slice(0, q);
      const search = q < 0 ? "" : url.slice(q);
      checkPath(path);
      const pending = this.route(req, res, method, path, search, encoding, cors);
      if (pending) pending.catch((error) => this.fail(req, res, error, encoding, cors));
    } catch (error) {
      this.fail(req, res, error, encoding, cors);
    }
  }

  private preflight(req: IncomingMessage, res: ServerResponse, cors: HeaderMap | null): void {
    const requested = req.headers["access-control-request-headers"];
    res.writeHead(204, {
      ...(cors ?? { "access-control-allow-origin": "*" }),
      "access-control-allow-methods": CORS_METHODS,
      "access-control-allow-headers": typeof requested === "string" && requested.length < 4096 ? requested : CORS_ALLOW_HEADERS,
      "access-control-max-age": "86400",
      "content-length": "0",
    });
    res.end();
  }

  private runtime(): ActorRuntime {
    const runtime = this.options.runtime();
    if (!runtime) throw new AgentError("internal.runtime_unavailable", "the actor runtime is not running", undefined, { expected: false });
    return runtime;
  }

  /** Returns a promise only for asynchronous routes. */
  private route(req: IncomingMessage, res: ServerResponse, method: string, path: string, search: string, encoding: Encoding, cors: HeaderMap | null): Promise<void> | void {
    // Header routing: the whole path is relative to the actor.
    const target = req.headers["x-rivet-target"];
    if (target !== undefined) {
      if (target !== "actor") throw badRequest(`unknown x-rivet-target ${String(target).slice(0, 40)}`);
      const actorHeader = req.headers["x-rivet-actor"];
      if (typeof actorHeader !== "string" || actorHeader === "") throw badRequest("x-rivet-target: actor needs an x-rivet-actor header");
      const segs = path.split("/");
      return this.actorRoute(req, res, method, parseActorIdSegment(encodeURIComponent(actorHeader)).actorId, segs, 1, path, search, encoding, cors);
    }

    const segs = path.split("/");
    // Tolerate one trailing slash outside the forwarded request path.
    const first = segs[1];
    if (first === "gateway") {
      if (segs.length < 4 || segs[2] === "") throw notFoundRoute(method, path);
      const { actorId } = parseActorIdSegment(segs[2]);
      return this.actorRoute(req, res, method, actorId, segs, 3, path, search, encoding, cors);
    }
    if (segs.length > 2 && segs[segs.length - 1] === "") segs.pop();
    if (first === "actors") {
      if (segs.length === 2) {
        if (method === "GET") return this.listActors(res, search, encoding, cors);
        if (method === "PUT") return this.withBody(req, (body) => this.getOrCreate(res, body, search, encoding, cors));
        if (method === "POST") return this.withBody(req, (body) => this.createActor(res, body, search, encoding, cors));
        throw notFoundRoute(method, path);
      }
      if (segs.length === 3 && segs[2] === "names" && method === "GET") return this.names(res, search, encoding, cors);
      if (segs.length === 3 && method === "DELETE") return this.destroyActor(res, decodeSegment(segs[2]), encoding, cors);
      if (segs.length === 6 && segs[3] === "kv" && segs[4] === "keys" && method === "GET") {
        return this.kvGet(res, decodeSegment(segs[2]), decodeSegment(segs[5]), encoding, cors);
      }
      throw notFoundRoute(method, path);
    }
    if (first === "metadata" && segs.length === 2 && (method === "GET" || method === "HEAD")) {
      return this.send(res, 200, this.metadata(), encoding, cors);
    }
    if (first === "health" && segs.length === 2 && (method === "GET" || method === "HEAD")) {
      return this.send(res, 200, { status: "ok", runtime: "agent", version: APP_VERSION }, encoding, cors);
    }
    throw notFoundRoute(method, path);
  }

  private actorRoute(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    actorId: string,
    segs: string[],
    at: number,
    path: string,
    search: string,
    encoding: Encoding,
    cors: HeaderMap | null,
  ): Promise<void> | void {
    const kind = segs[at];
    const rest = segs.length - at;
    if (kind === "action" && rest === 2 && method === "POST") {
      const name = decodeSegment(segs[at + 1]);
      if (name === "") throw notFoundRoute(method, path);
      return this.withBody(req, (body) => this.action(req, res, actorId, name, body, encoding, cors));
    }
    if (kind === "request" && rest >= 2) {
      return this.forward(req, res, actorId, segs.slice(at + 1).join("/"), search, cors);
    }
    if (kind === "health" && rest === 1 && (method === "GET" || method === "HEAD")) {
      return this.health(res, actorId, cors);
    }
    if (kind === "queue" && rest === 2 && method === "POST") {
      const name = decodeSegment(segs[at + 1]);
      if (name === "") throw notFoundRoute(method, path);
      return this.withBody(req, (body) => this.queueSend(res, actorId, name, body, encoding, cors));
    }
    if (kind === "inspector" && rest >= 2) {
      return this.inspector(req, res, method, actorId, segs.slice(at + 1), path, search, encoding, cors);
    }
    throw notFoundRoute(method, path);
  }

  // ---------- body and response helpers ----------

  private readBody(req: IncomingMessage): Promise<Buffer> {
    const max = this.settings.maxBodyBytes;
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > max) {
      return Promise.reject(this.tooLarge(req, max));
    }
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const onData = (chunk: Buffer) => {
        if (done) return;
        size += chunk.length;
        if (size > max) {
          done = true;
          req.off("data", onData);
          reject(this.tooLarge(req, max));
          return;
        }
        chunks.push(chunk);
      };
      req.on("data", onData);
      req.once("end", () => {
        if (done) return;
        done = true;
        resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      });
      req.once("error", (error) => {
        if (done) return;
        done = true;
        reject(new AgentError("request.aborted", `request body could not be read: ${error.message}`));
      });
    });
  }

  private tooLarge(req: IncomingMessage, max: number): AgentError {
    // Drain (and drop) what the client still sends so it can read our answer; the connection
    // is closed after the response.
    (req as IncomingMessage & { gatewayClose?: boolean }).gatewayClose = true;
    req.resume();
    return new AgentError("request.body_too_large", `request body exceeds the limit of ${max} bytes (gateway.max_body_bytes)`, { max_bytes: max });
  }

  private async withBody(req: IncomingMessage, next: (body: Buffer) => Promise<void> | void): Promise<void> {
    const body = await this.readBody(req);
    await next(body);
  }

  private writeRaw(res: ServerResponse, status: number, body: Uint8Array | string, contentType: string, cors: HeaderMap | null): void {
    const headers: HeaderMap = { "content-type": contentType, "content-length": typeof body === "string" ? Buffer.byteLength(body) : body.byteLength };
    if (cors) Object.assign(headers, cors);
    if ((res.req as IncomingMessage & { gatewayClose?: boolean }).gatewayClose) headers.connection = "close";
    res.writeHead(status, headers);
    res.end(res.req.method === "HEAD" ? undefined : body);
  }

  private send(res: ServerResponse, status: number, value: unknown, encoding: Encoding, cors: HeaderMap | null): void {
    const { body, contentType } = encodeGenericBody(value, encoding);
    this.writeRaw(res, status, body, contentType, cors);
  }

  private fail(req: IncomingMessage, res: ServerResponse, error: unknown, encoding: Encoding, cors: HeaderMap | null): void {
    const classified = classifyError(error instanceof BareError ? invalidRequest(`invalid BARE body: ${error.message}`) : error);
    if (classified.internal) {
      this.options.log.error("gateway request failed", { method: req.method, path: (req.url ?? "").split("?")[0].slice(0, 300), error });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const { body, contentType } = encodeErrorBody(classified, encoding);
    this.writeRaw(res, classified.status, body, contentType, cors);
  }

  private namespace(params: URLSearchParams): string {
    const ns = params.get("namespace");
    if (ns === null || ns === "") return "default";
    if (ns.length > 128) throw badRequest("namespace is too long (at most 128 characters)");
    return ns;
  }

  private metadata(): unknown {
    const runtime = this.options.runtime();
    const names = runtime ? runtime.definitionNames() : [];
    return {
      runtime: "agent",
      version: APP_VERSION,
      runner: { kind: { normal: {} } },
      actorNames: Object.fromEntries(names.map((n) => [n, { metadata: {} }])),
    };
  }

  private requireActor(runtime: ActorRuntime, actorId: string): ActorRecord {
    const record = runtime.get(actorId);
    if (!record || record.destroy_ts !== null) throw actorNotFound(actorId);
    return record;
  }

  // ---------- management ----------

  private listActors(res: ServerResponse, search: string, encoding: Encoding, cors: HeaderMap | null): void {
    const params = new URLSearchParams(search);
    const namespace = this.namespace(params);
    const ids = params.get("actor_ids");
    const name = params.get("name");
    const key = params.get("key");
    if (ids !== null && name !== null) throw badRequest("give either actor_ids or name, not both");
    if (ids === null && name === null) throw badRequest(key !== null ? "key needs name" : "give actor_ids or name");
    if (ids !== null) {
      if (key !== null) throw badRequest("key needs name");
      const list = ids.split(",").filter((id) => id !== "");
      if (list.length === 0) throw badRequest("actor_ids is empty");
      if (list.length > MAX_ACTOR_IDS) throw badRequest(`at most ${MAX_ACTOR_IDS} actor_ids per call`);
      const valid = list.filter((id) => ID_PATTERN.test(id));
      const actors = valid.length ? this.runtime().list({ namespace, actor_ids: valid }) : [];
      this.send(res, 200, { actors }, encoding, cors);
      return;
    }
    if (name === "") throw badRequest("name is empty");
    const actors = this.runtime().list({ namespace, name: name!, ...(key !== null ? { key } : {}) });
    this.send(res, 200, { actors }, encoding, cors);
  }

  private parseCreateBody(body: Buffer, encoding: Encoding, keyRequired: boolean) {
    if (body.length === 0) throw badRequest("a JSON body is required");
    const data = decodeGenericBody(body, encoding);
    if (!isPlainObject(data)) throw badRequest("the body must be a JSON object");
    const { name, key, runner_name_selector, crash_policy, input, datacenter } = data;
    if (typeof name !== "string" || name === "") throw badRequest("name must be a non-empty string");
    if (name.length > 256) throw badRequest("name is too long");
    if (keyRequired ? typeof key !== "string" : key !== undefined && key !== null && typeof key !== "string") {
      throw badRequest(keyRequired ? "key must be a string" : "key must be a string or null");
    }
    if (typeof key === "string" && Buffer.byteLength(key) > MAX_KEY_BYTES) {
      throw new AgentError("actor.key_too_large", `key is longer than ${MAX_KEY_BYTES} bytes`, { max_bytes: MAX_KEY_BYTES });
    }
    if (runner_name_selector !== undefined && (typeof runner_name_selector !== "string" || runner_name_selector === "" || runner_name_selector.length > 256)) {
      throw badRequest("runner_name_selector must be a non-empty string");
    }
    if (typeof crash_policy !== "string" || !CRASH_POLICIES.has(crash_policy)) {
      throw badRequest("crash_policy must be one of restart, sleep, destroy");
    }
    if (datacenter !== undefined && datacenter !== null && typeof datacenter !== "string") throw badRequest("datacenter must be a string or null");
    let decodedInput: unknown = undefined;
    if (input !== undefined && input !== null) {
      if (typeof input !== "string") throw badRequest("input must be a base64 string (CBOR) or null");
      if (input.length > Math.ceil((MAX_INPUT_BYTES * 4) / 3) + 4) {
        throw new AgentError("actor.input_too_large", `input is larger than ${MAX_INPUT_BYTES} bytes`, { max_bytes: MAX_INPUT_BYTES });
      }
      const bytes = strictBase64Decode(input, "input");
      if (bytes.length > MAX_INPUT_BYTES) throw new AgentError("actor.input_too_large", `input is larger than ${MAX_INPUT_BYTES} bytes`, { max_bytes: MAX_INPUT_BYTES });
      decodedInput = bytes.length === 0 ? undefined : cborDecodeStrict(bytes, "api.bad_request");
    }
    return {
      name,
      key: typeof key === "string" ? key : null,
      runner_name_selector: (runner_name_selector as string | undefined) ?? "default",
      crash_policy: crash_policy as CrashPolicy,
      input: decodedInput,
      datacenter: (datacenter as string | null | undefined) ?? null,
    };
  }

  private async getOrCreate(res: ServerResponse, body: Buffer, search: string, encoding: Encoding, cors: HeaderMap | null): Promise<void> {
    const namespace = this.namespace(new URLSearchParams(search));
    const request = this.parseCreateBody(body, encoding, true);
    const runtime = this.runtime();
    if (!runtime.hasDefinition(request.name)) throw nameNotFound(request.name);
    const result = await runtime.getOrCreate({ ...request, namespace, key: request.key! });
    this.send(res, 200, { actor: result.actor, created: result.created }, encoding, cors);
  }

  private async createActor(res: ServerResponse, body: Buffer, search: string, encoding: Encoding, cors: HeaderMap | null): Promise<void> {
    const namespace = this.namespace(new URLSearchParams(search));
    const request = this.parseCreateBody(body, encoding, false);
    const runtime = this.runtime();
    if (!runtime.hasDefinition(request.name)) throw nameNotFound(request.name);
    const actor = await runtime.create({ ...request, namespace });
    this.send(res, 200, { actor }, encoding, cors);
  }

  private async destroyActor(res: ServerResponse, actorId: string, encoding: Encoding, cors: HeaderMap | null): Promise<void> {
    if (!ID_PATTERN.test(actorId)) throw actorNotFound(actorId);
    const runtime = this.runtime();
    this.requireActor(runtime, actorId);
    await runtime.destroy(actorId);
    this.send(res, 200, {}, encoding, cors);
  }

  private names(res: ServerResponse, search: string, encoding: Encoding, cors: HeaderMap | null): void {
    const params = new URLSearchParams(search);
    const ns = params.get("namespace");
    if (ns === null || ns === "") throw badRequest("the namespace query parameter is required");
    const names = this.runtime().definitionNames();
    this.send(res, 200, { names: Object.fromEntries(names.map((n) => [n, { metadata: {} }])) }, encoding, cors);
  }

  private async kvGet(res: ServerResponse, actorId: string, keyText: string, encoding: Encoding, cors: HeaderMap | null): Promise<void> {
    if (!ID_PATTERN.test(actorId)) throw actorNotFound(actorId);
    if (keyText === "") throw badRequest("the KV key is empty");
    const key = strictBase64Decode(keyText, "the KV key");
    if (key.length === 0) throw badRequest("the KV key is empty");
    const runtime = this.runtime();
    this.requireActor(runtime, actorId);
    const value = await runtime.kvGet(actorId, new Uint8Array(key.buffer, key.byteOffset, key.byteLength));
    this.send(res, 200, { value: value === null ? null : Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") }, encoding, cors);
  }

  // ---------- gateway ----------

  private connParams(req: IncomingMessage): unknown {
    const raw = req.headers["x-rivet-conn-params"];
    if (raw === undefined) return undefined;
    if (typeof raw !== "string") throw invalidRequest("x-rivet-conn-params must be one JSON header");
    return jsonParse(raw, "request.invalid", false, "the x-rivet-conn-params header");
  }

  private async health(res: ServerResponse, actorId: string, cors: HeaderMap | null): Promise<void> {
    const runtime = this.runtime();
    this.requireActor(runtime, actorId);
    await runtime.ensureAwake(actorId);
    this.writeRaw(res, 200, "ok", "text/plain; charset=utf-8", cors);
  }

  private decodeActionArgs(body: Buffer, encoding: Encoding): unknown[] {
    let args: unknown;
    if (encoding === "bare") {
      const raw = decodeActionRequest(body);
      args = cborDecodeStrict(raw, "request.invalid");
    } else {
      if (body.length === 0) throw invalidRequest("an action body { args: [...] } is required");
      const data = encoding === "cbor" ? cborDecodeStrict(body) : jsonParse(body.toString("utf8"));
      if (!isPlainObject(data)) throw invalidRequest("the action body must be an object { args: [...] }");
      for (const k in data) if (k !== "args") throw invalidRequest(`unexpected property ${k.slice(0, 40)} in the action body`);
      args = data.args;
    }
    if (!Array.isArray(args)) throw invalidRequest("args must be an array");
    return args;
  }

  private async action(req: IncomingMessage, res: ServerResponse, actorId: string, name: string, body: Buffer, encoding: Encoding, cors: HeaderMap | null): Promise<void> {
    const args = this.decodeActionArgs(body, encoding);
    const connParams = this.connParams(req);
    const runtime = this.runtime();
    this.requireActor(runtime, actorId);
    const output = await runtime.action(actorId, name, args, connParams === undefined ? { source: "gateway" } : { source: "gateway", connParams });
    if (encoding === "json") {
      this.writeRaw(res, 200, `{"output":${jsonStringifyCompat(output)}}`, CONTENT_TYPE.json, cors);
    } else if (encoding === "cbor") {
      this.writeRaw(res, 200, cborEncodeValue({ output }), CONTENT_TYPE.cbor, cors);
    } else {
      this.writeRaw(res, 200, encodeActionResponse(cborEncodeValue(output)), CONTENT_TYPE.bare, cors);
    }
  }

  private async queueSend(res: ServerResponse, actorId: string, name: string, body: Buffer, encoding: Encoding, cors: HeaderMap | null): Promise<void> {
    let message: unknown;
    let wait = false;
    let timeoutMs: number | undefined;
    if (encoding === "bare") {
      const decoded = decodeQueueSendRequest(body);
      message = cborDecodeStrict(decoded.body);
      wait = decoded.wait ?? false;
      if (decoded.timeout !== null) timeoutMs = Number(decoded.timeout > 86_400_000n ? 86_400_000n : decoded.timeout);
    } else {
      if (body.length === 0) throw invalidRequest("a queue body { body, wait?, timeout? } is required");
      const data = encoding === "cbor" ? cborDecodeStrict(body) : jsonParse(body.toString("utf8"));
      if (!isPlainObject(data)) throw invalidRequest("the queue body must be an object { body, wait?, timeout? }");
      message = data.body;
      if (data.wait !== undefined && data.wait !== null && typeof data.wait !== "boolean") throw invalidRequest("wait must be a boolean");
      if (data.name !== undefined && data.name !== null && typeof data.name !== "string") throw invalidRequest("name must be a string");
      if (data.timeout !== undefined && data.timeout !== null && (typeof data.timeout !== "number" || !Number.isFinite(data.timeout) || data.timeout < 0)) {
        throw invalidRequest("timeout must be a non-negative number of milliseconds");
      }
      wait = data.wait === true;
      if (typeof data.timeout === "number") timeoutMs = Math.min(data.timeout, 86_400_000);
    }
    const runtime = this.runtime();
    this.requireActor(runtime, actorId);
    const result = await runtime.enqueue(actorId, name, message, timeoutMs === undefined ? { wait } : { wait, timeoutMs });
    if (encoding === "bare") {
      const reply = result.response === undefined ? null : cborEncodeValue(result.response);
      this.writeRaw(res, 200, encodeQueueSendResponse(result.status, reply), CONTENT_TYPE.bare, cors);
      return;
    }
    this.send(res, 200, result.response === undefined ? { status: result.status } : { status: result.status, response: result.response }, encoding, cors);
  }

  private async forward(req: IncomingMessage, res: ServerResponse, actorId: string, subpath: string, search: string, cors: HeaderMap | null): Promise<void> {
    const method = req.method ?? "GET";
    const runtime = this.runtime();
    this.requireActor(runtime, actorId);
    const headers = new Headers();
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      if (HOP_BY_HOP.has(name)) continue;
      try {
        headers.append(name, raw[i + 1]);
      } catch {
        // A header value undici refuses is dropped.
      }
    }
    let body: Buffer | undefined;
    if (method !== "GET" && method !== "HEAD") {
      body = await this.readBody(req);
    }
    let request: Request;
    try {
      request = new Request(`http://actor/${subpath}${search}`, {
        method,
        headers,
        ...(body !== undefined && body.length > 0 ? { body } : {}),
      });
    } catch (error) {
      throw invalidRequest(`the request cannot be forwarded: ${(error as Error).message}`);
    }
    const connParams = this.connParams(req);
    const response = await runtime.request(actorId, request, connParams === undefined ? { source: "gateway" } : { source: "gateway", connParams });
    await this.writeResponse(res, response, cors);
  }

  private async writeResponse(res: ServerResponse, response: Response, cors: HeaderMap | null): Promise<void> {
    const out: Record<string, string | string[]> = {};
    response.headers.forEach((value, name) => {
      if (name === "set-cookie") return;
      out[name] = value;
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length) out["set-cookie"] = cookies;
    if (cors) for (const [k, v] of Object.entries(cors)) if (!(k in out)) out[k] = String(v);
    delete out["transfer-encoding"];
    delete out.connection;
    const body = response.body;
    if (!body || res.req.method === "HEAD") {
      res.writeHead(response.status, response.statusText || undefined, out);
      res.end();
      await body?.cancel().catch(() => undefined);
      return;
    }
    // Streamed through as it comes (server-sent events and long bodies work); a client that
    // goes away cancels the handler's stream.
    res.writeHead(response.status, response.statusText || undefined, out);
    const reader = body.getReader();
    const onClose = () => void reader.cancel().catch(() => undefined);
    res.once("close", onClose);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise<void>((resolve) => { res.once("drain", resolve); res.once("close", resolve); });
        if (res.destroyed) break;
      }
      res.end();
    } catch (error) {
      this.options.log.warn("actor response stream failed", { error });
      res.destroy();
    } finally {
      res.off("close", onClose);
    }
  }

  // ---------- inspector ----------

  private async inspector(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    actorId: string,
    segs: string[],
    path: string,
    search: string,
    encoding: Encoding,
    cors: HeaderMap | null,
  ): Promise<void> {
    if (segs.length > 1 && segs[segs.length - 1] === "") segs = segs.slice(0, -1);
    const what = segs.join("/");
    const known =
      (segs.length === 1 && ["state", "connections", "rpcs", "queue", "traces", "workflow-history", "summary"].includes(segs[0])) ||
      (segs.length === 2 && segs[0] === "action") ||
      what === "workflow/replay";
    if (!known) throw notFoundRoute(method, path);
    checkInspectorAuth(this.settings.inspector, req.headers.authorization);
    const runtime = this.runtime();
    this.requireActor(runtime, actorId);
    const inspector = runtime.inspector(actorId);
    const params = new URLSearchParams(search);
    const reply = (value: unknown) => this.send(res, 200, value, encoding, cors);

    if (what === "state" && method === "GET") return reply({ state: await inspector.getState() });
    if (what === "state" && method === "PATCH") {
      const data = decodeGenericBody(await this.readBody(req), encoding);
      if (!isPlainObject(data) || !("state" in data)) throw badRequest("the body must be { state: ... }");
      await inspector.setState(data.state);
      return reply({ ok: true });
    }
    if (what === "connections" && method === "GET") return reply({ connections: await inspector.connections() });
    if (what === "rpcs" && method === "GET") return reply({ rpcs: await inspector.rpcs() });
    if (segs[0] === "action" && segs.length === 2 && method === "POST") {
      const name = decodeSegment(segs[1]);
      const body = await this.readBody(req);
      let args: unknown[] = [];
      if (body.length > 0) {
        const data = decodeGenericBody(body, encoding, "request.invalid");
        if (!isPlainObject(data)) throw invalidRequest("the body must be { args?: [...] }");
        if (data.args !== undefined) {
          if (!Array.isArray(data.args)) throw invalidRequest("args must be an array");
          args = data.args;
        }
      }
      return reply({ output: await runtime.action(actorId, name, args, { source: "inspector" }) });
    }
    if (what === "queue" && method === "GET") return reply(await inspector.queue(parseIntegerParam(params, "limit", 50)));
    if (what === "traces" && method === "GET") {
      const startMs = parseIntegerParam(params, "startMs", 0);
      const endMs = parseIntegerParam(params, "endMs", Date.now());
      const limit = parseIntegerParam(params, "limit", 1000);
      // queryTraces clamps the limit to MAX_TRACE_LIMIT and says so (`clamped`).
      const result = await inspector.traces({ startMs, endMs, limit });
      return reply({ otlp: result.otlp, clamped: result.clamped });
    }
    if (what === "workflow-history" && method === "GET") return reply(await inspector.workflowHistory());
    if (what === "workflow/replay" && method === "POST") {
      const body = await this.readBody(req);
      let entryId: string | undefined;
      if (body.length > 0) {
        const data = decodeGenericBody(body, encoding);
        if (data !== null && !isPlainObject(data)) throw badRequest("the body must be { entryId?: string }");
        const id = data?.entryId;
        if (id !== undefined && id !== null && typeof id !== "string") throw badRequest("entryId must be a string");
        entryId = id ?? undefined;
      }
      return reply(await inspector.replay(entryId));
    }
    if (what === "summary" && method === "GET") return reply(await inspector.summary());
    throw notFoundRoute(method, path);
  }
}

function nameNotFound(name: string): AgentError {
  return new AgentError("actor.name_not_found", `no actor definition is named ${name.slice(0, 100)}`, { name: name.slice(0, 100) });
}

/**
 * WebSockets on the gateway's port (the `ws` library, no server of its own): RivetKit
 * connections at `/gateway/{id}/connect` and raw sockets for an actor's `onWebSocket` at
 * `/gateway/{id}/websocket/{path}`. The server checks Host, Origin and the token
 * (daemon/http/access.ts) before an upgrade reaches this module; an upgrade refused here gets
 * a plain HTTP error answer and nothing of the actor runs.
 *
 * A connection: the client offers the protocols `rivet`, `rivet_encoding.<json|cbor|bare>` and
 * optionally `rivet_conn_params.<url-encoded JSON>`. The actor is woken and its connect hooks
 * run; then Init, and each ActionRequest is answered with ActionResponse or Error (conn-codec.ts).
 *
 * Both kinds are bounded (bounded-socket.ts): a client that does not read what it is sent is
 * closed with 1013 once 8 MiB wait for it, and one that sends faster than the actor takes its
 * messages is no longer read from until the actor catches up.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";
import { AgentError } from "../../shared/errors.js";
import { BoundedSocket } from "./bounded-socket.js";
import type { ActorConn, ActorRuntime } from "../actors/api.js";
import type { Logger } from "../log/logger.js";
import { decodeToServer, encodeToClient, type ToClient } from "./conn-codec.js";
import { requireActor } from "./gateway-request.js";
import type { Encoding } from "../http/encoding.js";
import { classifyError, encodeErrorBody } from "./http-error.js";
import { decodeSegment, parseActorIdSegment } from "../http/path.js";
import { notFoundRoute } from "../http/request-errors.js";

const ENCODING_PREFIX = "rivet_encoding.";
const PARAMS_PREFIX = "rivet_conn_params.";
/** Messages a client may send before its connection is set up; more is a misbehaving client. */
const MAX_EARLY_MESSAGES = 64;

export interface UpgradeTarget {
  kind: "connect" | "websocket";
  actorId: string;
  /** The actor's path for a raw socket (with the query). */
  rest: string;
}

/** Which WebSocket route a path names, or a 404. */
export function upgradeTarget(path: string, search: string): UpgradeTarget {
  const segs = path.split("/");
  if (segs[1] === "gateway" && segs.length >= 4 && segs[2] !== "") {
    const { actorId } = parseActorIdSegment(segs[2]);
    if (segs[3] === "connect" && segs.length === 4) return { kind: "connect", actorId, rest: "" };
    if (segs[3] === "websocket") return { kind: "websocket", actorId, rest: `/${segs.slice(4).join("/")}${search}` };
  }
  throw notFoundRoute("GET", path);
}

function protocols(req: IncomingMessage): string[] {
  const raw = req.headers["sec-websocket-protocol"];
  return typeof raw === "string" ? raw.split(",").map((p) => p.trim()) : [];
}

function connEncoding(list: string[]): Encoding {
  const p = list.find((x) => x.startsWith(ENCODING_PREFIX));
  const e = p ? p.slice(ENCODING_PREFIX.length) : "json";
  if (e === "json" || e === "cbor" || e === "bare") return e;
  throw new AgentError("encoding.invalid", `unknown encoding "${e.slice(0, 40)}"; use json, cbor or bare`);
}

function connParams(list: string[], req: IncomingMessage): unknown {
  const p = list.find((x) => x.startsWith(PARAMS_PREFIX));
  const raw = p ? decodeSegment(p.slice(PARAMS_PREFIX.length)) : req.headers["x-rivet-conn-params"];
  if (typeof raw !== "string") return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new AgentError("request.invalid", "the connection params are not valid JSON");
  }
}

/** The upgrade as a fetch `Request` (`c.request` in the connection's hooks and onWebSocket). */
function upgradeRequest(req: IncomingMessage, url: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    try {
      if (typeof v === "string") headers.set(k, v);
    } catch {}
  }
  return new Request(url, { headers });
}

export class GatewaySockets {
  /**
   * Built on the first upgrade: the `ws` library, with the https/tls modules it loads, was a
   * tenth of a daemon start's CPU, and most daemons never see a WebSocket.
   */
  private wss: WebSocketServer | null = null;
  private loading: Promise<WebSocketServer> | null = null;

  constructor(
    private readonly runtime: () => ActorRuntime,
    private readonly log: Logger,
  ) {}

  /** Check the route and the actor, then take the socket over. Throws (before the upgrade) when refused. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: UpgradeTarget, trusted: boolean): void {
    const runtime = this.runtime();
    requireActor(runtime, target.actorId, trusted);
    if (target.kind === "connect") {
      const list = protocols(req);
      const encoding = connEncoding(list);
      const params = connParams(list, req);
      if (!runtime.connect) throw notFoundRoute("GET", req.url ?? "");
      const request = upgradeRequest(req, `http://actor${req.url ?? "/"}`);
      this.handleUpgrade(req, socket, head, (ws) => void this.serveConnection(runtime, target.actorId, ws, encoding, params, request));
      return;
    }
    if (!runtime.openWebSocket) throw notFoundRoute("GET", req.url ?? "");
    const params = connParams(protocols(req), req);
    const request = upgradeRequest(req, `http://actor${target.rest === "/" ? "/" : target.rest}`);
    this.handleUpgrade(req, socket, head, (ws) => {
      runtime.openWebSocket!(target.actorId, request, new BoundedSocket(ws), params).catch((error) => {
        const c = classifyError(error);
        if (c.internal) this.log.error("onWebSocket failed", { actor_id: target.actorId, error });
        ws.close(1011, `${c.group}.${c.code}`.slice(0, 120));
      });
    });
  }

  /** The upgrade itself, once the checks passed (after loading `ws` the first time). */
  private handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, then: (ws: WebSocket) => void): void {
    if (this.wss) {
      this.wss.handleUpgrade(req, socket, head, then);
      return;
    }
    this.loading ??= import("ws").then(({ WebSocketServer }) => {
      this.wss = new WebSocketServer({
        noServer: true,
        maxPayload: 8 * 1024 * 1024,
        // The client offers `rivet` plus its settings; a raw socket's client may offer anything.
        handleProtocols: (offered) => (offered.has("rivet") ? "rivet" : (offered.values().next().value ?? false)),
      });
      return this.wss;
    });
    this.loading.then(
      (wss) => {
        // The client may have gone while the library loaded.
        if (!socket.destroyed) wss.handleUpgrade(req, socket, head, then);
      },
      (error) => GatewaySockets.refuse(socket, error, this.log),
    );
  }

  private async serveConnection(runtime: ActorRuntime, actorId: string, ws: WebSocket, encoding: Encoding, params: unknown, request: Request): Promise<void> {
    const bounded = new BoundedSocket(ws);
    const send = (m: ToClient) => {
      if (bounded.readyState === ws.OPEN) bounded.send(encodeToClient(m, encoding));
    };
    let conn: ActorConn | null = null;
    let closed = false;
    const early: Array<[Buffer, boolean]> = [];
    const onMessage = (data: Buffer, isBinary: boolean) => {
      let m: ReturnType<typeof decodeToServer>;
      try {
        m = decodeToServer(data, isBinary, encoding);
      } catch (error) {
        this.sendError(send, error, null);
        return;
      }
      if (m.tag === "SubscriptionRequest") {
        if (m.subscribe) conn!.subscriptions.add(m.eventName);
        else conn!.subscriptions.delete(m.eventName);
        return;
      }
      const id = m.id;
      // Actions in flight count against the socket's inbound limit: a flood pauses reading.
      bounded.hold(data.length);
      runtime
        .action(actorId, m.name, m.args, { source: "gateway", conn: conn!, connParams: params })
        .then(
          (output) => send({ tag: "ActionResponse", id, output }),
          (error) => this.sendError(send, error, id),
        )
        .finally(() => bounded.release(data.length));
    };
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (conn) onMessage(data, isBinary);
      else if (early.length < MAX_EARLY_MESSAGES) early.push([data, isBinary]);
      else ws.close(1008, "too many messages before the connection was ready");
    });
    bounded.on("close", () => {
      closed = true;
      if (conn) void runtime.disconnect?.(actorId, conn).catch((error) => this.log.error("disconnect failed", { actor_id: actorId, error }));
    });
    ws.on("error", () => undefined);
    try {
      conn = await runtime.connect!(
        actorId,
        params,
        {
          event: (name, args) => send({ tag: "Event", name, args }),
          close: (code, reason) => bounded.close(code, reason.slice(0, 120)),
        },
        request,
      );
    } catch (error) {
      this.sendError(send, error, null);
      const c = classifyError(error);
      ws.close(1011, `${c.group}.${c.code}`.slice(0, 120));
      return;
    }
    if (closed) {
      await runtime.disconnect?.(actorId, conn).catch(() => undefined);
      return;
    }
    send({ tag: "Init", actorId, connectionId: conn.id });
    for (const [data, isBinary] of early.splice(0)) onMessage(data, isBinary);
  }

  private sendError(send: (m: ToClient) => void, error: unknown, actionId: bigint | null): void {
    const c = classifyError(error);
    if (c.internal) this.log.error("connection call failed", { error });
    send({ tag: "Error", group: c.group, code: c.code, message: c.message, ...(c.metadata !== undefined ? { metadata: c.metadata } : {}), actionId });
  }

  /** Close every socket (the daemon stops): RivetKit clients reconnect by themselves. */
  closeAll(): void {
    for (const ws of this.wss?.clients ?? []) ws.close(1001, "daemon.stopping");
  }

  /** A refused upgrade: an HTTP answer on the raw socket, then close it. */
  static refuse(socket: Duplex, error: unknown, log: Logger): void {
    const c = classifyError(error);
    if (c.internal) log.error("websocket upgrade failed", { error });
    const { body, contentType } = encodeErrorBody(c, "json");
    const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
    if (socket.writable) {
      socket.end(
        `HTTP/1.1 ${c.status} ${c.status === 403 ? "Forbidden" : c.status === 401 ? "Unauthorized" : c.status === 404 ? "Not Found" : "Bad Request"}\r\ncontent-type: ${contentType}\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
      );
      setTimeout(() => socket.destroy(), 1000).unref();
    } else socket.destroy();
  }
}

/**
 * Routing: a hand-written split of the path on `/` (no framework), so the hot path
 * (POST /gateway/{id}/action/{name}) costs a few string operations. Picks the handler for the
 * management API, the service's `/metadata` and `/health`, and the gateway to one actor,
 * addressed either by path (`/gateway/{id}/...`) or by headers (`x-rivet-target: actor` +
 * `x-rivet-actor`, the whole path then being relative to the actor).
 */
import { actorHealth, callAction, sendToQueue } from "./actor-routes.js";
import type { GatewayContext, GatewayRequest } from "./gateway-request.js";
import { inspectorRoute } from "./inspector-routes.js";
import { createActor, destroyActor, getKvValue, listActorNames, listActors, sendMetadata, sendServiceHealth } from "./management-routes.js";
import { decodeSegment, parseActorIdSegment } from "../http/path.js";
import { withBody } from "../http/request-body.js";
import { badRequest, notFoundRoute } from "../http/request-errors.js";
import { forwardRequest } from "./request-forwarding.js";

/** Returns a promise only for asynchronous routes. */
export function route(ctx: GatewayContext, call: GatewayRequest): Promise<void> | void {
  const { req, res, method, path, search, encoding, cors, trusted } = call;
  // Header routing: the whole path is relative to the actor.
  const target = req.headers["x-rivet-target"];
  if (target !== undefined) {
    if (target !== "actor") throw badRequest(`unknown x-rivet-target ${String(target).slice(0, 40)}`);
    const actorHeader = req.headers["x-rivet-actor"];
    if (typeof actorHeader !== "string" || actorHeader === "") throw badRequest("x-rivet-target: actor needs an x-rivet-actor header");
    const segs = path.split("/");
    return routeToActor(ctx, call, parseActorIdSegment(encodeURIComponent(actorHeader)).actorId, segs, 1);
  }

  const segs = path.split("/");
  const first = segs[1];
  if (first === "gateway") {
    if (segs.length < 4 || segs[2] === "") throw notFoundRoute(method, path);
    const { actorId } = parseActorIdSegment(segs[2]);
    return routeToActor(ctx, call, actorId, segs, 3);
  }
  // Tolerate one trailing slash outside the gateway (whose forwarded path is the actor's).
  if (segs.length > 2 && segs[segs.length - 1] === "") segs.pop();
  if (first === "actors") {
    if (segs.length === 2) {
      if (method === "GET") return listActors(ctx, res, search, encoding, cors, trusted);
      if (method === "PUT" || method === "POST") return withBody(req, ctx.maxBodyBytes, (body) => createActor(ctx, call, body));
      throw notFoundRoute(method, path);
    }
    if (segs.length === 3 && segs[2] === "names" && method === "GET") return listActorNames(ctx, res, search, encoding, cors, trusted);
    if (segs.length === 3 && method === "DELETE") return destroyActor(ctx, res, decodeSegment(segs[2]), encoding, cors, trusted);
    if (segs.length === 6 && segs[3] === "kv" && segs[4] === "keys" && method === "GET") {
      return getKvValue(ctx, res, decodeSegment(segs[2]), decodeSegment(segs[5]), encoding, cors, trusted);
    }
    throw notFoundRoute(method, path);
  }
  if (first === "metadata" && segs.length === 2 && (method === "GET" || method === "HEAD")) {
    return sendMetadata(ctx, res, encoding, cors, trusted);
  }
  if (first === "health" && segs.length === 2 && (method === "GET" || method === "HEAD")) {
    return sendServiceHealth(res, encoding, cors);
  }
  throw notFoundRoute(method, path);
}

/** `segs[at]` is the first segment relative to the actor (`action`, `request`, ...). */
function routeToActor(ctx: GatewayContext, call: GatewayRequest, actorId: string, segs: string[], at: number): Promise<void> | void {
  const { req, res, method, path, search, cors, trusted } = call;
  const kind = segs[at];
  const rest = segs.length - at;
  if (kind === "action" && rest === 2 && method === "POST") {
    const name = decodeSegment(segs[at + 1]);
    if (name === "") throw notFoundRoute(method, path);
    return withBody(req, ctx.maxBodyBytes, (body) => callAction(ctx, call, actorId, name, body));
  }
  // `request` alone forwards the root path `/`.
  if (kind === "request" && rest >= 1) {
    return forwardRequest(ctx, req, res, actorId, segs.slice(at + 1).join("/"), search, cors, trusted);
  }
  if (kind === "health" && rest === 1 && (method === "GET" || method === "HEAD")) {
    return actorHealth(ctx, res, actorId, cors, trusted);
  }
  if (kind === "queue" && rest === 2 && method === "POST") {
    const name = decodeSegment(segs[at + 1]);
    if (name === "") throw notFoundRoute(method, path);
    return withBody(req, ctx.maxBodyBytes, (body) => sendToQueue(ctx, call, actorId, name, body));
  }
  if (kind === "inspector" && rest >= 2) {
    return inspectorRoute(ctx, call, actorId, segs.slice(at + 1));
  }
  throw notFoundRoute(method, path);
}

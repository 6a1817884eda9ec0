/**
 * The gateway to one actor: `health`, `action/{name}` (the hot path: one decode, the runtime
 * call, one encode) and `queue/{name}`. Request forwarding is in request-forwarding.ts, the
 * inspector in inspector-routes.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeActionRequest, decodeQueueSendRequest, encodeActionResponse, encodeQueueSendResponse } from "./bare.js";
import { requireActor, type GatewayContext, type GatewayRequest } from "./gateway-request.js";
import { CONTENT_TYPE, cborDecodeStrict, cborEncodeValue, jsonParse, jsonStringifyCompat, type Encoding } from "../http/encoding.js";
import { invalidRequest } from "../http/request-errors.js";
import { isPlainObject, readConnParams } from "./request-values.js";
import { sendValue, writeRaw, type HeaderMap } from "../http/response.js";

/** `GET /gateway/{id}/health`: wakes the actor, answers `ok`. */
export async function actorHealth(ctx: GatewayContext, res: ServerResponse, actorId: string, cors: HeaderMap | null, trusted: boolean): Promise<void> {
  const runtime = ctx.runtime();
  requireActor(runtime, actorId, trusted);
  await runtime.ensureAwake(actorId);
  writeRaw(res, 200, "ok", "text/plain; charset=utf-8", cors);
}

function decodeActionArgs(body: Buffer, encoding: Encoding): unknown[] {
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

/** The HTTP request of a stateless call as a fetch `Request` (headers only: the body was the call's arguments). */
function callRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    try {
      if (typeof v === "string") headers.set(k, v);
      else if (Array.isArray(v)) for (const one of v) headers.append(k, one);
    } catch {}
  }
  return new Request(`http://actor${req.url ?? "/"}`, { method: req.method ?? "POST", headers });
}

/** `POST /gateway/{id}/action/{name}`. */
export async function callAction(ctx: GatewayContext, call: GatewayRequest, actorId: string, name: string, body: Buffer): Promise<void> {
  const { req, res, encoding, cors, trusted } = call;
  const args = decodeActionArgs(body, encoding);
  const connParams = readConnParams(req);
  const runtime = ctx.runtime();
  requireActor(runtime, actorId, trusted);
  // The request is made only when the actor has connection hooks (they see it as `c.request`).
  const request = () => callRequest(req);
  const output = await runtime.action(
    actorId,
    name,
    args,
    connParams === undefined ? { source: "gateway", request } : { source: "gateway", connParams, request },
  );
  if (encoding === "json") {
    writeRaw(res, 200, `{"output":${jsonStringifyCompat(output)}}`, CONTENT_TYPE.json, cors);
  } else if (encoding === "cbor") {
    writeRaw(res, 200, cborEncodeValue({ output }), CONTENT_TYPE.cbor, cors);
  } else {
    writeRaw(res, 200, encodeActionResponse(cborEncodeValue(output)), CONTENT_TYPE.bare, cors);
  }
}

/**
 * `POST /gateway/{id}/queue/{name}`: enqueues a message, optionally waiting for its reply
 * (the wait is capped at 24 h).
 */
export async function sendToQueue(ctx: GatewayContext, call: GatewayRequest, actorId: string, name: string, body: Buffer): Promise<void> {
  const { res, encoding, cors, trusted } = call;
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
  const runtime = ctx.runtime();
  requireActor(runtime, actorId, trusted);
  const result = await runtime.enqueue(actorId, name, message, timeoutMs === undefined ? { wait } : { wait, timeoutMs });
  if (encoding === "bare") {
    const reply = result.response === undefined ? null : cborEncodeValue(result.response);
    writeRaw(res, 200, encodeQueueSendResponse(result.status, reply), CONTENT_TYPE.bare, cors);
    return;
  }
  sendValue(res, 200, result.response === undefined ? { status: result.status } : { status: result.status, response: result.response }, encoding, cors);
}

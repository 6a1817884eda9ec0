/**
 * The inspector (`/gateway/{id}/inspector/...`): an actor's state, connections, RPCs, queue,
 * traces and workflow history, behind the inspector token (auth.ts).
 */
import { checkInspectorAuth } from "./auth.js";
import { requireActor, type GatewayContext, type GatewayRequest } from "./gateway-request.js";
import { decodeGenericBody } from "../http/encoding.js";
import { decodeSegment } from "../http/path.js";
import { readBody } from "../http/request-body.js";
import { badRequest, invalidRequest, notFoundRoute } from "../http/request-errors.js";
import { isPlainObject, parseIntegerParam } from "./request-values.js";
import { sendValue } from "../http/response.js";

const SINGLE_SEGMENT_VIEWS = ["state", "connections", "rpcs", "queue", "traces", "workflow-history", "summary"];

/** `segs` are the path segments after `inspector/`. */
export async function inspectorRoute(ctx: GatewayContext, call: GatewayRequest, actorId: string, segs: string[]): Promise<void> {
  const { req, res, method, path, search, encoding, cors, trusted } = call;
  if (segs.length > 1 && segs[segs.length - 1] === "") segs = segs.slice(0, -1);
  const what = segs.join("/");
  const known = (segs.length === 1 && SINGLE_SEGMENT_VIEWS.includes(segs[0])) || (segs.length === 2 && segs[0] === "action") || what === "workflow/replay";
  if (!known) throw notFoundRoute(method, path);
  checkInspectorAuth(ctx.inspectorAuth, req.headers.authorization);
  const runtime = ctx.runtime();
  requireActor(runtime, actorId, trusted);
  const inspector = runtime.inspector(actorId);
  const params = new URLSearchParams(search);
  const reply = (value: unknown) => sendValue(res, 200, value, encoding, cors);

  if (what === "state" && method === "GET") {
    // As RivetKit's: `isStateEnabled`, and no state when it is not.
    const isStateEnabled = await inspector.isStateEnabled();
    return reply(isStateEnabled ? { state: await inspector.getState(), isStateEnabled } : { isStateEnabled });
  }
  if (what === "state" && method === "PATCH") {
    const data = decodeGenericBody(await readBody(req, ctx.maxBodyBytes), encoding);
    if (!isPlainObject(data) || !("state" in data)) throw badRequest("the body must be { state: ... }");
    await inspector.setState(data.state);
    return reply({ ok: true });
  }
  if (what === "connections" && method === "GET") return reply({ connections: await inspector.connections() });
  if (what === "rpcs" && method === "GET") return reply({ rpcs: await inspector.rpcs() });
  if (segs[0] === "action" && segs.length === 2 && method === "POST") {
    const name = decodeSegment(segs[1]);
    const body = await readBody(req, ctx.maxBodyBytes);
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
    const body = await readBody(req, ctx.maxBodyBytes);
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

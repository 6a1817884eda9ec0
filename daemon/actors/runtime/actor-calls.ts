/**
 * One call into an awake actor: an action or an onRequest. The call is counted in flight (idle
 * sleep waits for it), runs within its time limit, persists the state it changed before it
 * answers, and leaves a span. This is the hot path: keep it free of extra awaits and copies.
 */
import { AgentError } from "../../../shared/errors.js";
import type { Logger } from "../../log/logger.js";
import { withTimeout } from "./call-timeout.js";
import { toCallerError } from "../errors.js";
import type { ActorInstance } from "../instance/instance.js";
import type { InvokeOptions } from "../types.js";

export async function invokeAction(inst: ActorInstance, name: string, args: unknown[], options: InvokeOptions | undefined, logger: Logger): Promise<unknown> {
  const actions = inst.def.actions;
  const fn = Object.hasOwn(actions, name) ? actions[name] : undefined;
  if (typeof fn !== "function") throw new AgentError("action.not_found", `actor ${inst.record.name} has no action ${name}`, { action: name });
  if (args !== undefined && !Array.isArray(args)) throw new AgentError("api.bad_request", "action args must be an array");
  const seq = inst.enter(options?.source ?? "rpc", { action: name, ...(options?.connParams !== undefined ? { params: options.connParams } : {}) });
  const start = Date.now();
  let failed: unknown;
  try {
    // Each call its own context (its own queue guard, as RivetKit's), with `c.conn` over a connection.
    const c = inst.connContext(options?.conn?.view);
    let result = fn(c, ...(args ?? []));
    if (result !== null && typeof result === "object" && typeof (result as Promise<unknown>).then === "function") {
      result = await withTimeout(result as Promise<unknown>, options?.timeoutMs ?? inst.actionTimeout, name, options?.signal);
    }
    await inst.persist(false);
    return result;
  } catch (error) {
    failed = error;
    await inst.persist(false).catch(() => undefined);
    throw toCallerError(error, logger, { actor_id: inst.id, action: name });
  } finally {
    inst.leave(seq);
    inst.traces.record("action", `action ${name}`, start, Date.now(), failed, options?.source ? { "call.source": options.source } : undefined);
  }
}

export async function invokeRequest(inst: ActorInstance, request: Request, options: InvokeOptions | undefined, logger: Logger): Promise<Response> {
  const handler = inst.def.onRequest;
  if (!handler) throw new AgentError("handler.request_not_defined", `actor ${inst.record.name} has no onRequest handler`);
  const seq = inst.enter(options?.source ?? "gateway", { request: `${request.method} ${new URL(request.url).pathname}` });
  const start = Date.now();
  let failed: unknown;
  try {
    // RivetKit's RequestContext: `c.request`, and `c.conn` (the request's connection, runtime.ts `asConnection`).
    const c = inst.connContext(options?.conn?.view, request);
    const res = await withTimeout(Promise.resolve(handler(c, request)), options?.timeoutMs ?? inst.actionTimeout, "onRequest", options?.signal);
    await inst.persist(false);
    if (!(res instanceof Response)) throw new Error("onRequest did not return a Response");
    return res;
  } catch (error) {
    failed = error;
    await inst.persist(false).catch(() => undefined);
    throw toCallerError(error, logger, { actor_id: inst.id, handler: "onRequest" });
  } finally {
    inst.leave(seq);
    inst.traces.record("request", `request ${request.method} ${new URL(request.url).pathname}`, start, Date.now(), failed);
  }
}

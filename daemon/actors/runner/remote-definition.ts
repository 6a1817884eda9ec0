/**
 * A user actor's definition as the daemon holds it: the same shape as any definition, each
 * member a stub that runs the real one in the module's runner thread (module-runner.ts). The
 * instance (instance/instance.ts) treats it like any other, plus `attach`/`detach` around its
 * life and the state the worker sends back with every answer.
 */
import type { ActorContext, ActorDefinition } from "../types.js";
import type { ModuleRunner } from "./module-runner.js";
import type { ExportShape, WireRequest, WireRequestHead, WireResponse } from "./protocol.js";

/** Marks a definition whose code runs in a runner; the value is the runner. */
export const REMOTE = Symbol("remote actor definition");

export type RemoteDefinition = ActorDefinition & { [REMOTE]: ModuleRunner };

export function remoteOf(def: ActorDefinition): ModuleRunner | undefined {
  return (def as Partial<RemoteDefinition>)[REMOTE];
}

/** Whether the module's own definition has connection hooks (its stubs always do); undefined when not remote. */
const CONN_HOOKS = Symbol("user connection hooks");
export function remoteConnHooks(def: ActorDefinition): boolean | undefined {
  return (def as { [CONN_HOOKS]?: boolean })[CONN_HOOKS];
}

/** `c.request` and `c.conn` of a connection context (instance.ts `connContext`), as they cross to the worker. */
function connFields(c: ActorContext): { request?: WireRequestHead; conn?: string } {
  const out: { request?: WireRequestHead; conn?: string } = {};
  const request = Object.hasOwn(c, "request") ? (c as { request?: Request }).request : undefined;
  if (request) out.request = { method: request.method, url: request.url, headers: [...request.headers.entries()] };
  if (Object.hasOwn(c, "conn") && c.conn) out.conn = c.conn.id;
  return out;
}

async function toWireRequest(request: Request): Promise<{ value: WireRequest; transfer: ArrayBuffer[] }> {
  const body = request.body ? await request.arrayBuffer() : null;
  return { value: { method: request.method, url: request.url, headers: [...request.headers.entries()], body }, transfer: body ? [body] : [] };
}

function fromWireResponse(runner: ModuleRunner, r: WireResponse): Response {
  const body = r.stream === null ? null : runner.body(r.stream);
  const nullBody = r.status === 204 || r.status === 205 || r.status === 304 || r.status === 101;
  if (nullBody) void body?.cancel();
  return new Response(nullBody ? null : body, { status: r.status, statusText: r.statusText, headers: r.headers });
}

export function remoteDefinition(runner: ModuleRunner, shape: ExportShape): RemoteDefinition {
  const has = (hook: string) => shape.hooks.includes(hook);
  // Every call carries the queue's size, so `c.queue.size` reads it synchronously in the worker.
  const hook =
    (name: string) =>
    (c: ActorContext, ...args: unknown[]) =>
      runner.call(c.actorId, "hook", { hook: name, args, queueSize: c.queue.size, ...connFields(c) });
  const actions: Record<string, (c: any, ...args: unknown[]) => unknown> = {};
  // Over a connection (`c.conn`), the worker gives the action its `c.conn` too.
  for (const name of shape.actions)
    actions[name] = (c, ...args) =>
      c.conn === undefined
        ? runner.call(c.actorId, "action", { name, args, queueSize: c.queue.size })
        : runner.call(c.actorId, "conn", { kind: "action", conn: c.conn.id, name, args, queueSize: c.queue.size });
  const def: RemoteDefinition = { actions, [REMOTE]: runner };
  (def as { [CONN_HOOKS]?: boolean })[CONN_HOOKS] =
    shape.connState !== undefined || ["onBeforeConnect", "createConnState", "onConnect", "onDisconnect"].some(has);
  if (shape.options) def.options = shape.options;
  if (shape.state !== undefined) def.state = shape.state;
  if (has("createState")) def.createState = hook("createState") as ActorDefinition["createState"];
  // Always: it also copies a static `vars` in the worker.
  def.createVars = hook("createVars") as ActorDefinition["createVars"];
  for (const name of ["onCreate", "onWake", "onSleep", "onDestroy", "run"] as const) if (has(name)) (def as any)[name] = hook(name);
  if (shape.connState !== undefined) def.connState = shape.connState;
  if (has("onBeforeConnect")) def.onBeforeConnect = hook("onBeforeConnect") as ActorDefinition["onBeforeConnect"];
  if (has("createConnState")) def.createConnState = hook("createConnState") as ActorDefinition["createConnState"];
  // Always: the worker keeps `c.conns` too.
  def.onConnect = async (c, conn) => {
    await runner.call(c.actorId, "conn", { kind: "open", conn: conn.id, params: conn.params, state: conn.state });
  };
  def.onDisconnect = async (c, conn) => {
    await runner.call(c.actorId, "conn", { kind: "close", conn: conn.id });
  };
  if (has("onWebSocket")) def.onWebSocket = (c, websocket, options) => runner.openSocket(c.actorId, websocket, options.request, connFields(c).conn);
  if (has("onRequest")) {
    def.onRequest = async (c, request) => {
      const { value, transfer } = await toWireRequest(request);
      const conn = connFields(c).conn;
      if (conn !== undefined) value.conn = conn;
      return fromWireResponse(runner, await runner.call(c.actorId, "request", value, transfer));
    };
  }
  if (has("workflow")) {
    def.workflow = async (w) => {
      const h = runner.handle(w.actorId, w);
      try {
        return await runner.call(w.actorId, "workflow", { w: h });
      } finally {
        runner.dropHandle(w.actorId, h.$h);
      }
    };
  }
  return def;
}

/**
 * An in-memory stand-in for the ActorRuntime, only for the gateway's wire-format unit tests
 * (the integration tests use the real daemon).
 */
import { AgentError } from "../../shared/errors.js";
import type { ActorRecord, ActorRuntime } from "../../daemon/actors/types.js";

export function fakeRuntime(): ActorRuntime & { states: Map<string, any>; queue: unknown[] } {
  const records = new Map<string, ActorRecord>();
  const states = new Map<string, any>();
  const kv = new Map<string, Uint8Array>();
  const queue: unknown[] = [];
  let n = 0;
  const definitions = ["counter"];
  const make = (req: any): ActorRecord => {
    const id = `fake${++n}`;
    const now = Date.now();
    const rec: ActorRecord = {
      actor_id: id,
      name: req.name,
      key: req.key ?? `rand${n}`,
      namespace_id: req.namespace,
      runner_name_selector: req.runner_name_selector,
      crash_policy: req.crash_policy,
      create_ts: now,
      connectable_ts: now,
      destroy_ts: null,
      sleep_ts: null,
      start_ts: now,
      error: null,
    };
    records.set(id, rec);
    states.set(id, { count: typeof req.input?.start === "number" ? req.input.start : 0, input: req.input });
    kv.set(`${id}:hello`, new TextEncoder().encode("world"));
    return rec;
  };
  const find = (ns: string, name: string, key: string) =>
    [...records.values()].find((r) => r.namespace_id === ns && r.name === name && r.key === key && !r.destroy_ts);
  const must = (id: string) => {
    const r = records.get(id);
    if (!r) throw new AgentError("actor.not_found", `no actor ${id}`);
    return r;
  };
  const rt: any = {
    states,
    queue,
    registerDefinition() {},
    unregisterDefinition() {},
    definitionNames: () => definitions,
    hasDefinition: (n: string) => definitions.includes(n),
    moduleStatuses: () => [],
    async getOrCreate(req: any) {
      const found = find(req.namespace, req.name, req.key);
      if (found) return { actor: found, created: false };
      return { actor: make(req), created: true };
    },
    async create(req: any) {
      if (req.key != null && find(req.namespace, req.name, req.key))
        throw new AgentError("actor.duplicate_key", "duplicate", { existing_actor_id: find(req.namespace, req.name, req.key)!.actor_id });
      return make(req);
    },
    list(q: any) {
      const all = [...records.values()].filter((r) => r.namespace_id === q.namespace && !r.destroy_ts);
      if (q.actor_ids) return all.filter((r) => q.actor_ids.includes(r.actor_id));
      return all.filter((r) => r.name === q.name && (q.key === undefined || r.key === q.key)).reverse();
    },
    get: (id: string) => records.get(id),
    async destroy(id: string) {
      const r = must(id);
      r.destroy_ts = Date.now();
      return r;
    },
    async kvGet(id: string, key: Uint8Array) {
      must(id);
      return kv.get(`${id}:${new TextDecoder().decode(key)}`) ?? null;
    },
    async ensureAwake(id: string) {
      must(id);
    },
    async action(id: string, name: string, args: unknown[]) {
      must(id);
      const s = states.get(id);
      if (name === "increment") return (s.count += (args[0] as number) ?? 1);
      if (name === "get") return s.count;
      if (name === "input") return s.input ?? null;
      if (name === "echo") return args;
      if (name === "fail") throw new AgentError("user.bad_thing", "it failed", { why: "because", n: 3 });
      if (name === "crash") throw new Error("secret detail");
      throw new AgentError("action.not_found", `no action ${name}`);
    },
    async request(id: string, request: Request) {
      must(id);
      const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
      return new Response(JSON.stringify({ url: request.url, method: request.method, body, header: request.headers.get("x-test") }), {
        status: 201,
        headers: { "content-type": "application/json", "x-from-actor": "yes" },
      });
    },
    async enqueue(id: string, name: string, body: unknown, options: any) {
      must(id);
      queue.push({ name, body, options });
      return options?.wait ? { status: "completed", response: { got: body }, id: queue.length } : { status: "completed", id: queue.length };
    },
    inspector(id: string) {
      return {
        getState: async () => states.get(id),
        setState: async (s: unknown) => void states.set(id, s),
        connections: async () => [],
        rpcs: async () => ["increment", "get"],
        queue: async (limit: number) => ({ size: 0, maxSize: 1000, truncated: false, messages: [], limit }),
        traces: async (q: any) => ({ otlp: { resourceSpans: [] }, clamped: false, q }),
        workflowHistory: async () => ({ history: null, isWorkflowEnabled: false }),
        replay: async () => {
          throw new AgentError("workflow.not_enabled", "no workflow");
        },
        summary: async () => ({
          state: states.get(id),
          connections: [],
          rpcs: ["increment"],
          queueSize: 0,
          isStateEnabled: true,
          isDatabaseEnabled: false,
          isWorkflowEnabled: false,
          workflowHistory: null,
        }),
      };
    },
    onChange: () => () => {},
    start: async () => {},
    stop: async () => {},
  };
  return rt;
}

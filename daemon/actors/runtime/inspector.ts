import { AgentError } from "../../../shared/errors.js";
import { hasState } from "../actor-context.js";
import type { ActorInstance } from "../instance/instance.js";
import { ACTOR_LIMITS } from "../instance/limits.js";
import { queryTraces, type TraceRing } from "../observe/traces.js";
import type { ActorInspector, ActorRecord } from "../types.js";
import { discardFrom, publicHistory } from "../workflow/history.js";

/** What the inspector needs from the runtime. */
export interface InspectorHost {
  /** The awake instance (waking a sleeping actor: an inspector call is a request). */
  awake(actorId: string): Promise<ActorInstance> | ActorInstance;
  /** The live record, or `actor.not_found`. */
  record(actorId: string): ActorRecord;
  traces(actorId: string): TraceRing | undefined;
}

/**
 * The inspector of one actor: `rpcs` lists its action names, `setState` replaces the whole state
 * and persists it before answering, `queue(limit)` returns at most `limit` messages (`truncated`
 * when there are more). Who may use it is checked before, by the gateway (gateway/auth.ts).
 */
export function createInspector(actorId: string, host: InspectorHost): ActorInspector {
  const awake = async () => host.awake(actorId);
  // Live connections, then the calls in flight.
  const connections = async () => {
    const inst = await awake();
    return [...(await inst.connectionEntries()), ...[...inst.calls.values()].map((c) => ({ id: c.id, type: c.type, details: c.details }))];
  };
  const history = async () => {
    const inst = await awake();
    const enabled = typeof inst.def.workflow === "function";
    return { history: enabled ? publicHistory(inst.workflowHost.history()) : null, isWorkflowEnabled: enabled };
  };
  return {
    async getState() {
      return (await awake()).stateValue;
    },
    async isStateEnabled() {
      return hasState((await awake()).def);
    },
    async setState(state: unknown) {
      const inst = await awake();
      try {
        JSON.stringify(state);
      } catch {
        throw new AgentError("api.bad_request", "state must be JSON");
      }
      inst.replaceState(state);
      await inst.persist(true);
    },
    connections,
    async rpcs() {
      return Object.keys((await awake()).def.actions);
    },
    async queue(limit: number) {
      const inst = await awake();
      const msgs = inst.queue.messages;
      const n = Math.max(0, Math.floor(Number.isFinite(limit) ? limit : 50));
      return {
        size: msgs.length,
        maxSize: ACTOR_LIMITS.queueMaxSize,
        truncated: msgs.length > n,
        messages: msgs.slice(0, n).map((m) => ({ id: String(m.id), name: m.name, createdAtMs: m.createdAtMs })),
      };
    },
    async traces(query) {
      const rec = host.record(actorId);
      return queryTraces(host.traces(actorId), { id: rec.actor_id, name: rec.name, key: rec.key }, query);
    },
    workflowHistory: history,
    async replay(entryId?: string) {
      const inst = await awake();
      if (typeof inst.def.workflow !== "function") throw new AgentError("workflow.not_enabled", `actor ${inst.record.name} has no workflow`);
      const h = inst.workflowHost.history();
      discardFrom(h, entryId);
      inst.workflowAbort?.abort();
      inst.workflowHost.setWakeAt(null);
      await inst.persist(true);
      // Let the aborted run settle, then run again from the history that is left.
      if (inst.workflowRun) await Promise.race([inst.workflowRun, new Promise((r) => setTimeout(r, 1000))]);
      if (inst.status === "awake") inst.startWorkflow();
      return history();
    },
    async summary() {
      const inst = await awake();
      const h = await history();
      return {
        state: inst.stateValue,
        connections: await connections(),
        rpcs: Object.keys(inst.def.actions),
        queueSize: inst.queue.size,
        isStateEnabled: hasState(inst.def),
        isDatabaseEnabled: false,
        isWorkflowEnabled: h.isWorkflowEnabled,
        workflowHistory: h.history,
      };
    },
  };
}

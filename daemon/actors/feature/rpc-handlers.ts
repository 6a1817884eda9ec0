import { AgentError } from "../../../shared/errors.js";
import { actorNotFound, forOwner } from "../errors.js";
import type { ActorRecordView } from "../../../shared/protocol/actors.js";
import type { Handlers } from "../../../shared/protocol/index.js";
import { stateName, type ActorRuntimeImpl } from "../runtime/runtime.js";
import { builtinRefused, isBuiltinActor } from "./builtin-owners.js";
import { scaffoldActor } from "./scaffold.js";
import type { ActorRecord, CrashPolicy } from "../types.js";
import type { UserModules } from "./user-modules.js";

/** The `actors.*` RPC methods: thin calls into the runtime. */
export function view(r: ActorRecord, source?: (name: string) => "builtin" | "user" | undefined): ActorRecordView {
  return {
    actor_id: r.actor_id,
    name: r.name,
    key: r.key,
    namespace_id: r.namespace_id,
    runner_name_selector: r.runner_name_selector,
    crash_policy: r.crash_policy,
    create_ts: r.create_ts,
    connectable_ts: r.connectable_ts,
    destroy_ts: r.destroy_ts,
    sleep_ts: r.sleep_ts,
    start_ts: r.start_ts,
    error: r.error ?? null,
    state: stateName(r),
    builtin: isBuiltinActor(r.name, source),
  };
}

export function actorHandlers(runtime: ActorRuntimeImpl, modules: UserModules, userActorsDir: string): Partial<Handlers> {
  const record = (id: string): ActorRecord => {
    const r = runtime.get(id);
    if (!r || r.destroy_ts !== null) throw actorNotFound(id);
    return r;
  };
  const source = (name: string) => runtime.definitionSource(name);
  const show = (r: ActorRecord) => view(r, source);
  return {
    "actors.ping": () => ({ ok: true }),
    "actors.list": ({ name, namespace }) => ({
      actors: (name === undefined ? runtime.all(namespace) : runtime.list({ namespace: namespace ?? "default", name })).map(show),
      definitions: runtime.definitionNames(),
      modules: runtime.moduleStatuses(),
    }),
    "actors.get": ({ actorId }) => show(record(actorId)),
    "actors.create": async ({ name, key, input, namespace, crash_policy }) => {
      if (input !== undefined && Buffer.byteLength(JSON.stringify(input) ?? "") > 4 * 1024 * 1024) {
        throw new AgentError("actor.input_too_large", "the input may be at most 4 MiB");
      }
      const rec = await runtime.create({
        namespace: namespace ?? "default",
        name,
        key: key ?? null,
        runner_name_selector: "default",
        crash_policy: (crash_policy ?? "restart") as CrashPolicy,
        input,
      });
      return show(runtime.get(rec.actor_id) ?? rec);
    },
    "actors.call": async ({ actorId, action, args }, call) => {
      const r = record(actorId);
      // A built-in's actions belong to its feature (a cron actor's `add` would skip the cron service's checks).
      if (isBuiltinActor(r.name, source)) throw builtinRefused(r, "called");
      try {
        return { output: await runtime.action(actorId, action, args, { source: "rpc", signal: call.signal }) };
      } catch (error) {
        throw forOwner(error, action, actorId);
      }
    },
    "actors.state": async ({ actorId }) => ({ state: await runtime.inspector(actorId).getState() }),
    "actors.destroy": async ({ actorId }) => {
      const r = record(actorId);
      // A built-in's data belongs to its feature: refused here, so no client can wipe it by mistake.
      if (isBuiltinActor(r.name, source)) throw builtinRefused(r);
      return show(await runtime.destroy(actorId));
    },
    "actors.logs": ({ actorId, limit }) => ({ lines: runtime.logs(actorId, limit) }),
    "actors.new": async ({ name, workflow }) => {
      const { file } = scaffoldActor(userActorsDir, name, Boolean(workflow));
      // Load it now so it works immediately (the watcher would pick it up a moment later).
      await modules.reload(file);
      const status = modules.list().find((s) => s.file === file);
      if (status && !status.ok) throw new AgentError("actor.module_failed", `${file} was written but failed to load: ${status.error}`, { file });
      return { file, name, actors: status?.actors ?? [] };
    },
  };
}

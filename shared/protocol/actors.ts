import { z } from "zod";
import { rpc } from "./define.js";

/** An actor record as the RPC surface shows it (the management API's record plus its named state). */
export interface ActorRecordView {
  actor_id: string;
  name: string;
  key: string;
  namespace_id: string;
  runner_name_selector: string;
  crash_policy: string;
  create_ts: number;
  connectable_ts: number | null;
  destroy_ts: number | null;
  sleep_ts: number | null;
  start_ts: number | null;
  error: unknown | null;
  /** starting | running | sleeping | crashed | destroyed */
  state: string;
}

export interface ActorModuleView {
  file: string;
  ok: boolean;
  error?: string;
  actors: string[];
  loadedAt: number;
}

export interface ActorLogLineView {
  ts: number;
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

const actorId = z.string().min(1).max(200);
const namespace = z.string().min(1).max(200).optional();

/** RPC methods of the actors group (thin calls into the actor runtime). */
export const actorsMethods = {
  "actors.ping": rpc<{ ok: true }>()(z.object({}).strict()),
  /** Live actors (all, or one name's, newest first), the loaded definitions and user module errors. */
  "actors.list": rpc<{ actors: ActorRecordView[]; definitions: string[]; modules: ActorModuleView[] }>()(
    z.object({ name: z.string().min(1).optional(), namespace, json: z.boolean().optional() }).strict(),
  ),
  "actors.get": rpc<ActorRecordView>()(z.object({ actorId, namespace }).strict()),
  "actors.create": rpc<ActorRecordView>()(
    z
      .object({
        name: z.string().min(1),
        key: z.string().optional(),
        /** Any JSON value, handed to createState/onCreate. */
        input: z.unknown().optional(),
        namespace,
        crash_policy: z.string().optional(),
      })
      .strict(),
  ),
  "actors.call": rpc<{ output: unknown }>()(z.object({ actorId, action: z.string().min(1), args: z.array(z.unknown()).default([]) }).strict()),
  "actors.state": rpc<{ state: unknown }>()(z.object({ actorId }).strict()),
  "actors.destroy": rpc<ActorRecordView>()(z.object({ actorId }).strict()),
  "actors.logs": rpc<{ lines: ActorLogLineView[] }>()(z.object({ actorId, limit: z.number().int().min(1).max(10_000).optional() }).strict()),
  /** Scaffold an example module into `$AGENT_HOME/actors/<name>.mjs` (never overwrites). */
  "actors.new": rpc<{ file: string; name: string; actors: string[] }>()(z.object({ name: z.string().min(1), workflow: z.boolean().optional() }).strict()),
};

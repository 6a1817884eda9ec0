import { z } from "zod";
import { rpc } from "./define.js";

/** What the runtime does with an actor that crashed. */
export const CRASH_POLICIES = ["restart", "sleep", "destroy"] as const;
export type CrashPolicy = (typeof CRASH_POLICIES)[number];

/**
 * The actor record of the management API (snake_case as on the wire). Timestamps are epoch ms.
 * Declared once, here; the daemon's actor runtime re-exports it (daemon/actors/types.ts).
 */
export interface ActorRecord {
  actor_id: string;
  name: string;
  /** The serialized key (parts joined by `/`, see shared/actor-key.ts). */
  key: string;
  namespace_id: string;
  runner_name_selector: string;
  crash_policy: CrashPolicy;
  datacenter?: string | null;
  create_ts: number;
  connectable_ts: number | null;
  destroy_ts: number | null;
  sleep_ts: number | null;
  start_ts: number | null;
  error: unknown | null;
}

/** An actor record as the RPC surface shows it (the management API's record plus its named state). */
export interface ActorRecordView extends ActorRecord {
  /** starting | running | sleeping | crashed | destroyed */
  state: string;
  /** One of the product's own actors (a kanban board, a cron table, a chat session): read-only here, managed by its feature's commands. */
  builtin: boolean;
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
  "actors.ping": rpc<{ ok: true }>()(() => z.object({}).strict()),
  /** Live actors (all, or one name's, newest first), the loaded definitions and user module errors. */
  "actors.list": rpc<{ actors: ActorRecordView[]; definitions: string[]; modules: ActorModuleView[] }>()(() =>
    z.object({ name: z.string().min(1).optional(), namespace }).strict(),
  ),
  "actors.get": rpc<ActorRecordView>()(() => z.object({ actorId, namespace }).strict()),
  "actors.create": rpc<ActorRecordView>()(() =>
    z
      .object({
        name: z.string().min(1),
        key: z.string().optional(),
        /** Any JSON value, handed to createState/onCreate. */
        input: z.unknown().optional(),
        namespace,
        crash_policy: z.enum(CRASH_POLICIES, { error: `crash_policy must be one of ${CRASH_POLICIES.join(", ")}` }).optional(),
      })
      .strict(),
  ),
  "actors.call": rpc<{ output: unknown }>()(() => z.object({ actorId, action: z.string().min(1), args: z.array(z.unknown()).default([]) }).strict()),
  "actors.state": rpc<{ state: unknown }>()(() => z.object({ actorId }).strict()),
  "actors.destroy": rpc<ActorRecordView>()(() => z.object({ actorId }).strict()),
  "actors.logs": rpc<{ lines: ActorLogLineView[] }>()(() => z.object({ actorId, limit: z.number().int().min(1).max(10_000).optional() }).strict()),
  /** Scaffold an example module into `$AGENT_HOME/actors/<name>.mjs` (never overwrites). */
  "actors.new": rpc<{ file: string; name: string; actors: string[] }>()(() => z.object({ name: z.string().min(1), workflow: z.boolean().optional() }).strict()),
};

/**
 * The actor file (`data/actors/<id>.json`): what one actor keeps on disk besides its KV store —
 * its record, encoded state, queue, scheduled calls and workflow history.
 */
import type { ActorRecord } from "../types.js";
import type { WorkflowHistory } from "../workflow/history.js";

export const ACTOR_FILE_KIND = "actor";
export const ACTOR_FILE_VERSION = 1;

export interface StoredMessage {
  id: number;
  name: string;
  /** Encoded (codec.ts). */
  body: string;
  createdAtMs: number;
}

export interface ScheduledCall {
  id: number;
  at: number;
  action: string;
  /** Encoded array. */
  args: string;
}

/** One file per actor: `data/actors/<id>.json`. */
export interface ActorFile {
  record: ActorRecord;
  initialized: boolean;
  /** Encoded input, kept until createState/onCreate ran. */
  input: string | null;
  /** Encoded state (codec.ts), so it is compared and written without another pass. */
  state: string | null;
  queue: { nextId: number; messages: StoredMessage[] };
  schedule: { nextId: number; calls: ScheduledCall[] };
  workflow: WorkflowHistory | null;
  /** The last step-journal line folded into this file (lines up to it are skipped on load). */
  walSeq?: number;
}

/**
 * Marks the data of an actor created in this run, whose other files (step journal, traces)
 * cannot exist yet, so opening it reads none of them. A symbol: never serialized.
 */
export const NEW_ACTOR = Symbol("new actor");

export function initialActorFile(record: ActorRecord, input: string | null): ActorFile {
  return {
    record: { ...record },
    initialized: false,
    input,
    state: null,
    queue: { nextId: 1, messages: [] },
    schedule: { nextId: 1, calls: [] },
    workflow: null,
  };
}

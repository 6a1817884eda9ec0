/**
 * The recorded history of a durable workflow: its entries (found by location: the names on the
 * path to them, with loop iterations), their metadata and encoded results. Stored in the actor
 * file and in the step journal; read by the engine (engine.ts) and the inspector.
 */
import { AgentError } from "../../../shared/errors.js";
import { decodeValue } from "../codec.js";

export type LocationSegment = number | { loop: number; iteration: number };
export type EntryKind = "step" | "sleep" | "loop" | "message" | "join" | "race";

/** One branch of a join or race: its status and, once completed, its encoded output. */
export interface BranchStatus {
  status: "pending" | "running" | "completed" | "failed" | "cancelled";
  /** Encoded output (codec.ts). */
  output?: string;
  error?: string;
}

export interface WorkflowEntry {
  id: string;
  location: LocationSegment[];
  kind: EntryKind;
  name: string;
}

export interface EntryMetadata {
  status: "pending" | "running" | "completed" | "failed";
  attempts: number;
  error: string | null;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  /** Encoded result (codec.ts). */
  result?: string;
  wakeAt?: number;
  iteration?: number;
  /** Join and race: each branch by name. */
  branches?: Record<string, BranchStatus>;
  /** Race: the branch that won, once one has. */
  winner?: string | null;
}

export interface WorkflowHistory {
  nameRegistry: string[];
  entries: WorkflowEntry[];
  entryMetadata: Record<string, EntryMetadata>;
  status: "running" | "completed" | "failed";
  output?: string;
  nextEntry: number;
}

export function emptyHistory(): WorkflowHistory {
  return { nameRegistry: [], entries: [], entryMetadata: {}, status: "running", nextEntry: 1 };
}

export const locKey = (loc: LocationSegment[]) => loc.map((s) => (typeof s === "number" ? String(s) : `${s.loop}#${s.iteration}`)).join("/");

/** The history as the inspector shows it (results decoded). */
export function publicHistory(h: WorkflowHistory | null): unknown {
  if (!h) return { nameRegistry: [], entries: [], entryMetadata: {}, status: "running" };
  const entryMetadata: Record<string, unknown> = {};
  for (const [id, m] of Object.entries(h.entryMetadata)) {
    const { result, branches, ...rest } = m;
    entryMetadata[id] = {
      ...rest,
      ...(result !== undefined ? { output: decodeValue(result) } : {}),
      ...(branches ? { branches: publicBranches(branches) } : {}),
    };
  }
  return {
    nameRegistry: h.nameRegistry,
    entries: h.entries,
    entryMetadata,
    status: h.status,
    ...(h.output !== undefined ? { output: decodeValue(h.output) } : {}),
  };
}

function publicBranches(branches: Record<string, BranchStatus>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, b] of Object.entries(branches)) {
    const { output, ...rest } = b;
    out[name] = { ...rest, ...(output !== undefined ? { output: decodeValue(output) } : {}) };
  }
  return out;
}

/** Discard the results of `entryId` and everything recorded after it (all without an id). */
export function discardFrom(h: WorkflowHistory, entryId?: string): void {
  if (entryId === undefined) {
    Object.assign(h, emptyHistory());
    return;
  }
  const at = h.entries.findIndex((e) => e.id === entryId);
  if (at < 0) throw new AgentError("workflow.entry_not_found", `no workflow entry ${entryId}`, { entryId });
  const removed = h.entries.splice(at);
  for (const e of removed) {
    delete h.entryMetadata[e.id];
    // Loops around a removed entry must run that iteration again.
    e.location.forEach((seg, i) => {
      if (typeof seg === "number") return;
      const loopKey = locKey([...e.location.slice(0, i), seg.loop]);
      const loop = h.entries.find((x) => x.kind === "loop" && locKey(x.location) === loopKey);
      const meta = loop && h.entryMetadata[loop.id];
      if (meta) {
        meta.status = "running";
        delete meta.result;
        meta.iteration = Math.min(meta.iteration ?? 0, seg.iteration);
      }
    });
    // A join or race around a removed entry must run that branch again.
    for (let i = 1; i < e.location.length; i++) {
      const seg = e.location[i];
      if (typeof seg !== "number") continue;
      const outerKey = locKey(e.location.slice(0, i));
      const outer = h.entries.find((x) => (x.kind === "join" || x.kind === "race") && locKey(x.location) === outerKey);
      const meta = outer && h.entryMetadata[outer.id];
      const branch = meta?.branches?.[h.nameRegistry[seg] ?? ""];
      if (!meta || !branch) continue;
      meta.status = "running";
      delete meta.result;
      // A race starts over with every branch; a join re-runs only that one.
      for (const b of outer.kind === "race" ? Object.values(meta.branches ?? {}) : [branch]) {
        b.status = "pending";
        delete b.output;
        delete b.error;
      }
      if (outer.kind === "race") meta.winner = null;
    }
  }
  h.status = "running";
  delete h.output;
}

import { parse as parseYaml, YAMLParseError } from "yaml";
import { AgentError } from "../../../shared/errors.js";
import { TASK_ID } from "../../../shared/protocol/kanban.js";
import { parseDurationSeconds } from "../../../shared/duration.js";

/**
 * A plan file (`agent kanban create --from-file plan.yaml`): tasks with their assignees and the
 * links between them, created in one atomic write so the dispatcher never sees half a graph.
 * This module only reads and checks the file's shape; the board checks what depends on its
 * state (profiles, existing parents) and creates everything in one change. docs/kanban.md
 * describes the format.
 *
 *   tasks:
 *     - id: parser                 # local id, unique in the file
 *       title: Write the parser
 *       body: ...                  # optional
 *       assignee: writer           # optional; must name a profile
 *       parents: [t_1a2b3c4d]      # optional; local ids or ids of tasks already on the board
 *       priority: 2                # optional
 *       max_retries: 3             # optional
 *       max_runtime: 2h            # optional: seconds or 90s, 30m, 2h, 1h30m
 *       skills: [rust]             # optional
 */

export interface PlanTask {
  /** The local id (the file's). */
  local: string;
  title: string;
  body?: string;
  assignee?: string;
  /** Local ids and board task ids, as written. */
  parents: string[];
  priority?: number;
  maxRetries?: number;
  maxRuntime?: number;
  skills?: string[];
}

export const MAX_PLAN_TASKS = 500;
const LOCAL_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const KEYS = new Set(["id", "title", "body", "assignee", "parents", "priority", "max_retries", "max_runtime", "skills"]);

export function planError(message: string, details?: Record<string, unknown>): AgentError {
  return new AgentError("kanban.invalid_plan_file", message, details);
}

/** Where an entry is, for messages: `tasks[2] (id "docs")`. */
export function entryName(index: number, local?: string): string {
  return `tasks[${index}]${local ? ` (id "${local}")` : ""}`;
}

/** Parse and check a plan file's text; every problem names the file and the entry. */
export function parsePlan(text: string, file: string): PlanTask[] {
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const at = error.linePos?.[0];
      const first = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
      throw planError(`${file}: not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ""}: ${first}`, { file, ...(at ? { line: at.line } : {}) });
    }
    throw planError(`${file}: not valid YAML: ${(error as Error).message}`, { file });
  }
  if (!isObject(doc) || !("tasks" in doc)) throw planError(`${file}: expected a mapping with a "tasks" list (see docs/kanban.md, "Plan files")`, { file });
  const extra = Object.keys(doc).filter((k) => k !== "tasks");
  if (extra.length) throw planError(`${file}: unknown top-level key "${extra[0]}" (only "tasks")`, { file });
  const list = doc.tasks;
  if (!Array.isArray(list) || list.length === 0) throw planError(`${file}: "tasks" must be a non-empty list`, { file });
  if (list.length > MAX_PLAN_TASKS) throw planError(`${file}: ${list.length} tasks; a plan holds at most ${MAX_PLAN_TASKS}`, { file });
  const seen = new Map<string, number>();
  const tasks = list.map((raw, i): PlanTask => {
    const local = isObject(raw) && typeof raw.id === "string" ? raw.id : undefined;
    const where = `${file}: ${entryName(i, local)}`;
    const fail = (what: string) => planError(`${where}: ${what}`, { file, entry: i, ...(local ? { id: local } : {}) });
    if (!isObject(raw)) throw fail("each task is a mapping (id, title, ...)");
    for (const k of Object.keys(raw)) if (!KEYS.has(k)) throw fail(`unknown key "${k}" (known: ${[...KEYS].join(", ")})`);
    if (local === undefined) throw fail('needs an "id" (a local name other tasks of the file use in "parents")');
    if (!LOCAL_ID.test(local)) throw fail("the id takes letters, digits, _, - and . (at most 64)");
    if (TASK_ID.test(local)) throw fail(`the id ${local} looks like a board task id; pick another local name`);
    const dup = seen.get(local);
    if (dup !== undefined) throw fail(`duplicate id "${local}" (also ${entryName(dup)})`);
    seen.set(local, i);
    if (typeof raw.title !== "string" || !raw.title.trim()) throw fail('needs a "title"');
    if (raw.title.length > 500) throw fail("the title is longer than 500 characters");
    const task: PlanTask = { local, title: raw.title.trim(), parents: [] };
    if (raw.body !== undefined && raw.body !== null) {
      if (typeof raw.body !== "string") throw fail('"body" must be text');
      if (raw.body.length > 100_000) throw fail("the body is longer than 100,000 characters");
      task.body = raw.body;
    }
    if (raw.assignee !== undefined && raw.assignee !== null) {
      if (typeof raw.assignee !== "string" || !raw.assignee.trim() || raw.assignee.length > 64) throw fail('"assignee" must be a profile name');
      task.assignee = raw.assignee.trim();
    }
    if (raw.parents !== undefined && raw.parents !== null) {
      const ps = Array.isArray(raw.parents) ? raw.parents : [raw.parents];
      if (ps.length > 100) throw fail("at most 100 parents");
      for (const p of ps) if (typeof p !== "string" || !p.trim()) throw fail('"parents" lists ids (local ids or t_ task ids)');
      task.parents = [...new Set((ps as string[]).map((p) => p.trim()))];
      if (task.parents.includes(local)) throw fail("a task cannot be its own parent");
    }
    if (raw.priority !== undefined && raw.priority !== null) {
      if (!Number.isInteger(raw.priority) || (raw.priority as number) < -1000 || (raw.priority as number) > 1000)
        throw fail('"priority" is a whole number from -1000 to 1000');
      task.priority = raw.priority as number;
    }
    if (raw.max_retries !== undefined && raw.max_retries !== null) {
      if (!Number.isInteger(raw.max_retries) || (raw.max_retries as number) < 1 || (raw.max_retries as number) > 1000)
        throw fail('"max_retries" is a whole number from 1 to 1000');
      task.maxRetries = raw.max_retries as number;
    }
    if (raw.max_runtime !== undefined && raw.max_runtime !== null) {
      const seconds = durationSeconds(raw.max_runtime);
      if (seconds === null || seconds > 30 * 24 * 3600) throw fail('"max_runtime" is a duration such as 90, 90s, 30m, 2h or 1h30m (at most 30 days)');
      task.maxRuntime = seconds;
    }
    if (raw.skills !== undefined && raw.skills !== null) {
      if (!Array.isArray(raw.skills) || raw.skills.length > 50 || raw.skills.some((s) => typeof s !== "string" || !s.trim() || s.length > 200))
        throw fail('"skills" is a list of skill names');
      task.skills = raw.skills as string[];
    }
    return task;
  });
  // Local references: each names a task of the file or a board task id; a cycle is refused.
  for (const [i, t] of tasks.entries()) {
    for (const p of t.parents) {
      if (!seen.has(p) && !TASK_ID.test(p))
        throw planError(`${file}: ${entryName(i, t.local)}: parent "${p}" is neither an id in this file nor a task id (t_ and 8 hex digits)`, {
          file,
          entry: i,
          id: t.local,
          parent: p,
        });
    }
  }
  const cycle = findCycle(tasks, seen);
  if (cycle) throw planError(`${file}: the parents make a cycle: ${cycle.join(" → ")}`, { file, cycle });
  return tasks;
}

/** The local ids of a cycle (first repeated at the end), or null. */
function findCycle(tasks: PlanTask[], index: Map<string, number>): string[] | null {
  const state = new Array<number>(tasks.length).fill(0);
  const path: string[] = [];
  const visit = (i: number): string[] | null => {
    if (state[i] === 2) return null;
    if (state[i] === 1) return [...path.slice(path.indexOf(tasks[i]!.local)), tasks[i]!.local];
    state[i] = 1;
    path.push(tasks[i]!.local);
    for (const p of tasks[i]!.parents) {
      const j = index.get(p);
      if (j === undefined) continue;
      const found = visit(j);
      if (found) return found;
    }
    path.pop();
    state[i] = 2;
    return null;
  };
  for (let i = 0; i < tasks.length; i++) {
    const found = visit(i);
    if (found) return found;
  }
  return null;
}

/** Tasks ordered so that every task comes after its parents in the file. */
export function parentsFirst(tasks: PlanTask[]): PlanTask[] {
  const byLocal = new Map(tasks.map((t) => [t.local, t]));
  const out: PlanTask[] = [];
  const done = new Set<string>();
  const add = (t: PlanTask) => {
    if (done.has(t.local)) return;
    done.add(t.local);
    for (const p of t.parents) {
      const parent = byLocal.get(p);
      if (parent) add(parent);
    }
    out.push(t);
  };
  for (const t of tasks) add(t);
  return out;
}

function durationSeconds(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) && v > 0 ? v : null;
  return typeof v === "string" ? parseDurationSeconds(v) : null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

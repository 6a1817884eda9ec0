/**
 * The decomposer's answer, parsed and checked into the plan the board applies in one write.
 * The model answers with one JSON object (code fences are stripped):
 *   fan-out: {fanout: true, rationale, tasks: [{title, body, assignee|null, parents: [indices]}]}
 *   single:  {fanout: false, rationale, title, body, assignee|null}
 * `parents` are 0-based indices of sibling tasks in the same list. Anything else (not JSON, an
 * empty or oversized fan-out, a bad index, a cycle, a missing title) is a rejection with a
 * reason, and the task stays in triage.
 */

export const MIN_CHILDREN = 1;
export const MAX_CHILDREN = 6;
const MAX_TITLE = 200;
const MAX_BODY = 20_000;

export interface PlannedChild {
  title: string;
  body: string;
  assignee?: string;
  /** Indices of sibling children this one waits for. */
  parents: number[];
}

export type DecompositionPlan =
  | { fanout: true; children: PlannedChild[]; comment: string }
  | { fanout: false; title: string; body: string; assignee?: string; comment: string };

export type ParseOutcome = { ok: true; plan: DecompositionPlan } | { ok: false; reason: string };

/** The first JSON object in the reply: fences stripped, surrounding prose ignored. */
function extractJson(reply: string): unknown {
  let text = reply.trim();
  const fence = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/.exec(text);
  if (fence) text = fence[1]!.trim();
  if (!text.startsWith("{")) {
    const start = text.indexOf("{");
    const end = text.lastIndexOf("}");
    if (start < 0 || end <= start) throw new Error("no JSON object in the answer");
    text = text.slice(start, end + 1);
  }
  return JSON.parse(text);
}

function str(value: unknown, what: string, max: number, required: boolean): string {
  if (value === undefined || value === null) {
    if (required) throw new Error(`${what} is missing`);
    return "";
  }
  if (typeof value !== "string") throw new Error(`${what} is not a string`);
  const s = value.trim();
  if (required && !s) throw new Error(`${what} is empty`);
  if (s.length > max) throw new Error(`${what} is longer than ${max} characters`);
  return s;
}

function assignee(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new Error(`${what} is not a string or null`);
  return value.trim() || undefined;
}

/** Indices in a dependency order, or the index of a task on a cycle. */
export function findCycle(parents: number[][]): number[] | null {
  const n = parents.length;
  const state = new Array<number>(n).fill(0); // 0 new, 1 on the path, 2 done
  const path: number[] = [];
  const visit = (i: number): number[] | null => {
    if (state[i] === 2) return null;
    if (state[i] === 1) return path.slice(path.indexOf(i)).concat(i);
    state[i] = 1;
    path.push(i);
    for (const p of parents[i]!) {
      const cycle = visit(p);
      if (cycle) return cycle;
    }
    path.pop();
    state[i] = 2;
    return null;
  };
  for (let i = 0; i < n; i++) {
    const cycle = visit(i);
    if (cycle) return cycle;
  }
  return null;
}

function parseChildren(tasks: unknown): PlannedChild[] {
  if (!Array.isArray(tasks)) throw new Error("fanout is true but tasks is not a list");
  if (tasks.length < MIN_CHILDREN) throw new Error("the fan-out is empty");
  if (tasks.length > MAX_CHILDREN) throw new Error(`the fan-out has ${tasks.length} tasks; at most ${MAX_CHILDREN} are allowed`);
  const children = tasks.map((t, i): PlannedChild => {
    if (!t || typeof t !== "object" || Array.isArray(t)) throw new Error(`tasks[${i}] is not an object`);
    const o = t as Record<string, unknown>;
    const rawParents = o.parents ?? [];
    if (!Array.isArray(rawParents)) throw new Error(`tasks[${i}].parents is not a list`);
    const parents = [...new Set(rawParents)].map((p) => {
      if (typeof p !== "number" || !Number.isInteger(p) || p < 0 || p >= tasks.length)
        throw new Error(`tasks[${i}].parents has a bad index ${JSON.stringify(p)}`);
      if (p === i) throw new Error(`tasks[${i}] names itself as a parent`);
      return p;
    });
    const child: PlannedChild = { title: str(o.title, `tasks[${i}].title`, MAX_TITLE, true), body: str(o.body, `tasks[${i}].body`, MAX_BODY, false), parents };
    const a = assignee(o.assignee, `tasks[${i}].assignee`);
    if (a) child.assignee = a;
    return child;
  });
  const cycle = findCycle(children.map((c) => c.parents));
  if (cycle) throw new Error(`the tasks' parents form a cycle (${cycle.join(" → ")})`);
  return children;
}

/** Parse the model's reply into a plan, or say why it cannot be used. */
export function parseDecomposition(reply: string): ParseOutcome {
  let data: unknown;
  try {
    data = extractJson(reply);
  } catch (error) {
    return { ok: false, reason: `malformed decomposer output: ${(error as Error).message}` };
  }
  try {
    if (!data || typeof data !== "object" || Array.isArray(data)) throw new Error("the answer is not a JSON object");
    const o = data as Record<string, unknown>;
    if (typeof o.fanout !== "boolean") throw new Error("fanout is not true or false");
    const rationale = str(o.rationale, "rationale", 4000, false);
    if (o.fanout) {
      const children = parseChildren(o.tasks);
      const comment = `Decomposed into ${children.length} task${children.length === 1 ? "" : "s"}.${rationale ? ` ${rationale}` : ""}`;
      return { ok: true, plan: { fanout: true, children, comment } };
    }
    const plan: DecompositionPlan = {
      fanout: false,
      title: str(o.title, "title", MAX_TITLE, true),
      body: str(o.body, "body", MAX_BODY, false),
      comment: `Kept as one task.${rationale ? ` ${rationale}` : ""}`,
    };
    const a = assignee(o.assignee, "assignee");
    if (a) plan.assignee = a;
    return { ok: true, plan };
  } catch (error) {
    return { ok: false, reason: `malformed decomposer output: ${(error as Error).message}` };
  }
}

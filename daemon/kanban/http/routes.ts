import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { AgentError } from "../../../shared/errors.js";
import { kanbanMethods, TASK_STATUSES } from "../../../shared/protocol/kanban.js";
import type { DaemonContext } from "../../context.js";
import { decodeSegment } from "../../http/path.js";
import { readBody } from "../../http/request-body.js";
import { sendValue } from "../../http/response.js";
import type { PluginCall, PluginHandler } from "../../http/plugins.js";
import type { KanbanService } from "../kanban-service.js";

/**
 * The dashboard plugin API, `/api/plugins/kanban/...` on the daemon's HTTP listener. The
 * listener's access rules (Host, Origin, token) run first; boards are internal, so every route
 * also needs the gateway token, like the internal actors (401 without it). JSON in and out;
 * errors are `{group, code, message, metadata}` with the status of their code.
 *
 *   GET   board[?board=]                 the board: task summaries and counts
 *   GET   tasks/<id>                     one task in full
 *   GET   tasks/<id>/diff[?stat=true]    its branch's diff against its base: {task_id, branch, base, text}
 *   POST  tasks                          create (the CLI's create options, snake_case; `hold`)
 *   PATCH tasks/<id>                     edit; status `running` → 400, `ready` with unfinished parents → 409
 *   POST  tasks/<id>/decompose           run the decomposer: 200 {ok, task_id, reason, fanout, child_ids}
 *   GET   orchestration, PUT             orchestrator profile, default assignee, auto-decompose (with resolved fallbacks)
 *   GET   profiles                       profiles with descriptions
 *   PATCH profiles/<name>                a user-written description
 *   POST  profiles/<name>/describe-auto  a description written by the model
 */
const PREFIX = "/api/plugins/kanban/";
const MAX_BODY = 2 * 1024 * 1024;

/**
 * A task to create: the `kanban.create` params of the RPC table (shared/protocol/kanban.ts), one
 * schema for both doors, with the HTTP API's snake_case names and without the fields the daemon
 * sets itself (`workspace`, `by`).
 */
const createParams = kanbanMethods["kanban.create"].params;
const createBody = createParams
  .omit({ workspace: true, workspaceMode: true, base: true, by: true, maxRetries: true, maxRuntime: true, idempotencyKey: true })
  .extend({ max_retries: createParams.shape.maxRetries, max_runtime: createParams.shape.maxRuntime, idempotency_key: createParams.shape.idempotencyKey })
  .strict();

const patchBody = z
  .object({
    title: z.string().trim().min(1).max(500).optional(),
    body: z.string().max(100_000).optional(),
    assignee: z.string().min(1).max(64).optional(),
    priority: z.number().int().min(-1000).max(1000).optional(),
    status: z.enum(TASK_STATUSES).optional(),
    summary: z.string().max(100_000).optional(),
    result: z.string().max(1_000_000).optional(),
    reason: z.string().max(10_000).optional(),
  })
  .strict();

const orchestrationBody = z
  .object({
    orchestrator_profile: z.string().max(64).optional(),
    default_assignee: z.string().max(64).optional(),
    auto_decompose: z.boolean().optional(),
  })
  .strict();

const describeBody = z.object({ description: z.string().trim().min(1).max(2000) }).strict();
const describeAutoBody = z.object({ overwrite: z.boolean().optional() }).strict();

export function kanbanRoutes(
  ctx: DaemonContext,
  k: KanbanService,
  decomposer: () => { decomposeMany(request: { taskIds?: string[]; board?: string }): Promise<unknown[]> },
): PluginHandler {
  return async (req, res, call) => {
    if (!call.trusted) {
      throw new AgentError(
        "auth.unauthorized",
        "the kanban API needs the gateway token (set gateway.token or AGENT_GATEWAY_TOKEN, then send Authorization: Bearer <token>)",
      );
    }
    const send = (status: number, value: unknown) => sendValue(res, status, value, "json", call.cors);
    const segs = call.path.slice(PREFIX.length).split("/").map(decodeSegment);
    if (segs[segs.length - 1] === "") segs.pop();
    const query = new URLSearchParams(call.search);
    const board = query.get("board") ?? undefined;
    const m = call.method;
    const [first, id, action] = segs;

    if (first === "board" && segs.length === 1 && m === "GET") {
      const list = await k.list({ all: query.get("all") === "true" }, { board });
      return send(200, { ...list, stats: await k.stats({ board }), boards: (await k.listBoards()).boards });
    }
    if (first === "tasks" && segs.length === 1 && m === "POST") {
      const b = await json(req, createBody);
      const r = await k.create(
        {
          title: b.title,
          body: b.body,
          assignee: b.assignee,
          parents: b.parents,
          priority: b.priority,
          triage: b.triage,
          maxRetries: b.max_retries,
          maxRuntime: b.max_runtime,
          skills: b.skills,
          idempotencyKey: b.idempotency_key,
          hold: b.hold,
        },
        { board: b.board ?? board, by: "api" },
      );
      return send(r.created ? 201 : 200, r);
    }
    if (first === "tasks" && id && segs.length === 2 && m === "GET") return send(200, { task: await k.show(id, { board }) });
    if (first === "tasks" && id && action === "diff" && segs.length === 3 && m === "GET")
      return send(200, await k.diff(id, query.get("stat") === "true", { board }));
    if (first === "tasks" && id && segs.length === 2 && m === "PATCH") {
      const patch = await json(req, patchBody);
      return send(200, { task: await k.update(id, patch, { board, by: "api" }) });
    }
    if (first === "tasks" && id && action === "decompose" && segs.length === 3 && m === "POST") {
      await k.show(id, { board });
      const [result] = await decomposer().decomposeMany({ taskIds: [id], board });
      return send(200, result);
    }
    if (first === "orchestration" && segs.length === 1 && (m === "GET" || m === "PUT")) {
      if (m === "PUT") await setOrchestration(ctx, k, await json(req, orchestrationBody));
      return send(200, orchestration(ctx, k));
    }
    if (first === "profiles") {
      const profiles = ctx.services.get("profiles");
      if (segs.length === 1 && m === "GET") {
        return send(200, {
          profiles: profiles.list().map((p) => ({ name: p.name, description: p.description, description_auto: p.description_auto })),
        });
      }
      if (id && segs.length === 2 && m === "PATCH") {
        const b = await json(req, describeBody);
        const [r] = await profiles.describe({ names: [id], text: b.description }, () => Promise.reject(new Error("unused")));
        return send(200, { profile: r });
      }
      if (id && action === "describe-auto" && segs.length === 3 && m === "POST") {
        const b = await json(req, describeAutoBody, true);
        const { generateDescription } = await import("../../profiles/describe.js");
        const manager = profiles as unknown as Parameters<typeof generateDescription>[0];
        const [r] = await profiles.describe({ names: [id], auto: true, overwrite: b.overwrite }, (n) => generateDescription(manager, n));
        return send(200, { profile: r });
      }
    }
    throw routeNotFound(call);
  };
}

function routeNotFound(call: PluginCall): AgentError {
  return new AgentError("route.not_found", `no route ${call.method} ${call.path.slice(0, 200)}`);
}

async function json<T extends z.ZodType>(req: IncomingMessage, schema: T, emptyOk = false): Promise<z.output<T>> {
  const raw = (await readBody(req, MAX_BODY)).toString("utf8");
  let value: unknown;
  try {
    value = raw.trim() === "" && emptyOk ? {} : JSON.parse(raw);
  } catch {
    throw new AgentError("api.bad_request", "the body is not JSON");
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AgentError("api.bad_request", `${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  return parsed.data;
}

/** The settings as configured, and who they resolve to (an unset or unknown profile falls back to the default profile). */
function orchestration(ctx: DaemonContext, k: KanbanService) {
  const c = ctx.config.current().kanban;
  return {
    orchestrator_profile: String(c.orchestrator_profile ?? "") || null,
    default_assignee: String(c.default_assignee ?? "") || null,
    auto_decompose: Boolean(c.auto_decompose),
    resolved: { orchestrator_profile: k.orchestrator(), default_assignee: k.defaultAssignee() },
  };
}

/** Unknown profiles are refused before anything is written ("" unsets a profile). */
async function setOrchestration(ctx: DaemonContext, k: KanbanService, b: z.output<typeof orchestrationBody>): Promise<void> {
  for (const key of ["orchestrator_profile", "default_assignee"] as const) {
    const v = b[key];
    if (v && !k.profileExists(v))
      throw new AgentError("kanban.unknown_profile", `no profile named "${v}"; create it with: agent profile create ${v}`, { profile: v });
  }
  if (b.orchestrator_profile !== undefined) await ctx.config.set("kanban.orchestrator_profile", b.orchestrator_profile);
  if (b.default_assignee !== undefined) await ctx.config.set("kanban.default_assignee", b.default_assignee);
  if (b.auto_decompose !== undefined) await ctx.config.set("kanban.auto_decompose", b.auto_decompose);
}

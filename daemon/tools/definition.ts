/**
 * The tool kit: what a tool is (its definition, arguments schema and outcome), shared by the
 * agent's registry, the kanban tools, MCP's turn tools and `agent mcp serve`.
 */
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import type { TaskKind, TaskOf, TaskValues } from "../pool/messages.js";
import type { LspPendingDiagnostics } from "../../shared/protocol/lsp.js";
import type { ApprovalAsk } from "../../shared/protocol/approvals.js";
import type { JsonSchema, ToolContext } from "./types.js";

/** The most output bytes a tool hands back to the model by default (the head and tail are kept). */
export const TOOL_OUTPUT_MAX = 50_000;

/** What the registry gives every handler besides its arguments. */
export interface ToolDeps {
  /** Run a task in the worker pool; expected failures throw a ToolFailure. */
  runTask<K extends TaskKind>(task: TaskOf<K>, signal?: AbortSignal): Promise<TaskValues[K]>;
  /** Semantic diagnostics computed after a write alone; undefined when none. */
  lspDiagnostics?: LspDiagnosticsHook;
  /** The language-server tier (daemon/lsp): a baseline before the write, new errors after it. */
  lsp?: LspHook;
}

export type LspDiagnosticsHook = (path: string, ctx: ToolContext) => Promise<string | undefined>;

export interface LspHook {
  beforeWrite(path: string, signal?: AbortSignal): Promise<LspPendingDiagnostics | undefined>;
}

export interface ToolOutcome {
  ok: boolean;
  output: unknown;
  mutation?: { path: string; ok: boolean };
}

export interface ToolDefinition<A = any> {
  name: string;
  description: string;
  toolset: string;
  /** Arguments schema: validates calls and, converted to JSON schema, is what the model sees. */
  args: z.ZodType<A>;
  /** The JSON schema the model sees, when it is not derived from `args` (a tool run elsewhere, described by its host). */
  parameters?: JsonSchema;
  /** What the tool needs to be offered, said when `available` is false (`agent tools list`). */
  requires?: string;
  /** False hides the tool (its requirements are not met here). Default: available. */
  available?(ctx: Partial<ToolContext>): boolean;
  /** For file mutations: the target path, so even a rejected call is reported to the footer. */
  mutationPath?(rawArgs: Record<string, unknown>, ctx: ToolContext): string | undefined;
  run(args: A, ctx: ToolContext, deps: ToolDeps): Promise<ToolOutcome>;
  /**
   * For risky tools: what to ask the approval service (docs/approvals.md) before `run`, from
   * valid arguments; the service decides whether to ask. Absent (or null for these arguments:
   * a read-only action of a tool that also changes things): no approval needed.
   */
  approval?(args: A, ctx: ToolContext): Promise<ApprovalAsk | null> | ApprovalAsk | null;
}

export function defineTool<A>(definition: ToolDefinition<A>): ToolDefinition<A> {
  return definition;
}

/** Relative paths resolve against the session cwd; `~` is the home directory. */
export function resolvePath(path: string, ctx: Pick<ToolContext, "cwd" | "env">): string {
  if (path === "~" || path.startsWith("~/")) return resolve(ctx.env?.HOME || homedir(), path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(ctx.cwd, path);
}

/** zod → the JSON schema sent to the model: input shape, without the `$schema` key and noise bounds. */
export function toParameters(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete json.$schema;
  return stripNoise(json) as JsonSchema;
}

function stripNoise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNoise);
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    // z.number().int() adds ±MAX_SAFE_INTEGER bounds; they tell the model nothing.
    if ((key === "maximum" && v === Number.MAX_SAFE_INTEGER) || (key === "minimum" && v === Number.MIN_SAFE_INTEGER)) continue;
    out[key] = stripNoise(v);
  }
  return out;
}

import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { ToolFailure } from "../../../shared/errors.js";
import { PoolError, ToolPool, type PoolOptions } from "../../pool/pool.js";
import type { TaskKind, TaskOf, TaskValues } from "../../pool/messages.js";
import type { LspPendingDiagnostics } from "../../../shared/protocol/lsp.js";
import type { ApprovalAsk } from "../../../shared/protocol/approvals.js";
import type { JsonSchema, ToolContext, ToolRegistry, ToolResult, ToolSpec } from "./types.js";

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
  /** False hides the tool (its requirements are not met here). Default: available. */
  available?(ctx: Partial<ToolContext>): boolean;
  /** For file mutations: the target path, so even a rejected call is reported to the footer. */
  mutationPath?(rawArgs: Record<string, unknown>, ctx: ToolContext): string | undefined;
  run(args: A, ctx: ToolContext, deps: ToolDeps): Promise<ToolOutcome>;
  /**
   * For risky tools: what to ask the approval service (docs/approvals.md) before `run`, from
   * valid arguments; the service decides whether to ask. Absent: the tool never needs approval.
   */
  approval?(args: A, ctx: ToolContext): Promise<ApprovalAsk> | ApprovalAsk;
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

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const at = issue.path.length ? issue.path.join(".") : "arguments";
      return `${at}: ${issue.message}`;
    })
    .join("; ");
}

function failure(code: string, message: string): { error: string; code: string } {
  return { error: message, code };
}

export interface ToolRegistryOptions {
  /** Share a pool (e.g. the daemon's); otherwise the registry creates one lazily and owns it. */
  pool?: ToolPool;
  poolOptions?: PoolOptions;
  /** Enabled toolsets; default: every toolset. */
  toolsets?: string[];
  /** Tools to register instead of the built-in ones (default: builtinTools()). */
  tools?: ToolDefinition[];
  lspDiagnostics?: LspDiagnosticsHook;
  lsp?: LspHook;
}

export class DefaultToolRegistry implements ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();
  readonly #specs = new Map<string, ToolSpec>();
  readonly #pool: ToolPool;
  readonly #ownsPool: boolean;
  readonly #toolsets: Set<string> | null;
  readonly #deps: ToolDeps;

  constructor(tools: ToolDefinition[], options: Omit<ToolRegistryOptions, "tools"> = {}) {
    this.#pool = options.pool ?? new ToolPool(options.poolOptions);
    this.#ownsPool = !options.pool;
    this.#toolsets = options.toolsets ? new Set(options.toolsets) : null;
    const pool = this.#pool;
    this.#deps = {
      async runTask(task, signal) {
        const outcome = await pool.run(task, { signal });
        if (!outcome.ok) throw new ToolFailure(outcome.error.code, outcome.error.message);
        return outcome.value;
      },
      lspDiagnostics: options.lspDiagnostics,
      lsp: options.lsp,
    };
    for (const tool of tools) this.register(tool);
  }

  /** Add a tool (kanban, session search, ... register theirs the same way). */
  register(tool: ToolDefinition): void {
    if (this.#tools.has(tool.name)) throw new Error(`tool ${tool.name} is already registered`);
    this.#tools.set(tool.name, tool);
    this.#specs.set(tool.name, {
      name: tool.name,
      description: tool.description,
      toolset: tool.toolset,
      parameters: tool.parameters ?? toParameters(tool.args),
    });
  }

  async approvalFor(name: string, rawArgs: unknown, ctx: ToolContext): Promise<ApprovalAsk | null> {
    const tool = this.#tools.get(name);
    if (!tool?.approval || !this.#enabled(tool, ctx)) return null;
    let args: unknown = rawArgs ?? {};
    if (typeof args === "string") {
      try {
        args = args.trim() === "" ? {} : JSON.parse(args);
      } catch {
        return null; // execute reports the bad arguments
      }
    }
    const parsed = tool.args.safeParse(args);
    return parsed.success ? tool.approval(parsed.data, ctx) : null;
  }

  get pool(): ToolPool {
    return this.#pool;
  }

  #enabled(tool: ToolDefinition, ctx: Partial<ToolContext>): boolean {
    if (this.#toolsets && !this.#toolsets.has(tool.toolset)) return false;
    try {
      return tool.available?.(ctx) ?? true;
    } catch {
      return false;
    }
  }

  specs(ctx: Partial<ToolContext> = {}): ToolSpec[] {
    return [...this.#tools.values()].filter((t) => this.#enabled(t, ctx)).map((t) => this.#specs.get(t.name)!);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  async execute(name: string, rawArgs: unknown, ctx: ToolContext): Promise<ToolResult> {
    const started = performance.now();
    const done = (outcome: ToolOutcome): ToolResult => {
      const result: ToolResult = { ok: outcome.ok, output: outcome.output, durationMs: Math.round((performance.now() - started) * 100) / 100 };
      if (outcome.mutation) result.mutation = outcome.mutation;
      return result;
    };
    const tool = this.#tools.get(name);
    if (!tool || !this.#enabled(tool, ctx)) {
      const known = this.specs(ctx)
        .map((s) => s.name)
        .join(", ");
      return done({
        ok: false,
        output: failure("unknown_tool", `${tool ? "tool not available here" : "unknown tool"}: ${name}. Available tools: ${known || "none"}`),
      });
    }
    // Models send arguments as a JSON string; accept an object too.
    let args: unknown = rawArgs ?? {};
    if (typeof args === "string") {
      try {
        args = args.trim() === "" ? {} : JSON.parse(args);
      } catch (error) {
        return done({ ok: false, output: failure("invalid_arguments", `arguments for ${name} are not valid JSON: ${(error as Error).message}`) });
      }
    }
    let mutationPath: string | undefined;
    try {
      if (args && typeof args === "object" && !Array.isArray(args)) mutationPath = tool.mutationPath?.(args as Record<string, unknown>, ctx);
    } catch {
      mutationPath = undefined;
    }
    const mutationFailed = (): ToolOutcome["mutation"] => (mutationPath ? { path: mutationPath, ok: false } : undefined);
    const parsed = tool.args.safeParse(args);
    if (!parsed.success) {
      return done({
        ok: false,
        output: failure("invalid_arguments", `invalid arguments for ${name}: ${describeIssues(parsed.error)}`),
        mutation: mutationFailed(),
      });
    }
    if (ctx.signal?.aborted)
      return done({ ok: false, output: failure("interrupted", `${name} was not run: the turn was interrupted`), mutation: mutationFailed() });
    try {
      return done(await tool.run(parsed.data, ctx, this.#deps));
    } catch (error) {
      // Tools never throw to the loop: whatever happened becomes an error the model can read.
      const output =
        error instanceof ToolFailure || error instanceof PoolError
          ? failure(error instanceof ToolFailure ? error.reason : error.code.replace(/^pool\./, ""), error.message)
          : failure("tool_error", `${name} failed: ${error instanceof Error ? error.message : String(error)}`);
      return done({ ok: false, output, mutation: mutationFailed() });
    }
  }

  async close(): Promise<void> {
    if (this.#ownsPool) await this.#pool.close();
  }
}

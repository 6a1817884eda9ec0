import type { z } from "zod";
import { ToolFailure } from "../../../shared/errors.js";
import { PoolError, ToolPool, type PoolOptions } from "../../pool/pool.js";
import type { ApprovalAsk } from "../../../shared/protocol/approvals.js";
import type { ToolListing } from "../../../shared/protocol/chat.js";
import type { ToolContext, ToolRegistry, ToolResult, ToolSpec } from "../../tools/types.js";
import { toParameters, type LspDiagnosticsHook, type LspHook, type ToolDefinition, type ToolDeps, type ToolOutcome } from "../../tools/definition.js";

export { defineTool, resolvePath, toParameters, TOOL_OUTPUT_MAX } from "../../tools/definition.js";
export type { LspDiagnosticsHook, LspHook, ToolDefinition, ToolDeps, ToolOutcome } from "../../tools/definition.js";

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
  }

  /** A tool's spec, built the first time it is offered: its JSON schema costs a daemon start ~25 ms for every tool at once. */
  #spec(tool: ToolDefinition): ToolSpec {
    let spec = this.#specs.get(tool.name);
    if (!spec) {
      spec = { name: tool.name, description: tool.description, toolset: tool.toolset, parameters: tool.parameters ?? toParameters(tool.args) };
      this.#specs.set(tool.name, spec);
    }
    return spec;
  }

  /** Every registered tool, offered in `ctx` or not, with what an unoffered one needs. */
  catalog(ctx: Partial<ToolContext> = {}): ToolListing[] {
    return [...this.#tools.values()].map((tool) => {
      const available = this.#enabled(tool, ctx);
      return {
        name: tool.name,
        toolset: tool.toolset,
        description: tool.description,
        available,
        ...(available ? {} : { reason: tool.requires ?? "not available here" }),
      };
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
    return [...this.#tools.values()].filter((t) => this.#enabled(t, ctx)).map((t) => this.#spec(t));
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

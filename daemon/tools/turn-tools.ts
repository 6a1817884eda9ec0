import { toAgentError } from "../../shared/errors.js";
import type { ApprovalAsk } from "../../shared/protocol/approvals.js";
import type { ToolContext, ToolRegistry, ToolResult, ToolSpec } from "./types.js";
import type { McpTurnTool } from "../mcp/api.js";

/**
 * A turn's tools: the daemon's registry plus the MCP tools of the turn's profile. MCP calls are
 * checked (arguments must be a JSON object; the server validates them against its schema),
 * asked about through the approval service like any risky tool, and never throw to the loop.
 */
export class TurnToolRegistry implements ToolRegistry {
  readonly #mcp = new Map<string, McpTurnTool>();

  constructor(
    private readonly base: ToolRegistry | null,
    mcp: McpTurnTool[],
  ) {
    for (const t of mcp) this.#mcp.set(t.definition.name, t);
  }

  specs(ctx: Partial<ToolContext> = {}): ToolSpec[] {
    const mcp = [...this.#mcp.values()].map((t) => ({
      name: t.definition.name,
      description: t.definition.description,
      toolset: "mcp",
      parameters: t.definition.parameters!,
    }));
    return [...(this.base?.specs(ctx) ?? []), ...mcp];
  }

  has(name: string): boolean {
    return this.#mcp.has(name) || (this.base?.has(name) ?? false);
  }

  /** Calls of the same key may run together (a server with supports_parallel_tool_calls); null: one at a time. */
  parallelKey(name: string): string | null {
    const t = this.#mcp.get(name);
    return t?.parallel ? `mcp:${t.server}` : null;
  }

  async approvalFor(name: string, args: unknown, ctx: ToolContext): Promise<ApprovalAsk | null> {
    const t = this.#mcp.get(name);
    if (!t) return this.base?.approvalFor(name, args, ctx) ?? null;
    const parsed = objectArgs(args);
    return parsed.ok ? t.definition.approval!(parsed.value, ctx) : null;
  }

  async execute(name: string, args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const t = this.#mcp.get(name);
    if (!t) {
      if (!this.base) return { ok: false, output: { error: `unknown tool ${name}` }, durationMs: 0 };
      return this.base.execute(name, args, ctx);
    }
    const started = performance.now();
    const ms = () => Math.round((performance.now() - started) * 100) / 100;
    const parsed = objectArgs(args);
    if (!parsed.ok) return { ok: false, output: { error: `invalid arguments for ${name}: ${parsed.error}`, code: "invalid_arguments" }, durationMs: ms() };
    if (ctx.signal?.aborted) return { ok: false, output: { error: `${name} was not run: the turn was interrupted`, code: "interrupted" }, durationMs: ms() };
    try {
      const outcome = await t.definition.run(parsed.value, ctx, undefined as never);
      return { ok: outcome.ok, output: outcome.output, durationMs: ms() };
    } catch (error) {
      const e = toAgentError(error);
      return { ok: false, output: { error: e.message, code: e.code.replace(/^mcp\./, "") }, durationMs: ms() };
    }
  }

  async close(): Promise<void> {
    // The base registry is the daemon's; MCP connections belong to the manager.
  }
}

function objectArgs(args: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  let v = args ?? {};
  if (typeof v === "string") {
    try {
      v = v.trim() === "" ? {} : JSON.parse(v);
    } catch (error) {
      return { ok: false, error: `not valid JSON (${(error as Error).message})` };
    }
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) return { ok: false, error: "must be a JSON object" };
  return { ok: true, value: v as Record<string, unknown> };
}

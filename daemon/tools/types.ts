import type { ApprovalAsk } from "../../shared/protocol/approvals.js";

/**
 * The contract between the agent loop and its tools. The registry owns validation (against
 * each tool's JSON schema), availability checks and running the work in the worker pool.
 */

/** A JSON schema object describing a tool's arguments (as sent to the model). */
export type JsonSchema = Record<string, unknown>;

export interface ToolSpec {
  name: string;
  description: string;
  /** Group the tool belongs to (file, search, terminal, kanban, ...), for enabling sets of tools. */
  toolset: string;
  parameters: JsonSchema;
}

export interface ToolContext {
  /** Working directory of the session; relative paths resolve against it. */
  cwd: string;
  sessionId: string;
  /** The profile the session runs as (its skills and memory); default: the home itself. */
  profile?: string;
  /** Aborted when the turn is interrupted. */
  signal: AbortSignal;
  /** Environment the tool sees (the daemon's, plus the session's overrides). */
  env: NodeJS.ProcessEnv;
  /** A line of progress for a long call (a queued video job): shown to the user while the tool runs, not given to the model. */
  progress?(text: string): void;
}

/** An OpenAI-style content part, for multimodal tool results. */
export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string; detail?: "auto" | "low" | "high" } };

export interface MultimodalResult {
  _multimodal: true;
  content: ContentPart[];
  /** What a provider that cannot take images is given instead. */
  text_summary: string;
}

export interface ToolResult {
  /** False when the tool failed; the model still sees `output` and goes on. */
  ok: boolean;
  /** What the model sees: a JSON-serializable value (an object for structured results) or a multimodal result. */
  output: unknown;
  /** Present for file mutations, so the loop can build the failed-edit footer. */
  mutation?: { path: string; ok: boolean };
  durationMs: number;
}

export interface ToolRegistry {
  /** Tools available in this context (availability checks applied). */
  specs(ctx?: Partial<ToolContext>): ToolSpec[];
  has(name: string): boolean;
  /** Validate the arguments and run the tool; never throws for tool failures (ok: false instead). */
  execute(name: string, args: unknown, ctx: ToolContext): Promise<ToolResult>;
  /** What to ask the approval service before running this call; null when the tool needs none (or the arguments are invalid). */
  approvalFor(name: string, args: unknown, ctx: ToolContext): Promise<ApprovalAsk | null>;
  /** Stop the worker pool. */
  close(): Promise<void>;
  /** Calls whose tools share a key may run concurrently (an MCP server with supports_parallel_tool_calls); absent or null: one at a time. */
  parallelKey?(name: string): string | null;
}

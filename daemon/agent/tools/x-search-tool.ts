/**
 * `x_search`: searches posts on X through the search vendor's Responses endpoint (its built-in
 * `x_search` tool), with the official openai client pointed at the vendor's base URL. The
 * answer comes back with its citations: URLs, titles and post ids.
 */
import { z } from "zod";
import type { AgentConfig } from "../../../shared/config/defaults.js";
import { ToolFailure } from "../../../shared/errors.js";
import { defineTool, type ToolDefinition } from "../../tools/definition.js";
import { upstreamFailure } from "./upstream-http.js";

export const X_SEARCH_DEFAULT_BASE = "https://api.x.ai/v1";

export interface XSearchDeps {
  config(profile: string | undefined): AgentConfig;
  /** An OAuth sign-in's current access token for the search vendor, when there is one (preferred over a key). */
  oauthToken?(profile: string | undefined): Promise<string | undefined>;
  /** Whether such a sign-in exists (synchronous: it decides whether the tool is offered). */
  signedIn?(profile: string | undefined): boolean;
}

/** The vendor's key: X_SEARCH_API_KEY, or the vendor's provider key. */
export function xSearchKey(env: NodeJS.ProcessEnv): string | undefined {
  return env.X_SEARCH_API_KEY || env.XAI_API_KEY || undefined;
}

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date as YYYY-MM-DD");
const handle = z.string().regex(/^@?[A-Za-z0-9_]{1,15}$/, "an X handle");
const Args = z
  .object({
    query: z.string().min(1).max(1_000).describe("What to search for"),
    include_handles: z.array(handle).max(10).optional().describe("Only posts by these handles"),
    exclude_handles: z.array(handle).max(10).optional().describe("No posts by these handles"),
    from_date: day.optional().describe("Posts from this day on (YYYY-MM-DD)"),
    to_date: day.optional().describe("Posts up to this day (YYYY-MM-DD)"),
    limit: z.number().int().min(1).max(50).optional().describe("At most this many results (default 10)"),
  })
  .strict()
  .refine((a) => !(a.include_handles?.length && a.exclude_handles?.length), "give include_handles or exclude_handles, not both");

export interface Citation {
  url: string;
  title?: string;
  post_id?: string;
}

/** The citations of a Responses answer: url_citation annotations of its message parts, then a top-level `citations` list. */
export function parseCitations(response: any): Citation[] {
  const seen = new Map<string, Citation>();
  const add = (url: unknown, title?: unknown) => {
    if (typeof url !== "string" || !url || seen.has(url)) return;
    const post = /\/status(?:es)?\/(\d+)/.exec(url)?.[1];
    seen.set(url, { url, ...(typeof title === "string" && title ? { title } : {}), ...(post ? { post_id: post } : {}) });
  };
  for (const item of response?.output ?? []) {
    for (const part of item?.content ?? []) for (const a of part?.annotations ?? []) if (a?.type === "url_citation") add(a.url, a.title);
  }
  for (const c of response?.citations ?? []) add(typeof c === "string" ? c : c?.url, c?.title);
  return [...seen.values()];
}

function answerText(response: any): string {
  if (typeof response?.output_text === "string" && response.output_text) return response.output_text;
  const parts: string[] = [];
  for (const item of response?.output ?? [])
    for (const part of item?.content ?? []) if (part?.type === "output_text" && typeof part.text === "string") parts.push(part.text);
  return parts.join("\n");
}

export function xSearchTool(deps: XSearchDeps): ToolDefinition<z.infer<typeof Args>> {
  return defineTool({
    name: "x_search",
    description: "Search recent posts on X (Twitter) and get an answer with citations (post URLs and ids). Filter by handles and dates.",
    toolset: "search",
    args: Args,
    requires: "X_SEARCH_API_KEY or XAI_API_KEY in the profile's .env, or an OAuth sign-in",
    available: (ctx) => Boolean(deps.signedIn?.(ctx.profile) || xSearchKey(ctx.env ?? {})),
    async run(args, ctx) {
      const cfg = deps.config(ctx.profile).x_search;
      // OAuth first, resolved per call (a refreshed token is picked up); the key otherwise.
      const token = (await deps.oauthToken?.(ctx.profile)) || xSearchKey(ctx.env);
      if (!token) throw new ToolFailure("not_configured", "x_search has no credential: set X_SEARCH_API_KEY (or XAI_API_KEY) in .env, or sign in");
      const { default: OpenAI } = await import("openai");
      const client = new OpenAI({ apiKey: token, baseURL: cfg.base_url || X_SEARCH_DEFAULT_BASE, timeout: cfg.timeout_seconds * 1000, maxRetries: 0 });
      const limit = args.limit ?? 10;
      const search: Record<string, unknown> = { type: "x_search" };
      if (args.include_handles?.length) search.allowed_x_handles = args.include_handles.map((h) => h.replace(/^@/, ""));
      if (args.exclude_handles?.length) search.excluded_x_handles = args.exclude_handles.map((h) => h.replace(/^@/, ""));
      if (args.from_date) search.from_date = args.from_date;
      if (args.to_date) search.to_date = args.to_date;
      const request = {
        model: cfg.model,
        instructions: `Search X for the user's query. Cite each post you use. Use at most ${limit} posts.`,
        input: args.query,
        tools: [search],
      };
      let lastError: unknown;
      for (let attempt = 0; attempt <= cfg.retries; attempt++) {
        try {
          const response = await client.responses.create(request as never, { signal: ctx.signal });
          const citations = parseCitations(response).slice(0, limit);
          return { ok: true, output: { success: true, answer: answerText(response), citations, model: cfg.model } };
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          const status = (error as { status?: number }).status;
          const body = (error as { error?: unknown }).error;
          const text = body === undefined ? (error as Error).message : JSON.stringify({ error: body });
          // A 429 fails at once with the vendor's words; a client error will not change on retry.
          if (status === 429 || (status !== undefined && status >= 400 && status < 500)) throw upstreamFailure("x_search", status, text);
          lastError =
            status !== undefined ? upstreamFailure("x_search", status, text) : new ToolFailure("upstream_unreachable", `x_search: ${(error as Error).message}`);
        }
      }
      throw lastError;
    },
  });
}

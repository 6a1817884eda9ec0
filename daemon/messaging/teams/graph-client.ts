/**
 * The Microsoft Graph client (@microsoft/microsoft-graph-client 3.0.7), loaded on first use
 * (a dynamic import: the daemon's start-up never pays for it), pointed at the configured root.
 *
 * The SDK's own authentication handler sends the token only to Microsoft's hosts over https and
 * strips it from anything else; a national cloud or a local fake would get no token. Our chain
 * instead sends it to the one configured root (TEAMS_GRAPH_BASE_URL, checked to be https or
 * loopback http by teams-settings.ts) and nowhere else: a request built from a notification is a
 * path under that root, never a full URL.
 */
import type { Client, Context, Middleware } from "@microsoft/microsoft-graph-client";
import { AgentError } from "../../../shared/errors.js";

export interface GraphAccess {
  token: string;
  /** `https://graph.microsoft.com/` (with the trailing slash). */
  baseUrl: string;
}

/** Adds the bearer token to requests under the configured root; refuses any other URL. */
class BearerForRoot implements Middleware {
  private next: Middleware | undefined;
  constructor(private readonly access: GraphAccess) {}
  async execute(context: Context): Promise<void> {
    const url = typeof context.request === "string" ? context.request : context.request.url;
    if (!url.startsWith(this.access.baseUrl)) throw new AgentError("teams.api_error", "a Graph request left the configured Graph root");
    const options = (context.options ??= {});
    const headers = new Headers(options.headers as ConstructorParameters<typeof Headers>[0]);
    headers.set("Authorization", `Bearer ${this.access.token}`);
    options.headers = Object.fromEntries(headers.entries());
    await this.next?.execute(context);
  }
  setNext(next: Middleware): void {
    this.next = next;
  }
}

export interface GraphClientHandle {
  client: Client;
  /** The SDK's response-type enum value for plain text (transcripts). */
  textResponse: string;
}

/** A Graph client for `access`: our bearer middleware, the SDK's retry handler (429/503 with Retry-After), then fetch. */
export async function graphClient(access: GraphAccess): Promise<GraphClientHandle> {
  const sdk = await import("@microsoft/microsoft-graph-client");
  const bearer = new BearerForRoot(access);
  const retry = new sdk.RetryHandler(new sdk.RetryHandlerOptions(1, 3));
  const http = new sdk.HTTPMessageHandler();
  bearer.setNext(retry);
  retry.setNext(http);
  const client = sdk.Client.initWithMiddleware({ middleware: bearer, baseUrl: access.baseUrl, defaultVersion: "v1.0" });
  return { client, textResponse: sdk.ResponseType.TEXT };
}

/** A Graph failure as an AgentError: status and Graph's code, never the token or the body beyond Graph's message. */
export function graphError(what: string, error: unknown): AgentError {
  if (error instanceof AgentError) return error;
  const e = error as { statusCode?: number; code?: string; message?: string };
  const status = typeof e?.statusCode === "number" && e.statusCode > 0 ? ` (HTTP ${e.statusCode}${e.code ? `, ${e.code}` : ""})` : "";
  const err = new AgentError("teams.api_error", `Graph ${what} failed${status}: ${String(e?.message ?? error).slice(0, 300)}`, {
    ...(e?.statusCode ? { status: e.statusCode } : {}),
  });
  // 4xx other than 429 will not get better by retrying.
  if (typeof e?.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500 && e.statusCode !== 429) Object.assign(err, { permanent: true });
  return err;
}

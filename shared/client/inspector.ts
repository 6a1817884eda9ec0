import { AgentError } from "../errors.js";

/** What `GET /gateway/{id}/inspector/summary` answers. */
export interface InspectorSummary {
  state: unknown;
  connections: Array<{ id: string; type: string; details: unknown }>;
  rpcs: string[];
  queueSize: number;
  isStateEnabled: boolean;
  isWorkflowEnabled: boolean;
  workflowHistory: WorkflowHistory | null;
}

export interface WorkflowHistory {
  nameRegistry: string[];
  entries: Array<{ id: string; location: unknown; kind: string | Record<string, unknown> }>;
  entryMetadata: Record<
    string,
    { status?: string; attempts?: number; error?: string | null; createdAt?: number; completedAt?: number | null; [k: string]: unknown }
  >;
}

export interface InspectorQueue {
  size: number;
  maxSize: number;
  truncated: boolean;
  messages: Array<{ id: string; name: string; createdAtMs: number }>;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status?: { code?: number; message?: string };
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

export interface InspectorTraces {
  otlp: { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
  clamped: boolean;
}

/**
 * The actor inspector over the daemon's HTTP gateway (the RPC surface has no inspector
 * methods). Sends the inspector token (`AGENT_INSPECTOR_TOKEN`) and the gateway token
 * (`AGENT_GATEWAY_TOKEN`) from the environment when they are set; without them the product's
 * internal actors are not reachable this way, and the caller says so.
 */
export class InspectorClient {
  constructor(
    private readonly gatewayUrl: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  private headers(): Record<string, string> {
    const h: Record<string, string> = { "content-type": "application/json" };
    if (this.env.AGENT_INSPECTOR_TOKEN) h.authorization = `Bearer ${this.env.AGENT_INSPECTOR_TOKEN}`;
    if (this.env.AGENT_GATEWAY_TOKEN) h["x-rivet-token"] = this.env.AGENT_GATEWAY_TOKEN;
    return h;
  }

  private async request<T>(actorId: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
    const url = `${this.gatewayUrl.replace(/\/$/, "")}/gateway/${encodeURIComponent(actorId)}/inspector/${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method: init.method ?? "GET",
        headers: this.headers(),
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new AgentError("daemon.connect_failed", `the gateway at ${this.gatewayUrl} does not answer: ${(error as Error).message}`);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    if (!res.ok) {
      const e = body as { group?: string; code?: string; message?: string } | null;
      const code = e?.group && e.code ? `${e.group}.${e.code}` : "internal.error";
      throw AgentError.received(code, e?.message ?? `HTTP ${res.status}`);
    }
    return body as T;
  }

  summary(actorId: string): Promise<InspectorSummary> {
    return this.request(actorId, "summary");
  }

  queue(actorId: string, limit = 50): Promise<InspectorQueue> {
    return this.request(actorId, `queue?limit=${limit}`);
  }

  traces(actorId: string, limit = 200): Promise<InspectorTraces> {
    return this.request(actorId, `traces?limit=${limit}`);
  }

  replay(actorId: string, entryId?: string): Promise<unknown> {
    return this.request(actorId, "workflow/replay", { method: "POST", body: entryId ? { entryId } : {} });
  }
}

import { z } from "zod";
import { rpc } from "./define.js";

/** The local OpenAI-compatible proxy (docs/proxy.md). */

export const PROXY_PATHS = ["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/models"] as const;

export interface ProxyStatus {
  running: boolean;
  url: string | null;
  host: string | null;
  port: number | null;
  provider: string | null;
  upstream: string | null;
  /** oauth, api_key or none: how upstream calls are authenticated (never the credential). */
  method: "oauth" | "api_key" | "none" | null;
  key_required: boolean;
  requests: number;
  started_at: string | null;
}

export interface ProxyProvider {
  name: string;
  base_url: string;
  method: "oauth" | "api_key" | "none";
  default: boolean;
}

export const proxyMethods = {
  "proxy.start": rpc<ProxyStatus>()(() =>
    z
      .object({
        provider: z.string().min(1).max(64).optional(),
        host: z.string().min(1).max(255).optional(),
        port: z.number().int().min(0).max(65535).optional(),
      })
      .strict(),
  ),
  "proxy.stop": rpc<{ stopped: boolean }>()(() => z.object({}).strict()),
  "proxy.status": rpc<ProxyStatus>()(() => z.object({}).strict()),
  "proxy.providers": rpc<{ providers: ProxyProvider[] }>()(() => z.object({}).strict()),
};

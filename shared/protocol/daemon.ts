import { z } from "zod";
import { rpc } from "./define.js";

export interface InitializeResult {
  protocolVersion: number;
  daemonVersion: string;
  pid: number;
  home: string;
  /** The profile this connection runs as. */
  profile: string;
}

export interface DaemonStatus {
  running: true;
  pid: number;
  version: string;
  /** The git commit the daemon's code was started from (a git install), else null. */
  commit: string | null;
  /** Where the application the daemon runs is installed (shared/install-info.ts). */
  app_dir: string;
  protocolVersion: number;
  home: string;
  socket: string;
  startedAt: number;
  uptimeMs: number;
  /** The actor gateway's URL, or null when it is not listening. */
  gateway_url: string | null;
  /** Whether a gateway token (gateway.token / AGENT_GATEWAY_TOKEN) is set; never its value. */
  gateway_token_set: boolean;
  connections: number;
  /** Per-component health, filled in by each subsystem. */
  components: Record<string, { status: "ok" | "degraded" | "error" | "disabled"; detail?: string }>;
}

export const daemonMethods = {
  initialize: rpc<InitializeResult>()(() =>
    z
      .object({
        protocolVersion: z.number().int(),
        clientVersion: z.string(),
        /** The profile the connection runs as; default: the active profile (`agent profile use`). */
        profile: z.string().min(1).max(200).optional(),
      })
      .strict(),
  ),
  "daemon.status": rpc<DaemonStatus>()(() => z.object({}).strict()),
  /** Graceful stop, as SIGTERM. Answers before the daemon exits. */
  "daemon.stop": rpc<{ ok: true; pid: number }>()(() => z.object({}).strict()),
  /** Reload config and `.env`, as SIGHUP. */
  "daemon.reload": rpc<{ ok: true }>()(() => z.object({}).strict()),
  /** Subscribe this connection to event topics (see events.ts). */
  "events.subscribe": rpc<{ ok: true; topics: string[] }>()(() => z.object({ topics: z.array(z.string().min(1)).min(1) }).strict()),
  "events.unsubscribe": rpc<{ ok: true; topics: string[] }>()(() => z.object({ topics: z.array(z.string().min(1)).min(1) }).strict()),
  /**
   * A round trip that does nothing: for health checks and benchmarks. `delayMs` holds the
   * answer back (cancellable), which lets tests have a call in flight (graceful shutdown).
   */
  ping: rpc<{ pong: true; at: number }>()(() => z.object({ delayMs: z.number().int().min(0).max(10_000).optional() }).strict()),
};

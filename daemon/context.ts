import type { HomePaths } from "../shared/paths.js";
import type { AgentConfig } from "../shared/config/defaults.js";
import type { FileLogSink, Logger } from "./log/logger.js";
import type { RpcServer } from "./rpc/server.js";

export type ComponentStatus = { status: "ok" | "degraded" | "error" | "disabled"; detail?: string };

/** Where the effective config comes from; reloaded on SIGHUP and `daemon.reload`. */
export interface ConfigSource {
  current(): AgentConfig;
  reload(): Promise<AgentConfig>;
}

/** What every daemon feature is given at start. Features talk to each other through `services`. */
export interface DaemonContext {
  home: string;
  paths: HomePaths;
  log: Logger;
  logSink: FileLogSink;
  rpc: RpcServer;
  config: ConfigSource;
  startedAt: number;
  /** Health per component, shown by `agent daemon status`. */
  components: Map<string, ComponentStatus>;
  /** Named services features expose to each other (small interfaces, not internals). */
  services: Map<string, unknown>;
  /** Set by features that serve HTTP, reported as `gateway_url`. */
  gatewayUrl: string | null;
}

/** A daemon feature: started in order at boot, stopped in reverse at shutdown. */
export interface Feature {
  name: string;
  start(ctx: DaemonContext): Promise<void>;
  stop?(): Promise<void>;
  /** Called after the config was reloaded (SIGHUP). */
  reload?(ctx: DaemonContext): Promise<void>;
}

export function getService<T>(ctx: DaemonContext, name: string): T {
  const service = ctx.services.get(name);
  if (!service) throw new Error(`service ${name} is not running`);
  return service as T;
}

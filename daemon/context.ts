import type { HomePaths } from "../shared/paths.js";
import type { ComputerUseApi } from "./computer-use/api.js";
import type { ActorRuntime } from "./actors/api.js";
import type { AgentConfig } from "../shared/config/defaults.js";
import type { FileLogSink, Logger } from "./log/logger.js";
import type { RpcServer } from "./rpc/server.js";
import type { LspPendingDiagnostics } from "../shared/protocol/lsp.js";
import type { UncaughtErrors } from "./uncaught.js";
import type { HttpPlugins } from "./http/plugins.js";
import type { ProfileSummary } from "../shared/protocol/profiles.js";
import { AgentError } from "../shared/errors.js";
import type { ChatApi } from "./agent/api.js";
import type { KanbanApi } from "./kanban/api.js";
import type { CronApi } from "./cron/api.js";
import type { ApprovalsApi } from "./approvals/api.js";
import type { McpApi } from "./mcp/api.js";
import type { ProxyApi } from "./proxy/api.js";
import type { ApiServerApi } from "./api-server/api.js";
import type { MessagingApi } from "./messaging/api.js";

export type ComponentStatus = { status: "ok" | "degraded" | "error" | "disabled"; detail?: string };

/** Where the effective config comes from; reloaded on SIGHUP and `daemon.reload`. */
export interface ConfigSource {
  current(): AgentConfig;
  reload(): Promise<AgentConfig>;
  /** Set one key in config.yaml (typed by its default, validated; the daemon is the only writer). */
  set(key: string, value: string | number | boolean): Promise<unknown>;
  /** The daemon's view of the environment: its own, with `.env` filling the gaps. */
  env(): NodeJS.ProcessEnv;
  /** A profile's effective config: its config.yaml and .env layered over the home's. */
  layered(paths: { config: string; env: string }): Promise<{ current(): AgentConfig; env(): NodeJS.ProcessEnv; warnings: string[] }>;
  /** Set one key in a profile's config.yaml, typed and validated as `set` does (over the home's). */
  setLayered(paths: { config: string; env: string }, key: string, value: string | number | boolean): Promise<unknown>;
  /** Set or (undefined) delete a whole subtree of config.yaml (the home's when `paths` is null), comments kept. */
  writeTree?(paths: { config: string; env: string } | null, path: string[], value: unknown): Promise<{ file: string; previous: unknown }>;
}

/**
 * The services features expose to each other, by name, with their types: small interfaces, not
 * internals. A feature that provides one adds it here.
 */
export interface DaemonServices {
  /** The effective config (daemon/main.ts). */
  config: ConfigSource;
  /** The actor runtime (the actors feature). */
  actors: ActorRuntime;
  /** The chat service (the agent feature): cron runs its jobs' turns through it. */
  chat: ChatApi;
  /** Profiles: which exist, each one's effective config and persona (daemon/profiles/). */
  profiles: ProfilesService;
  /** Language-server diagnostics around file writes (the lsp feature). */
  lsp: { beforeWrite(path: string, signal?: AbortSignal): Promise<LspPendingDiagnostics | undefined> };
  /** Routes features serve on the daemon's HTTP listener under `/api/` (the gateway feature). */
  httpPlugins: HttpPlugins;
  /** The gateway's listeners (the gateway feature): one more on a port of its own (the dashboard's `--port`). */
  gatewayListeners: GatewayListeners;
  /** The kanban boards (daemon/kanban/api.ts): the agent's kanban tools call the board through it. */
  kanban: KanbanApi;
  /** Scheduled jobs (daemon/cron/api.ts): profile deletion asks which jobs name a profile. */
  cron: CronApi;
  /** The approval service (daemon/approvals/api.ts): the one place that decides whether a risky tool call runs. */
  approvals: ApprovalsApi;
  /** MCP servers (daemon/mcp/api.ts): the tools a turn of a profile is offered. */
  mcp: McpApi;
  /** The local OpenAI-compatible proxy (daemon/proxy/api.ts). */
  proxy: ProxyApi;
  /** The OpenAI-compatible API server (daemon/api-server/api.ts). */
  apiServer: ApiServerApi;
  /** computer_use's desktops (daemon/computer-use/api.ts): the agent's computer_use tool drives them. */
  computerUse: ComputerUseApi;
  /** Messaging adapters (daemon/messaging/api.ts): cron delivers to a chat, a session is handed off to one. */
  messaging: MessagingApi;
}

/** The daemon's HTTP listeners (the gateway feature). */
export interface GatewayListeners {
  /** The gateway's URL as a browser on this machine reaches it (a wildcard bind shown as 127.0.0.1). */
  localUrl(): string;
  /**
   * Serve everything the gateway serves (same routes, plugins and access rules) on `port` too,
   * on the gateway's bind address; an existing extra listener on that port is reused. Its local URL.
   */
  listen(port: number): Promise<string>;
}

/** What other features need of the profiles (daemon/profiles/profile-service.ts implements it). */
export interface ProfilesService {
  /** Throws a clear error when the profile does not exist or its name is invalid. */
  check(name: string): string;
  /** Every profile of the home, `default` first. */
  names(): string[];
  /** The profile's effective config (cached; re-read when its files change or on reload). */
  config(name: string): Promise<{ current(): AgentConfig; env(): NodeJS.ProcessEnv }>;
  /** The profile's effective config as last read by `config` (the home's when never read). */
  loadedConfig(name: string): { current(): AgentConfig };
  /** Set one key in the profile's config.yaml (the home's for `default`); its cached config is dropped. */
  setConfig(name: string, key: string, value: string | number | boolean): Promise<unknown>;
  /** The profile's SOUL.md, or null. */
  soul(name: string): Promise<string | null>;
  /** Every profile with its description. */
  list(): ProfileSummary[];
  /** Set a description by hand (`text`) or have `generate` write one (`auto`). */
  describe(
    req: { names: string[]; text?: string; auto?: boolean; overwrite?: boolean },
    generate: (name: string) => Promise<string>,
  ): Promise<Array<{ name: string; description: string | null; description_auto: boolean; changed: boolean; note: string | null }>>;
}

/** One typed registry of the services: `provide` once, `get` (must be there). */
export class ServiceRegistry {
  private readonly services = new Map<keyof DaemonServices, unknown>();

  provide<K extends keyof DaemonServices>(name: K, service: DaemonServices[K]): void {
    if (this.services.has(name)) throw new AgentError("daemon.feature_order", `service ${name} is provided twice`, { service: name });
    this.services.set(name, service);
  }

  /**
   * The service; throws when no feature provides it (yet). A feature names what it needs in
   * `Feature.needs` and the daemon checks them at start (checkNeeds), so a `get` made while
   * serving cannot fail on a running daemon.
   */
  get<K extends keyof DaemonServices>(name: K): DaemonServices[K] {
    const service = this.services.get(name);
    if (service === undefined) throw new AgentError("daemon.service_unavailable", `the ${name} service is not running in this daemon`, { service: name });
    return service as DaemonServices[K];
  }

  has(name: keyof DaemonServices): boolean {
    return this.services.has(name);
  }
}

/**
 * Checks the features' declared needs against the order they start in: a `start` need must be
 * provided by a feature that starts before (or by main.ts, which provides `config`), a `serve`
 * need by any feature. Throws `daemon.feature_order` naming every unmet need; the daemon does
 * not start.
 */
export function checkNeeds(
  features: ReadonlyArray<Pick<Feature, "name" | "provides" | "needs">>,
  preset: ReadonlyArray<keyof DaemonServices> = ["config"],
): void {
  const provided = new Set<keyof DaemonServices>(preset);
  const all = new Set<keyof DaemonServices>(preset);
  for (const f of features) for (const s of f.provides ?? []) all.add(s);
  const problems: string[] = [];
  for (const f of features) {
    for (const s of f.needs?.start ?? [])
      if (!provided.has(s)) problems.push(`${f.name} needs ${s} at start, but ${all.has(s) ? "it starts later" : "no feature provides it"}`);
    for (const s of f.needs?.serve ?? []) if (!all.has(s)) problems.push(`${f.name} needs ${s}, but no feature provides it`);
    for (const s of f.provides ?? []) provided.add(s);
  }
  if (problems.length) throw new AgentError("daemon.feature_order", `the daemon's features do not fit together: ${problems.join("; ")}`, { problems });
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
  /** The services features expose to each other. */
  services: ServiceRegistry;
  /** Errors nothing caught: a feature claims those of the foreign code it hosts (daemon/uncaught.ts). */
  uncaught: UncaughtErrors;
  /** Set by features that serve HTTP, reported as `gateway_url`. */
  gatewayUrl: string | null;
}

/** A daemon feature: started in order at boot, stopped in reverse at shutdown. */
export interface Feature {
  name: string;
  /** The services this feature provides (with `services.provide` in `start`). */
  provides?: Array<keyof DaemonServices>;
  /**
   * The services it gets from others: `start` ones during its start (provided by an earlier
   * feature), `serve` ones only while serving (by any feature). Checked before anything starts.
   */
  needs?: { start?: Array<keyof DaemonServices>; serve?: Array<keyof DaemonServices> };
  start(ctx: DaemonContext): Promise<void>;
  stop?(): Promise<void>;
  /** Called after the config was reloaded (SIGHUP). */
  reload?(ctx: DaemonContext): Promise<void>;
  /** Called once the daemon reported ready: work that should not slow its start begins here. */
  ready?(): void;
}

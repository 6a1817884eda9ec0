import { z } from "zod";
import { AgentError } from "../../shared/errors.js";
import { profilePaths } from "../../shared/paths.js";
import type { McpServerEntry } from "../../shared/config/defaults.js";
import type { McpServerInfo, McpTestResult, McpToolInfo } from "../../shared/protocol/mcp.js";
import type { ProfilesService } from "../context.js";
import type { ToolDefinition } from "../tools/definition.js";
import { mergeServers, readMcpJson, type McpServerSpec } from "./config.js";
import type { Elicit, McpConnection } from "./connection.js";
import { key, toolNames } from "./names.js";
import { mapCallResult } from "./results.js";
import type { SpawnProcess } from "./spawn-server.js";

export interface McpManagerDeps {
  home: string;
  profiles: Pick<ProfilesService, "config" | "check">;
  log: { info(msg: string, data?: Record<string, unknown>): void; warn(msg: string, data?: Record<string, unknown>): void };
  spawnProcess: SpawnProcess;
  backoffMs?: number;
}

interface ProfileServers {
  connections: Map<string, McpConnection>;
  /** Entries that could not be used (a missing ${VAR}, no command or url), by server. */
  errors: Map<string, string>;
}

import type { McpTurnTool } from "./api.js";
export type { McpTurnTool };

const ANY_ARGS = z.record(z.string(), z.unknown());

/**
 * The daemon's MCP client side: one connection per server per profile, opened when a turn of
 * that profile first needs tools (never at daemon start), kept in step with the config.
 */
export class McpManager {
  readonly #profiles = new Map<string, ProfileServers>();
  #closed = false;

  constructor(private readonly deps: McpManagerDeps) {}

  async serverEntries(profile: string): Promise<Record<string, McpServerEntry>> {
    const view = await this.deps.profiles.config(profile);
    const fromConfig = (view.current().mcp_servers ?? {}) as Record<string, McpServerEntry>;
    const fromJson = await readMcpJson(profilePaths(this.deps.home, profile).dir);
    const out: Record<string, McpServerEntry> = {};
    for (const name of [...new Set([...Object.keys(fromJson), ...Object.keys(fromConfig)])].sort()) {
      const c = fromConfig[name];
      const e: McpServerEntry = { ...(fromJson[name] ?? {}), ...(c ?? {}) };
      if (c?.command !== undefined) delete e.url;
      if (c?.url !== undefined) delete e.command;
      if (e.command !== undefined || e.url !== undefined) out[name] = e;
    }
    return out;
  }

  /** The profile's servers as configured now (a changed entry's connection is replaced). */
  async servers(profile: string): Promise<ProfileServers> {
    if (this.#closed) throw new AgentError("daemon.stopping", "the daemon is stopping");
    const view = await this.deps.profiles.config(profile);
    const fromConfig = (view.current().mcp_servers ?? {}) as Record<string, McpServerEntry>;
    const fromJson = await readMcpJson(profilePaths(this.deps.home, profile).dir);
    const { servers, errors } = mergeServers(fromConfig, fromJson, view.env());
    // The SDK client (with ajv and the transports, ~170 ms of CPU) loads with the first server a
    // profile uses, not at daemon start: most starts never talk to an MCP server.
    this.#Connection ??= (await import("./connection.js")).McpConnection;
    let known = this.#profiles.get(profile);
    if (!known) {
      known = { connections: new Map(), errors: new Map() };
      this.#profiles.set(profile, known);
    }
    known.errors = new Map(errors.map((e) => [e.name, e.error.message]));
    const wanted = new Map(servers.map((s) => [s.name, s]));
    for (const [name, conn] of known.connections) {
      const next = wanted.get(name);
      if (!next || fingerprint(next) !== fingerprint(conn.spec)) {
        known.connections.delete(name);
        void conn.close();
      }
    }
    for (const spec of servers) if (!known.connections.has(spec.name)) known.connections.set(spec.name, this.#connection(spec));
    return known;
  }

  #Connection: typeof McpConnection | undefined;

  /** Only after `servers()` (which loads the class). */
  #connection(spec: McpServerSpec): McpConnection {
    return new this.#Connection!(spec, { spawnProcess: this.deps.spawnProcess, log: this.deps.log, backoffMs: this.deps.backoffMs ?? 1_000 });
  }

  /**
   * The tools a turn of `profile` is offered: every enabled server is connected (at once, in
   * parallel) and listed; a server that fails is left out with a notice naming it.
   */
  async turnTools(profile: string, taken: Iterable<string>, elicit?: Elicit): Promise<{ tools: McpTurnTool[]; notices: string[] }> {
    const known = await this.servers(profile);
    const notices = [...known.errors].map(([name, message]) => `MCP server ${name} is not used: ${message}`);
    const conns = [...known.connections.values()].filter((c) => c.state !== "disabled");
    await Promise.all(conns.map((c) => c.ensure()));
    const pairs: Array<{ server: string; tool: string }> = [];
    for (const c of conns) {
      if (c.state !== "ready") notices.push(`MCP server ${c.spec.name} is unavailable, its tools are left out: ${c.lastError ?? c.state}`);
      else for (const t of c.tools) pairs.push({ server: c.spec.name, tool: t.name });
    }
    const names = toolNames(pairs, taken);
    const tools: McpTurnTool[] = [];
    for (const c of conns) {
      if (c.state !== "ready") continue;
      for (const t of c.tools) {
        const name = names.get(key(c.spec.name, t.name))!;
        tools.push({ definition: this.#definition(c, t.name, name, t.description, t.inputSchema, elicit), server: c.spec.name, parallel: c.spec.parallel });
      }
    }
    return { tools, notices };
  }

  #definition(conn: McpConnection, tool: string, name: string, description: string, schema: Record<string, unknown>, elicit?: Elicit) {
    const server = conn.spec.name;
    return {
      name,
      description: description || `${tool} (MCP server ${server})`,
      toolset: "mcp",
      args: ANY_ARGS,
      parameters: schema,
      approval: (args: Record<string, unknown>) => {
        const shown = JSON.stringify(args);
        return {
          kind: "mcp_tool" as const,
          tool: name,
          summary: `${server}/${tool} ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}`,
          details: { server, tool, args },
        };
      },
      run: async (args: Record<string, unknown>, ctx: { signal: AbortSignal }) => mapCallResult(await conn.call(tool, args, { signal: ctx.signal, elicit })),
    } satisfies ToolDefinition<Record<string, unknown>>;
  }

  /** `agent mcp list`: each server with its state, tool count and last error (nothing is started). */
  async list(profile: string): Promise<McpServerInfo[]> {
    const known = await this.servers(profile);
    const names = [...new Set([...known.connections.keys(), ...known.errors.keys()])].sort();
    return names.map((name) => {
      const c = known.connections.get(name);
      if (!c)
        return {
          name,
          transport: "stdio",
          source: "config.yaml",
          state: "failed",
          tools: 0,
          last_error: known.errors.get(name) ?? null,
          pid: null,
          stderr_tail: null,
          warnings: [],
        };
      return info(c);
    });
  }

  #find(known: ProfileServers, name: string): McpConnection {
    const c = known.connections.get(name);
    if (c) return c;
    const error = known.errors.get(name);
    if (error) throw new AgentError("mcp.invalid_config", error, { server: name });
    const all = [...known.connections.keys()];
    throw new AgentError("mcp.not_found", `no MCP server named ${name}${all.length ? ` (configured: ${all.join(", ")})` : " (none is configured)"}`, {
      server: name,
    });
  }

  /** `agent mcp tools <server>`: connects when needed. */
  async tools(profile: string, name: string): Promise<{ server: McpServerInfo; tools: McpToolInfo[] }> {
    const c = this.#find(await this.servers(profile), name);
    if (c.state === "disabled") throw new AgentError("mcp.disabled", `MCP server ${name} is disabled (enabled: false)`, { server: name });
    await c.ensure({ force: true });
    if (c.state !== "ready") throw new AgentError("mcp.unavailable", `MCP server ${name} is unavailable: ${c.lastError ?? c.state}`, { server: name });
    const names = toolNames(c.tools.map((t) => ({ server: name, tool: t.name })));
    return {
      server: info(c),
      tools: c.tools.map((t) => ({ name: t.name, model_name: names.get(key(name, t.name))!, description: t.description, input_schema: t.inputSchema })),
    };
  }

  /** `agent mcp test <server>`: a fresh connection, its tools listed, the timings. */
  async test(profile: string, name: string): Promise<McpTestResult> {
    const known = await this.servers(profile);
    const old = this.#find(known, name);
    const probe = this.#connection({ ...old.spec, enabled: true });
    const t0 = performance.now();
    try {
      await probe.ensure({ force: true });
      const total = Math.round((performance.now() - t0) * 10) / 10;
      if (probe.state !== "ready")
        return {
          server: name,
          ok: false,
          error: probe.lastError ?? probe.state,
          stderr_tail: probe.stderr || null,
          tools: [],
          warnings: [],
          timings: { total_ms: total },
        };
      return {
        server: name,
        ok: true,
        error: null,
        stderr_tail: null,
        tools: probe.tools.map((t) => t.name),
        warnings: probe.warnings,
        timings: { connect_ms: probe.timings?.connectMs, list_ms: probe.timings?.listMs, total_ms: total },
      };
    } finally {
      await probe.close();
    }
  }

  /** `agent mcp restart <server>`: stopped now, started again by the next turn (or `mcp tools`). */
  async restart(profile: string, name: string): Promise<McpServerInfo> {
    const known = await this.servers(profile);
    const old = this.#find(known, name);
    await old.close();
    const fresh = this.#connection(old.spec);
    known.connections.set(name, fresh);
    await fresh.ensure({ force: true });
    return info(fresh);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#profiles.values()].flatMap((p) => [...p.connections.values()]);
    this.#profiles.clear();
    await Promise.all(all.map((c) => c.close().catch(() => undefined)));
  }
}

function fingerprint(spec: McpServerSpec): string {
  return JSON.stringify(spec);
}

function info(c: McpConnection): McpServerInfo {
  return {
    name: c.spec.name,
    transport: c.spec.transport,
    source: c.spec.source,
    state: c.state,
    tools: c.tools.length,
    last_error: c.lastError,
    pid: c.pid,
    stderr_tail: c.stderr || null,
    warnings: c.warnings,
  };
}

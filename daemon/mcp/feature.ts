import { envNumber, envValue } from "../../shared/config/env.js";
import { mcpEntryProblems } from "../../shared/config/mcp-schema.js";
import { AgentError } from "../../shared/errors.js";
import { DEFAULT_PROFILE, profilePaths } from "../../shared/paths.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { readMcpJson } from "./config.js";
import { McpManager } from "./manager.js";
import { spawnServer } from "./spawn-server.js";

/**
 * MCP servers (docs/mcp.md): the client manager that turns of every profile get their MCP tools
 * from, and the `mcp.*` RPC group. Nothing connects at start: a server starts at the first turn
 * (or command) of its profile that needs it.
 */
export function mcpFeature(): Feature {
  let manager: McpManager | null = null;
  return {
    name: "mcp",
    provides: ["mcp"],
    needs: { start: ["profiles"], serve: [] },
    async start(ctx: DaemonContext) {
      const profiles = ctx.services.get("profiles");
      const m = new McpManager({
        home: ctx.home,
        profiles,
        log: ctx.log,
        spawnProcess: spawnServer,
        backoffMs: envValue("AGENT_MCP_BACKOFF_MS") === undefined ? undefined : envNumber("AGENT_MCP_BACKOFF_MS", 1000, (n) => n >= 0),
      });
      manager = m;
      ctx.services.provide("mcp", m);
      ctx.rpc.register(handlers(ctx, m));
      // Every profile's mcp.json is checked now (config.yaml's entries were checked with the config):
      // a bad entry is reported by server and key at start, not at first use.
      const problems: string[] = [];
      for (const name of profiles.names()) {
        await readMcpJson(profilePaths(ctx.home, name).dir).catch((error) => {
          const message = error instanceof Error ? error.message : String(error);
          problems.push(message);
          ctx.log.warn(`mcp: profile ${name}: ${message}`);
        });
      }
      ctx.components.set("mcp", problems.length ? { status: "degraded", detail: problems.join("; ") } : { status: "ok", detail: "servers start on first use" });
    },
    async stop() {
      await manager?.close();
    },
  };
}

function handlers(ctx: DaemonContext, m: McpManager): Partial<Handlers> {
  const write = async (profile: string, path: string[], value: unknown) => {
    if (!ctx.config.writeTree) throw new AgentError("internal.error", "config writes are not available");
    return ctx.config.writeTree(profile === DEFAULT_PROFILE ? null : profilePaths(ctx.home, profile), path, value);
  };
  return {
    "mcp.list": async ({ profile }, call) => {
      const name = profile === undefined ? call.profile : ctx.services.get("profiles").check(profile);
      return { profile: name, servers: await m.list(name) };
    },
    "mcp.tools": async ({ server }, call) => ({ profile: call.profile, ...(await m.tools(call.profile, server)) }),
    "mcp.test": async ({ server }, call) => ({ profile: call.profile, ...(await m.test(call.profile, server)) }),
    "mcp.restart": async ({ server }, call) => ({ profile: call.profile, server: await m.restart(call.profile, server) }),
    "mcp.add": async ({ server, entry, replace }, call) => {
      const clean = Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined));
      const problems = mcpEntryProblems(server, clean, "mcp add");
      if (problems.length) throw problems[0]!;
      const existing = (await ctx.services.get("profiles").config(call.profile)).current().mcp_servers?.[server];
      if (existing && !replace)
        throw new AgentError("mcp.exists", `an MCP server named ${server} is configured already (agent mcp remove ${server} first)`, { server });
      const r = await write(call.profile, ["mcp_servers", server], clean);
      ctx.log.info("mcp server added", { server, profile: call.profile });
      return { profile: call.profile, file: r.file, server, replaced: Boolean(existing) };
    },
    "mcp.enable": async ({ server, enabled }, call) => {
      const known = await m.list(call.profile);
      if (!known.some((s) => s.name === server))
        throw new AgentError("mcp.not_found", `no MCP server named ${server} in profile ${call.profile} (agent mcp list)`, { server });
      const r = await write(call.profile, ["mcp_servers", server, "enabled"], enabled);
      await m.servers(call.profile).catch(() => undefined); // starts or stops its connection's state now
      ctx.log.info(enabled ? "mcp server enabled" : "mcp server disabled", { server, profile: call.profile });
      return { profile: call.profile, file: r.file, server, enabled };
    },
    "mcp.remove": async ({ server }, call) => {
      const existing = (await ctx.services.get("profiles").config(call.profile)).current().mcp_servers?.[server];
      if (!existing) throw new AgentError("mcp.not_found", `no MCP server named ${server} in the profile's config.yaml`, { server });
      const r = await write(call.profile, ["mcp_servers", server], undefined);
      if (r.previous === undefined)
        throw new AgentError("mcp.not_found", `${server} is configured in the home's config.yaml, not this profile's; remove it there (without -p)`, {
          server,
        });
      await m.servers(call.profile).catch(() => undefined); // stops its connection now
      ctx.log.info("mcp server removed", { server, profile: call.profile });
      return { profile: call.profile, file: r.file, server };
    },
  };
}

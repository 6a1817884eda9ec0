import { AgentError } from "../../shared/errors.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { ConfigSource, ProfilesService } from "../context.js";
import { skillsIndex } from "./skills/prompt.js";
import type { SkillsService } from "./skills/skills-service.js";
import type { ToolRegistry } from "../tools/types.js";
import type { ApprovalsApi } from "../approvals/api.js";
import type { McpApi } from "../mcp/api.js";
import { TurnToolRegistry } from "../tools/turn-tools.js";

/**
 * What a kanban worker gets from the daemon so its turn has what a daemon turn has: the
 * profile's skills index and memory block for its system prompt, and the tools whose state the
 * daemon owns (skill_view reads the daemon's skill catalog, memory writes the profile's memory
 * stores, and the daemon is their only writer). The worker runs its file and terminal tools
 * itself and these through `chat.worker.tool`.
 */
const HOSTED_TOOLSETS = new Set(["skills", "memory"]);
/** What `agent mcp serve` offers other MCP clients from the daemon (the kanban tools it runs itself). */
const SERVED_TOOLSETS = new Set(["skills", "memory", "sessions"]);

export function workerHostHandlers(deps: {
  skills: SkillsService;
  tools: ToolRegistry;
  profiles: ProfilesService;
  config: ConfigSource;
  /** The MCP feature: a worker is offered its profile's MCP tools, run here (the daemon owns the connections). */
  mcp: () => McpApi;
  /** The one approval service: an MCP call a worker asks for is decided there (never allowed by default). */
  approvals: () => ApprovalsApi;
}): Partial<Handlers> {
  const { skills, tools, profiles } = deps;
  const mcpTools = async (profile: string) => {
    const mcp = deps.mcp();
    const got = await mcp.turnTools(
      profile,
      tools.specs({ profile }).map((s) => s.name),
    );
    return new TurnToolRegistry(null, got.tools);
  };
  const toolContext = async (profile: string) => {
    // Loads the profile's config, which tool availability (memory on or off) reads.
    const view = await profiles.config(profile);
    return { profile, env: view.env() };
  };
  return {
    "chat.worker.context": async ({ serve }, call) => {
      const ctx = await toolContext(call.profile);
      const sections: string[] = [];
      const listed = await skills.catalog.list(call.profile).then(
        (l) => l.skills,
        () => [],
      );
      const index = skillsIndex(listed);
      if (index) sections.push(index);
      const memory = await skills.memory.block(call.profile).catch(() => null);
      if (memory) sections.push(memory);
      // `agent mcp serve` gets session_search too, and never the MCP tools (it is one of them).
      if (serve) return { sections, tools: tools.specs(ctx).filter((s) => SERVED_TOOLSETS.has(s.toolset)) };
      const mcp = await mcpTools(call.profile).catch(() => null);
      return { sections, tools: [...tools.specs(ctx).filter((s) => HOSTED_TOOLSETS.has(s.toolset)), ...(mcp?.specs() ?? [])] };
    },
    "chat.worker.tool": async ({ sessionId, name, args, cwd, serve }, call) => {
      const ctx = await toolContext(call.profile);
      if (!serve && name.startsWith("mcp_")) {
        const mcp = await mcpTools(call.profile);
        if (mcp?.has(name)) {
          const full = { ...ctx, cwd, sessionId, signal: call.signal };
          // The one approval service decides, with nobody to ask (a worker is non-interactive).
          const ask = await mcp.approvalFor(name, args, full);
          if (ask) {
            const d = await deps.approvals().decide(ask, {
              sessionId,
              turnId: null,
              profile: call.profile,
              workspace: cwd,
              interactive: () => false,
              signal: call.signal,
            });
            if (!d.allowed) return { ok: false, output: { error: d.message, denied: true, not_run: true } };
          }
          const result = await mcp.execute(name, args, full);
          return { ok: result.ok, output: result.output };
        }
      }
      const spec = tools.specs(ctx).find((s) => s.name === name);
      if (!spec || !(serve ? SERVED_TOOLSETS : HOSTED_TOOLSETS).has(spec.toolset))
        throw new AgentError("usage.invalid", `${name} is not a tool the daemon runs for workers`);
      const result = await tools.execute(name, args, { ...ctx, cwd, sessionId, signal: call.signal });
      return { ok: result.ok, output: result.output };
    },
  };
}

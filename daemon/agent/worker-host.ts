import { AgentError } from "../../shared/errors.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { ConfigSource, ProfilesService } from "../context.js";
import { skillsIndex } from "./skills/prompt.js";
import type { SkillsService } from "./skills/skills-service.js";
import type { ToolRegistry } from "./tools/types.js";

/**
 * What a kanban worker gets from the daemon so its turn has what a daemon turn has: the
 * profile's skills index and memory block for its system prompt, and the tools whose state the
 * daemon owns (skill_view reads the daemon's skill catalog, memory writes the profile's memory
 * stores, and the daemon is their only writer). The worker runs its file and terminal tools
 * itself and these through `chat.worker.tool`.
 */
const HOSTED_TOOLSETS = new Set(["skills", "memory"]);

export function workerHostHandlers(deps: { skills: SkillsService; tools: ToolRegistry; profiles: ProfilesService; config: ConfigSource }): Partial<Handlers> {
  const { skills, tools, profiles } = deps;
  const toolContext = async (profile: string) => {
    // Loads the profile's config, which tool availability (memory on or off) reads.
    const view = await profiles.config(profile);
    return { profile, env: view.env() };
  };
  return {
    "chat.worker.context": async (_p, call) => {
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
      return { sections, tools: tools.specs(ctx).filter((s) => HOSTED_TOOLSETS.has(s.toolset)) };
    },
    "chat.worker.tool": async ({ sessionId, name, args, cwd }, call) => {
      const ctx = await toolContext(call.profile);
      const spec = tools.specs(ctx).find((s) => s.name === name);
      if (!spec || !HOSTED_TOOLSETS.has(spec.toolset)) throw new AgentError("usage.invalid", `${name} is not a tool the daemon runs for workers`);
      const result = await tools.execute(name, args, { ...ctx, cwd, sessionId, signal: call.signal });
      return { ok: result.ok, output: result.output };
    },
  };
}

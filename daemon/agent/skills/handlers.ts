import { AgentError } from "../../../shared/errors.js";
import type { Handlers } from "../../../shared/protocol/index.js";
import type { SkillInfo, SkillListResult } from "../../../shared/protocol/skills.js";
import type { SkillListing } from "./catalog.js";
import type { SkillsService } from "./skills-service.js";

const info = (l: SkillListing): SkillListResult => ({
  profile: l.profile,
  dir: l.dir,
  skills: l.skills.map((s): SkillInfo => ({ slug: s.slug, name: s.name, description: s.description, dir: s.dir, category: s.category })),
  warnings: l.warnings,
});

/** The skills, bundles and memory RPC groups. */
export function skillsHandlers(skills: SkillsService): Partial<Handlers> {
  return {
    // The CLI's global --profile arrives as the connection's profile (the active one without it).
    "skills.list": async ({ profile }, call) => info(await skills.catalog.list(profile ?? call.profile)),
    "skills.reload": async ({ profile }, call) => info(await skills.catalog.reload(profile ?? call.profile)),
    "skills.resolve": async ({ profile, name }, call) => {
      const { kind, slug, name: n, skills: loaded, missing } = await skills.expand(profile ?? call.profile, name);
      return { kind, slug, name: n, skills: loaded, missing };
    },
    "bundles.list": () => skills.bundles.list(),
    "bundles.reload": () => skills.bundles.reload(),
    "bundles.show": async ({ name, profile }, call) => {
      const bundle = skills.bundles.get(name);
      if (!bundle) throw notFound(name);
      const as = profile ?? call.profile;
      const list = await skills.bundleSkills(bundle, as);
      return { bundle, skills: list, profile: as };
    },
    "bundles.create": async (p, call) => {
      const { bundle, replaced } = await skills.bundles.create(p);
      const list = await skills.bundleSkills(bundle, p.profile ?? call.profile).catch(() => []);
      return { bundle, replaced, missing: list.filter((s) => !s.found).map((s) => s.name) };
    },
    "bundles.delete": ({ name }) => skills.bundles.delete(name),
    "memory.status": ({ profile }, call) => skills.memory.status(profile ?? call.profile),
    "memory.setup": ({ profile }, call) => skills.memory.setup(profile ?? call.profile),
    "memory.off": ({ profile }, call) => skills.memory.off(profile ?? call.profile),
  };
}

function notFound(name: string): AgentError {
  return new AgentError("bundles.not_found", `no bundle "${name.slice(0, 80)}"; agent bundles list shows them`);
}

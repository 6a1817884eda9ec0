import { join } from "node:path";
import { AgentError } from "../../../shared/errors.js";
import { DEFAULT_PROFILE } from "../../../shared/paths.js";
import type { ActorKv } from "../../actors/api.js";
import type { DaemonContext, ProfilesService } from "../../context.js";
import { MemoryService } from "../memory/memory-service.js";
import { BundleStore, type Bundle } from "./bundles.js";
import { findSkill, SkillCatalog } from "./catalog.js";
import { bundleMessage, skillMessage, skillsIndex } from "./prompt.js";
import { readSkillFile, splitFrontMatter, type Skill } from "../../skill-files/skill-file.js";

export interface SlashExpansion {
  kind: "skill" | "bundle";
  slug: string;
  name: string;
  /** The skills loaded (their names). */
  skills: string[];
  /** Skills of a bundle that are not installed (skipped). */
  missing: string[];
  /** The user message the daemon puts into the conversation. */
  message: string;
}

/**
 * Skills, skill bundles and memory, per profile: what `/<name>` loads, what the system prompt
 * lists, and what the `skill_view` and `memory` tools reach.
 */
export class SkillsService {
  readonly catalog: SkillCatalog;
  readonly bundles: BundleStore;
  readonly memory: MemoryService;

  readonly #profiles: ProfilesService;

  constructor(private readonly ctx: DaemonContext) {
    const log = ctx.logSink.logger("skills");
    // The profiles feature starts before the agent (daemon/features.ts): it says which profiles exist.
    this.#profiles = ctx.services.get("profiles");
    this.catalog = new SkillCatalog(ctx.home, this.#profiles, log);
    this.bundles = new BundleStore(join(ctx.home, "skill-bundles"), log);
    this.memory = new MemoryService(ctx.home, this.#profiles, ctx.logSink.logger("memory"));
  }

  async start(): Promise<void> {
    await this.bundles.start();
    // The home's own skills are scanned (and watched) at start; other profiles' on first use.
    await this.catalog.list().catch((error) => this.ctx.log.warn("skills scan failed", { error: String(error) }));
  }

  async stop(): Promise<void> {
    await this.bundles.stop();
    await this.catalog.stop();
  }

  /**
   * What `/<name>` loads for a profile: a bundle of that slug (a bundle wins over a skill of the
   * same slug), else a skill; `skills.not_found` when neither exists.
   */
  async expand(profile: string | undefined, name: string, args = ""): Promise<SlashExpansion> {
    const bundle = this.bundles.get(name);
    const { skills } = bundle ? await this.catalog.list(profile) : await this.catalog.listFor(profile, name);
    if (bundle) return this.#expandBundle(bundle, skills, args);
    const skill = findSkill(skills, name);
    if (!skill) throw new AgentError("skills.not_found", `no skill or bundle named "${name.slice(0, 80)}"`, { name: name.slice(0, 80) });
    const text = await skillBody(skill);
    return { kind: "skill", slug: skill.slug, name: skill.name, skills: [skill.name], missing: [], message: skillMessage(skill, text, args) };
  }

  async #expandBundle(bundle: Bundle, skills: Skill[], args: string): Promise<SlashExpansion> {
    const found: Array<{ skill: Skill; text: string }> = [];
    const missing: string[] = [];
    for (const name of bundle.skills) {
      const skill = findSkill(skills, name);
      if (!skill) {
        missing.push(name);
        continue;
      }
      if (found.some((f) => f.skill === skill)) continue;
      try {
        found.push({ skill, text: await skillBody(skill) });
      } catch {
        missing.push(name); // removed since the scan
      }
    }
    return {
      kind: "bundle",
      slug: bundle.slug,
      name: bundle.name,
      skills: found.map((f) => f.skill.name),
      missing,
      message: bundleMessage(bundle, found, missing, args),
    };
  }

  /** Skills of each bundle that the profile has, and those it lacks. */
  async bundleSkills(bundle: Bundle, profile?: string): Promise<Array<{ name: string; found: boolean; skill: string | null }>> {
    const { skills } = await this.catalog.list(profile);
    return bundle.skills.map((name) => {
      const s = findSkill(skills, name);
      return { name, found: Boolean(s), skill: s ? s.slug : null };
    });
  }

  /**
   * The system prompt's additions for a session's turn: the skills index (as the skills are
   * now) and the memory block (frozen at the session's first turn). A profile without a folder
   * adds nothing rather than failing the turn.
   */
  async systemSections(kv: ActorKv, profile: string | undefined): Promise<string[]> {
    const sections: string[] = [];
    if (this.#exists(profile)) {
      const skills = await this.catalog.list(profile).then(
        (l) => l.skills,
        () => [],
      );
      const index = skillsIndex(skills);
      if (index) sections.push(index);
    }
    const memory = await this.memory.sessionBlock(kv, profile).catch(() => null);
    if (memory) sections.push(memory);
    return sections;
  }

  #exists(profile: string | undefined): boolean {
    try {
      this.#profiles.check(profile ?? DEFAULT_PROFILE);
      return true;
    } catch {
      return false;
    }
  }
}

/** A skill's instructions without its front matter. */
export async function skillBody(skill: Skill): Promise<string> {
  const text = await readSkillFile(skill.file).catch((error: Error) => {
    throw new AgentError("skills.unreadable", `skill ${skill.name}: ${skill.file} ${error.message}`);
  });
  return splitFrontMatter(text)?.body ?? text;
}

import { mkdirSync } from "node:fs";
import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../log/logger.js";
import { DEFAULT_PROFILE, profilePaths } from "../../../shared/paths.js";
import type { ProfilesService } from "../../context.js";
import { slugify, type Skill } from "../../skill-files/skill-file.js";
import { scanSkills } from "../../skill-files/scan.js";

export { scanSkills, type SkillFailure } from "../../skill-files/scan.js";
import { watchFolder, type FolderWatch } from "./watch.js";

export interface SkillListing {
  profile: string;
  dir: string;
  skills: Skill[];
  /** Skills skipped (bad front matter, duplicates, unreadable), one line each. */
  warnings: string[];
}

interface ProfileSkills {
  listing: SkillListing;
  /** Scans run one at a time, in order. */
  chain: Promise<SkillListing>;
  watch: FolderWatch | null;
}

/**
 * The skills of each profile (`<profile>/skills/<skill>/SKILL.md`, or one category folder deep:
 * `skills/<category>/<skill>/SKILL.md`), scanned on first use, cached, and rescanned when the
 * folder changes (chokidar) or on `/reload-skills`. A bad SKILL.md is skipped with a warning in
 * the daemon log; it never fails a scan.
 */
export class SkillCatalog {
  readonly #profiles = new Map<string, Promise<ProfileSkills>>();
  #stopped = false;

  constructor(
    private readonly home: string,
    private readonly profiles: Pick<ProfilesService, "check">,
    private readonly log: Logger,
    private readonly options: { watch: boolean } = { watch: true },
  ) {}

  /** The profile's skills (scanned on first use); refuses a profile that does not exist. */
  async list(profile?: string): Promise<SkillListing> {
    return (await this.#entry(profile)).chain;
  }

  /** Scan the profile's skills folder again now. */
  async reload(profile?: string): Promise<SkillListing> {
    const entry = await this.#entry(profile);
    return this.#rescan(entry);
  }

  /** The skills already scanned for a profile (none before its first scan); synchronous. */
  cached(profile = "default"): Skill[] {
    return this.#loaded.get(profile) ?? [];
  }

  readonly #loaded = new Map<string, Skill[]>();

  /** A skill by its name, slug, folder name or `<category>/<folder>`. */
  async find(profile: string | undefined, name: string): Promise<Skill | null> {
    return findSkill((await this.listFor(profile, name)).skills, name);
  }

  /**
   * The listing, scanned again first when it lacks `name`: a skill written a moment ago is
   * reported by the watcher only once its files have been still for a while (watch.ts), and a
   * command naming it right away must find it.
   */
  async listFor(profile: string | undefined, name: string): Promise<SkillListing> {
    const listing = await this.list(profile);
    return findSkill(listing.skills, name) ? listing : this.reload(profile);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const p of this.#profiles.values()) await (await p.catch(() => null))?.watch?.close();
  }

  #entry(profileName?: string): Promise<ProfileSkills> {
    // An unknown profile is refused (the profiles' own error), never created by a typo.
    const paths = profilePaths(this.home, this.profiles.check(profileName ?? DEFAULT_PROFILE));
    let entry = this.#profiles.get(paths.name);
    if (!entry) {
      entry = (async () => {
        const e: ProfileSkills = {
          listing: { profile: paths.name, dir: paths.skills, skills: [], warnings: [] },
          chain: Promise.resolve(null as never),
          watch: null,
        };
        e.chain = this.#scan(e);
        await e.chain;
        if (this.options.watch && !this.#stopped) {
          try {
            mkdirSync(paths.skills, { recursive: true });
            e.watch = await watchFolder(paths.skills, 2, () => void this.#rescan(e), this.log);
          } catch (error) {
            this.log.warn("cannot watch the skills folder; /reload-skills still rescans it", { dir: paths.skills, error: String(error) });
          }
        }
        return e;
      })();
      this.#profiles.set(paths.name, entry);
      entry.catch(() => this.#profiles.delete(paths.name));
    }
    return entry;
  }

  #rescan(e: ProfileSkills): Promise<SkillListing> {
    e.chain = e.chain.catch(() => e.listing).then(() => this.#scan(e));
    return e.chain;
  }

  async #scan(e: ProfileSkills): Promise<SkillListing> {
    const { dir, profile } = e.listing;
    const found = await scanSkills(dir);
    for (const w of found.warnings) this.log.warn("skill skipped", { profile, warning: w });
    e.listing = { profile, dir, skills: found.skills, warnings: found.warnings };
    this.#loaded.set(profile, found.skills);
    return e.listing;
  }
}

export function findSkill(skills: Skill[], name: string): Skill | null {
  const wanted = name.trim().replace(/^\/+/, "");
  const slug = slugify(wanted);
  return (
    skills.find((s) => s.slug === slug) ??
    skills.find((s) => s.folder === wanted || slugify(s.folder) === slug) ??
    skills.find((s) => s.category !== null && `${s.category}/${s.folder}` === wanted) ??
    null
  );
}

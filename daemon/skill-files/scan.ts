/**
 * Reads a skills folder: every SKILL.md one or two levels deep (a category folder holds skills),
 * parsed, with the ones that do not load reported instead of thrown. The agent's catalog and the
 * profiles' skill report both read skills with this.
 */
import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseSkill, readSkillFile, type Skill } from "./skill-file.js";

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function folders(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names.sort()) if (!name.startsWith(".") && (await isDir(join(dir, name)))) out.push(name);
  return out;
}

/** A SKILL.md that did not load: its path under the skills folder and why. */
export interface SkillFailure {
  path: string;
  reason: string;
}

/** Every skill under `dir`; skipped ones become warnings (and `failed`, structured). */
export async function scanSkills(dir: string): Promise<{ skills: Skill[]; warnings: string[]; failed: SkillFailure[] }> {
  const skills: Skill[] = [];
  const warnings: string[] = [];
  const failed: SkillFailure[] = [];
  const fail = (rel: string, reason: string) => {
    warnings.push(`${rel}: ${reason}`);
    failed.push({ path: rel, reason });
  };
  const bySlug = new Map<string, Skill>();
  const load = async (folderDir: string, folder: string, category: string | null): Promise<boolean> => {
    const file = join(folderDir, "SKILL.md");
    // lstat: anything named SKILL.md (a FIFO, a device, a folder) makes this a skill folder,
    // reported as failed when it is not a file that can be read.
    if (!(await lstat(file).catch(() => null))) return false;
    const rel = category ? `${category}/${folder}/SKILL.md` : `${folder}/SKILL.md`;
    let text: string;
    try {
      text = await readSkillFile(file);
    } catch (error) {
      fail(rel, (error as Error).message);
      return true;
    }
    const parsed = parseSkill(text, { dir: folderDir, file, folder, category });
    if (!parsed.ok) {
      fail(rel, parsed.error);
      return true;
    }
    const other = bySlug.get(parsed.skill.slug);
    if (other) {
      fail(rel, `the name "${parsed.skill.name}" is taken by ${other.file}`);
      return true;
    }
    bySlug.set(parsed.skill.slug, parsed.skill);
    skills.push(parsed.skill);
    return true;
  };
  for (const name of await folders(dir)) {
    const path = join(dir, name);
    if (await load(path, name, null)) continue;
    // No SKILL.md: a category folder, one level deep.
    for (const inner of await folders(path)) await load(join(path, inner), inner, name);
  }
  skills.sort((a, b) => a.slug.localeCompare(b.slug));
  return { skills, warnings, failed };
}

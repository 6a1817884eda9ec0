import { readRegularFile } from "../store/regular-file.js";
import { parse } from "yaml";

/**
 * One skill: a folder holding `SKILL.md`, whose YAML front matter names and describes it and
 * whose body is the instructions. `/<slug>` loads it; the slug is its name, slugified.
 */
export interface Skill {
  slug: string;
  name: string;
  description: string;
  /** The skill's folder (absolute). */
  dir: string;
  /** `SKILL.md` (absolute). */
  file: string;
  /** The category folder it sits in (`skills/<category>/<skill>/`), or null. */
  category: string | null;
  /** The folder's name. */
  folder: string;
}

/** A SKILL.md larger than this is skipped: a skill is instructions, not a data set. */
export const MAX_SKILL_BYTES = 512 * 1024;
/** How long reading one SKILL.md may take before the skill is reported as failed. */
export const SKILL_READ_TIMEOUT_MS = 5_000;

/**
 * A SKILL.md's text: only a regular file up to MAX_SKILL_BYTES, read within
 * SKILL_READ_TIMEOUT_MS (a FIFO or a device is refused at once, never waited on). Throws an
 * Error whose message is the reason.
 */
export function readSkillFile(file: string): Promise<string> {
  return readRegularFile(file, { maxBytes: MAX_SKILL_BYTES, timeoutMs: SKILL_READ_TIMEOUT_MS, what: "a SKILL.md" });
}
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;

/** `Code Review!` → `code-review`: lower case, runs of anything else become one `-`, at most 64 characters. */
export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "-")
    .replace(/^[-_]+|-+$/g, "")
    .slice(0, MAX_NAME)
    .replace(/-+$/, "");
}

/** Split `---\n<yaml>\n---\n<body>`; null when the text has no front matter. */
export function splitFrontMatter(text: string): { yaml: string; body: string } | null {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) return null;
  return { yaml: m[1]!, body: text.slice(m[0].length) };
}

/** Parse a SKILL.md; an error is the warning to log (the skill is skipped). */
export function parseSkill(
  text: string,
  where: { dir: string; file: string; folder: string; category: string | null },
): { ok: true; skill: Skill } | { ok: false; error: string } {
  const fm = splitFrontMatter(text);
  if (!fm) return { ok: false, error: "no YAML front matter (the file must start with a --- line, then name: and description:, then ---)" };
  let data: unknown;
  try {
    data = parse(fm.yaml);
  } catch (error) {
    return { ok: false, error: `the front matter is not valid YAML: ${(error as Error).message.split("\n")[0]}` };
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) return { ok: false, error: "the front matter must be a mapping with name: and description:" };
  const { name, description } = data as Record<string, unknown>;
  if (typeof name !== "string" || !name.trim()) return { ok: false, error: "the front matter needs a name: (a string)" };
  if (name.length > MAX_NAME) return { ok: false, error: `name: is longer than ${MAX_NAME} characters` };
  const slug = slugify(name);
  if (!/^[a-z0-9]/.test(slug)) return { ok: false, error: `name: ${JSON.stringify(name)} has no letters or digits to make a command of` };
  if (typeof description !== "string" || !description.trim()) return { ok: false, error: "the front matter needs a description: (a string)" };
  if (description.length > MAX_DESCRIPTION) return { ok: false, error: `description: is longer than ${MAX_DESCRIPTION} characters` };
  return { ok: true, skill: { slug, name: name.trim(), description: description.trim(), ...where } };
}

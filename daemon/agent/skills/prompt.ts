import type { Bundle } from "./bundles.js";
import type { Skill } from "../../skill-files/skill-file.js";

/** At most this many skills are listed in the system prompt; the rest are counted in a note. */
export const MAX_LISTED_SKILLS = 100;
/** A listed description is cut to its first line and this many characters. */
export const MAX_LISTED_DESCRIPTION = 160;

const oneLine = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/**
 * The system prompt's skills index: one line per skill (name and description), bounded, so a
 * hundred skills cost a hundred lines and the model loads a skill's text with `skill_view` when
 * it needs it. Null when the profile has no skills.
 */
export function skillsIndex(skills: Skill[]): string | null {
  if (!skills.length) return null;
  const listed = skills.slice(0, MAX_LISTED_SKILLS);
  const lines = [
    "## Skills",
    "Skills are instructions for particular kinds of work. Before a task one of them fits, load it with the skill_view tool (by name) and follow it.",
    ...listed.map((s) => `- ${oneLine(s.name, 64)}: ${oneLine(s.description, MAX_LISTED_DESCRIPTION)}`),
  ];
  if (skills.length > listed.length) lines.push(`(${skills.length - listed.length} more skills are not listed; skill_view loads any skill by name.)`);
  return lines.join("\n");
}

function skillSection(skill: Skill, text: string): string {
  return `<skill name="${skill.name.replace(/"/g, "'")}" folder="${skill.dir}">\n${text.trim()}\n</skill>`;
}

/** The user message `/<skill>` puts into the conversation. */
export function skillMessage(skill: Skill, text: string, args: string): string {
  return [
    `I'm loading the skill "${skill.name}" (/${skill.slug}). Follow its instructions; its folder may hold files it refers to.`,
    skillSection(skill, text),
    ...(args.trim() ? [args.trim()] : []),
  ].join("\n\n");
}

/** The one user message `/<bundle>` puts into the conversation: the instruction, then every skill found. */
export function bundleMessage(bundle: Bundle, found: Array<{ skill: Skill; text: string }>, missing: string[], args: string): string {
  return [
    `I'm loading the skill bundle "${bundle.name}" (/${bundle.slug})${bundle.description ? `: ${bundle.description}` : ""}. Follow the instructions of its skills; their folders may hold files they refer to.`,
    ...(bundle.instruction ? [bundle.instruction.trim()] : []),
    ...found.map((f) => skillSection(f.skill, f.text)),
    ...(missing.length
      ? [
          `(Note: ${missing.length === 1 ? "this skill of the bundle is" : "these skills of the bundle are"} not installed and were skipped: ${missing.join(", ")}.)`,
        ]
      : []),
    ...(args.trim() ? [args.trim()] : []),
  ].join("\n\n");
}

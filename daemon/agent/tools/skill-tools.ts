import { readdir, stat } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { z } from "zod";
import { ToolFailure } from "../../../shared/errors.js";
import { readRegularFile } from "../../store/regular-file.js";
import type { SkillsService } from "../skills/skills-service.js";
import { readSkillFile, SKILL_READ_TIMEOUT_MS } from "../../skill-files/skill-file.js";
import { defineTool, type ToolDefinition } from "./registry.js";

const MAX_FILES = 200;
const MAX_FILE_CHARS = 100_000;

/** Files of a skill's folder besides SKILL.md (relative paths, at most MAX_FILES). */
async function otherFiles(dir: string): Promise<{ files: string[]; more: boolean }> {
  const files: string[] = [];
  let more = false;
  const walk = async (d: string, depth: number): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(d)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const path = join(d, name);
      const st = await stat(path).catch(() => null);
      if (!st) continue;
      if (st.isDirectory()) {
        if (depth < 4) await walk(path, depth + 1);
      } else if (path !== join(dir, "SKILL.md")) {
        if (files.length >= MAX_FILES) {
          more = true;
          return;
        }
        files.push(relative(dir, path));
      }
    }
  };
  await walk(dir, 0);
  return { files, more };
}

/** The largest file of a skill's folder `skill_view` reads. */
const SKILL_FILE_MAX_BYTES = 4 * 1024 * 1024;

/** `skill_view`: a skill's full SKILL.md (or one of its files) on demand, by name. */
export function skillViewTool(skills: SkillsService): ToolDefinition {
  return defineTool({
    name: "skill_view",
    description:
      "Load a skill listed in the system prompt: its full SKILL.md instructions and the list of the other files in its folder. Pass `file` to read one of those files instead.",
    toolset: "skills",
    args: z
      .object({
        name: z.string().min(1).max(200).describe("The skill's name as listed"),
        file: z.string().min(1).max(500).optional().describe("A file of the skill's folder (a path from its file list)"),
      })
      .strict(),
    available: (ctx) => skills.catalog.cached(ctx.profile ?? "default").length > 0,
    async run(args, ctx) {
      const listing = await skills.catalog.list(ctx.profile);
      const skill = await skills.catalog.find(ctx.profile, args.name);
      if (!skill) {
        const names = listing.skills.slice(0, 50).map((s) => s.name);
        throw new ToolFailure("not_found", `no skill named "${args.name}"; skills: ${names.join(", ") || "none"}`);
      }
      if (args.file) {
        const path = resolve(skill.dir, args.file);
        if (path !== skill.dir && !path.startsWith(skill.dir + sep)) throw new ToolFailure("invalid_arguments", `${args.file} is outside the skill's folder`);
        // Only a regular file, bounded and timed: a FIFO in a skill's folder never holds the turn.
        const text = await readRegularFile(path, { maxBytes: SKILL_FILE_MAX_BYTES, timeoutMs: SKILL_READ_TIMEOUT_MS, what: "a skill file" }).catch(
          (error: Error) => {
            if (error.message === "does not exist") throw new ToolFailure("not_found", `the skill "${skill.name}" has no file ${args.file}`);
            throw new ToolFailure("failed", `the skill "${skill.name}"'s file ${args.file} ${error.message}`);
          },
        );
        const cut = text.length > MAX_FILE_CHARS;
        return {
          ok: true,
          output: {
            name: skill.name,
            file: relative(skill.dir, path),
            path,
            content: cut ? `${text.slice(0, MAX_FILE_CHARS)}\n[… cut at ${MAX_FILE_CHARS} characters; read_file reads the rest]` : text,
          },
        };
      }
      const content = await readSkillFile(skill.file).catch((error: Error) => {
        throw new ToolFailure("failed", `the skill "${skill.name}" cannot be loaded: its SKILL.md ${error.message}`);
      });
      const { files, more } = await otherFiles(skill.dir);
      return {
        ok: true,
        output: {
          name: skill.name,
          description: skill.description,
          folder: skill.dir,
          content,
          files,
          ...(more ? { files_note: `only the first ${MAX_FILES} files are listed` } : {}),
        },
      };
    },
  });
}

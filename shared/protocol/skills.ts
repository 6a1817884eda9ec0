import { z } from "zod";
import { rpc } from "./define.js";

/** A skill as listed (SKILL.md's front matter and where it is). */
export interface SkillInfo {
  slug: string;
  name: string;
  description: string;
  dir: string;
  category: string | null;
}

export interface SkillListResult {
  profile: string;
  dir: string;
  skills: SkillInfo[];
  /** Skills skipped, one line each (also in the daemon log). */
  warnings: string[];
}

export interface BundleInfo {
  slug: string;
  name: string;
  description: string;
  skills: string[];
  instruction: string | null;
  file: string;
}

export interface BundleListResult {
  dir: string;
  bundles: BundleInfo[];
  /** Bundle files skipped (invalid), one line each. */
  warnings: string[];
}

export interface MemoryStoreInfo {
  name: "memory" | "user";
  file: string;
  entries: string[];
  chars: number;
  limit: number;
}

export interface MemoryStatusResult {
  profile: string;
  enabled: boolean;
  provider: string;
  dir: string;
  stores: MemoryStoreInfo[];
}

const profile = z.string().min(1).max(100).optional();
const bundleName = z.string().min(1).max(200);

/** Skills (per profile), skill bundles (per home) and memory (per profile). */
export const skillsMethods = {
  "skills.list": rpc<SkillListResult>()(() => z.object({ profile }).strict()),
  /** Rescan the profile's skills folder now (`/reload-skills`). */
  "skills.reload": rpc<SkillListResult>()(() => z.object({ profile }).strict()),
  /** What `/<name>` would load: a bundle (which wins on a shared slug) or a skill; `skills.not_found` otherwise. */
  "skills.resolve": rpc<{ kind: "skill" | "bundle"; slug: string; name: string; skills: string[]; missing: string[] }>()(() =>
    z.object({ profile, name: z.string().min(1).max(200) }).strict(),
  ),
  "bundles.list": rpc<BundleListResult>()(() => z.object({}).strict()),
  "bundles.show": rpc<{ bundle: BundleInfo; skills: Array<{ name: string; found: boolean; skill: string | null }>; profile: string }>()(() =>
    z.object({ name: bundleName, profile }).strict(),
  ),
  /** Write `skill-bundles/<slug>.yaml`; refuses an existing one unless `force`. */
  "bundles.create": rpc<{ bundle: BundleInfo; replaced: boolean; missing: string[] }>()(() =>
    z
      .object({
        name: bundleName,
        skills: z.array(z.string().min(1).max(200)).min(1).max(100),
        description: z.string().max(2000).optional(),
        instruction: z.string().max(20_000).optional(),
        force: z.boolean().optional(),
        profile,
      })
      .strict(),
  ),
  "bundles.delete": rpc<{ deleted: string; file: string }>()(() => z.object({ name: bundleName }).strict()),
  /** Rescan the skill-bundles folder now. */
  "bundles.reload": rpc<BundleListResult>()(() => z.object({}).strict()),
  "memory.status": rpc<MemoryStatusResult>()(() => z.object({ profile }).strict()),
  /** Choose the built-in file store: memory.provider builtin, memory.enabled true. */
  "memory.setup": rpc<MemoryStatusResult>()(() => z.object({ profile }).strict()),
  /** memory.enabled false: the tool is not offered and nothing is injected (entries are kept). */
  "memory.off": rpc<MemoryStatusResult>()(() => z.object({ profile }).strict()),
};

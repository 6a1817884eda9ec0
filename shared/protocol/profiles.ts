import { z } from "zod";
import { rpc } from "./define.js";

/**
 * The profile group. A profile is a folder that layers over the home (`default` is the home
 * itself); one daemon serves them all. Every connection runs as one profile, chosen at
 * `initialize` (`--profile`, `AGENT_PROFILE`, else the active profile).
 */

export interface DistributionInfo {
  name: string;
  version: string;
  source: string | null;
  installed_at: string | null;
  author: string | null;
}

export interface ProfileSummary {
  name: string;
  dir: string;
  /** The active profile (`agent profile use`). */
  active: boolean;
  description: string | null;
  description_auto: boolean;
  distribution: DistributionInfo | null;
  alias: string | null;
}

export interface ProfileInfo extends ProfileSummary {
  /** The model this profile's turns use (its config over the home's), or why none is usable. */
  model: { provider: string | null; model: string | null; problem: string | null };
  hasSoul: boolean;
  /** The skills that load (each `/<name>`). */
  skills: string[];
  /** SKILL.md files that do not load (the chat skips them): the path under skills/ and why. */
  failedSkills: Array<{ path: string; reason: string }>;
  paths: { config: string; env: string; soul: string; skills: string; memories: string };
}

export type EnvStatus = "set" | "needs setting" | "optional";

export interface InstallPreview {
  name: string;
  source: string;
  /** "git" or "directory". */
  kind: string;
  exists: boolean;
  manifest: {
    name: string;
    version: string;
    author: string | null;
    agent_requires: string | null;
    description: string | null;
    distribution_owned: string[];
  };
  env: Array<{ name: string; description: string | null; status: EnvStatus }>;
  files: string[];
  cronJobs: number;
  /** Every URL the distribution's config.yaml and mcp.json point at. */
  endpoints: Array<{ file: string; path: string; url: string }>;
  /** Every environment variable they name (status as for env). */
  configEnv: Array<{ file: string; path: string; name: string; status: EnvStatus }>;
  /** The API keys the config would send, and where: confirming the install consents to these. */
  keys: Array<{ provider: string; endpoint: string; env: string[] }>;
  /** A digest of endpoints, variables and keys: passed back to apply as `confirmedReach`. */
  reachDigest: string;
}

export interface UpdatePreview {
  name: string;
  source: string;
  from: string;
  to: string;
  replaced: string[];
  configReplaced: boolean;
  /** With configReplaced: the new config's endpoints and key uses, and the key uses not confirmed before. */
  endpoints: Array<{ file: string; path: string; url: string }>;
  keys: Array<{ provider: string; endpoint: string; env: string[] }>;
  newKeys: Array<{ provider: string; endpoint: string; env: string[] }>;
  reachDigest: string;
}

export interface DeletePreview {
  name: string;
  dir: string;
  distribution: DistributionInfo | null;
  alias: string | null;
  /** Cron jobs added to the profile (`cron add`): they block the deletion unless `force`, which removes them. */
  cronJobs: Array<{ id: string; name: string; schedule: string }>;
  /** The profile's sessions: they stay, with their history, under the deleted profile's name. */
  sessions: number;
}

const name = z.string().min(1).max(200);
const installParams = z
  .object({
    source: z.string().min(1).max(4096),
    name: name.optional(),
    alias: z.boolean().optional(),
    force: z.boolean().optional(),
    /** Where a relative directory source is resolved (the caller's working directory). */
    cwd: z.string().min(1).optional(),
    /** The preview's `reachDigest` the user confirmed: apply refuses when the source now reaches elsewhere. */
    confirmedReach: z.string().max(200).optional(),
  })
  .strict();
const updateParams = z.object({ name, forceConfig: z.boolean().optional(), confirmedReach: z.string().max(200).optional() }).strict();

export const profilesMethods = {
  "profile.list": rpc<{ profiles: ProfileSummary[]; active: string; current: string }>()(() => z.object({}).strict()),
  /** One profile (default: the connection's). */
  "profile.show": rpc<ProfileInfo>()(() => z.object({ name: name.optional() }).strict()),
  "profile.create": rpc<ProfileSummary & { cloned: string[]; note: string | null }>()(() =>
    z
      .object({
        name,
        description: z.string().max(2000).optional(),
        alias: z.boolean().optional(),
        cloneFrom: name.optional(),
        cloneAll: z.boolean().optional(),
      })
      .strict(),
  ),
  "profile.rename": rpc<ProfileSummary & { from: string }>()(() => z.object({ from: name, to: name }).strict()),
  "profile.delete.preview": rpc<DeletePreview>()(() => z.object({ name }).strict()),
  "profile.delete.apply": rpc<{ ok: true; deleted: string; aliasRemoved: boolean; cronJobsRemoved: string[] }>()(() =>
    z.object({ name, force: z.boolean().optional() }).strict(),
  ),
  "profile.use": rpc<{ ok: true; active: string }>()(() => z.object({ name }).strict()),
  /** Set a description (`text`), or have the model write one (`auto`); `all` with `auto` does every profile. */
  "profile.describe": rpc<{ results: Array<{ name: string; description: string | null; description_auto: boolean; changed: boolean; note: string | null }> }>()(
    () =>
      z
        .object({
          name: name.optional(),
          text: z.string().max(2000).optional(),
          auto: z.boolean().optional(),
          all: z.boolean().optional(),
          overwrite: z.boolean().optional(),
        })
        .strict(),
  ),
  "profile.install.preview": rpc<InstallPreview>()(() => installParams),
  /** `mcpServersOff`: the distribution's MCP servers, installed off (`agent -p <name> mcp enable <server>`). */
  "profile.install.apply": rpc<InstallPreview & { installed_at: string; dir: string; alias: string | null; mcpServersOff?: string[] }>()(() => installParams),
  "profile.update.preview": rpc<UpdatePreview>()(() => updateParams),
  "profile.update.apply": rpc<UpdatePreview & { installed_at: string; mcpServersOff?: string[] }>()(() => updateParams),
};

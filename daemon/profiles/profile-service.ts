import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { Document, parseDocument } from "yaml";
import { AgentError } from "../../shared/errors.js";
import { DEFAULT_PROFILE, profilePaths, type ProfilePaths } from "../../shared/paths.js";
import type { DeletePreview, DistributionInfo, EnvStatus, InstallPreview, ProfileInfo, ProfileSummary, UpdatePreview } from "../../shared/protocol/profiles.js";
import { APP_VERSION } from "../../shared/version.js";
import { writeFileAtomic } from "../config/files.js";
import type { ConfigSource, ProfilesService } from "../context.js";
import { resolveProvider } from "../models/resolve.js";
import { scanSkills, type SkillFailure } from "../skill-files/scan.js";
import { existingAlias, removeAlias, renameAlias, writeAlias } from "./alias.js";
import {
  configReach,
  copyFiles,
  disableCronJobs,
  disableMcpServers,
  keyPairs,
  DISTRIBUTION_OWNED,
  fetchSource,
  installable,
  isoSeconds,
  MANIFEST,
  meetsRequirement,
  parseManifest,
  walkDistribution,
  type Manifest,
} from "./distribution.js";
import { PROFILE_NAME, checkProfileName } from "../../shared/profile-names.js";
import { ProfileConfigCache } from "./config-cache.js";
import { envNumber } from "../../shared/config/env.js";

/** Staging folders made by this daemon, numbered so two at the same millisecond differ. */
let stagingSeq = 0;

/** The source changed between the preview the user confirmed and the apply: its endpoints or keys differ. */
function checkConfirmed(confirmed: string | undefined, now: string): void {
  if (confirmed !== undefined && confirmed !== now)
    throw new AgentError(
      "profile.changed_since_preview",
      "the distribution's endpoints, variables or keys changed since the preview you confirmed; nothing was changed. Run the command again to see the new preview",
    );
}

/**
 * A test knob: `AGENT_PROFILE_INSTALL_PAUSE_MS` holds an install or update for that long once the
 * distribution's files are staged (before their cron jobs are disabled), so a test can kill the
 * daemon there.
 */
async function testPause(): Promise<void> {
  const ms = envNumber("AGENT_PROFILE_INSTALL_PAUSE_MS", 0);
  if (ms > 0) await new Promise((done) => setTimeout(done, Math.min(ms, 60_000)));
}

/** What `--clone-from` copies: the profile's settings and persona, not its history. */
const CLONED = ["config.yaml", ".env", "SOUL.md", "skills"];
/** Never copied by `--clone-all`: history and runtime state (and, from the home, the daemon's own files). */
const NOT_CLONED = new Set(["sessions", "logs", "profiles", "data", "daemon.sock", "daemon.lock", "active_profile", "snapshots", MANIFEST]);

export interface InstallRequest {
  source: string;
  name?: string;
  alias?: boolean;
  force?: boolean;
  cwd?: string;
  /** The preview's reachDigest, as confirmed. */
  confirmedReach?: string;
}

/**
 * The profiles of one home: which exist, the active one, creating, cloning, renaming and
 * deleting them, their descriptions, distributions, and each profile's effective config.
 * Changes are serialized through one queue.
 */
export class ProfileManager implements ProfilesService {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly changeListeners = new Set<() => void>();
  readonly configs: ProfileConfigCache;

  constructor(
    readonly home: string,
    private readonly source: ConfigSource,
  ) {
    this.configs = new ProfileConfigCache(home, source);
  }

  paths(name: string): ProfilePaths {
    return profilePaths(this.home, name);
  }

  private get activeFile(): string {
    return join(this.home, "active_profile");
  }

  exists(name: string): boolean {
    if (name === DEFAULT_PROFILE) return true;
    try {
      return statSync(this.paths(name).dir).isDirectory();
    } catch {
      return false;
    }
  }

  /** An existing profile's name, or a clear error. */
  check(name: string): string {
    checkProfileName(name, "use");
    if (!this.exists(name))
      throw new AgentError("profile.not_found", `no profile named "${name}"; \`agent profile list\` shows them, \`agent profile create ${name}\` makes it`, {
        name,
      });
    return name;
  }

  /** The active profile (`agent profile use`); `default` when none is set or it no longer exists. */
  active(): string {
    try {
      const name = readFileSync(this.activeFile, "utf8").trim();
      return PROFILE_NAME.test(name) && this.exists(name) ? name : DEFAULT_PROFILE;
    } catch {
      return DEFAULT_PROFILE;
    }
  }

  /** The profile a connection runs as: the one it asked for (checked), else the active one. */
  forConnection(requested: string | undefined): string {
    return requested === undefined ? this.active() : this.check(requested);
  }

  names(): string[] {
    let dirs: string[] = [];
    try {
      dirs = readdirSync(join(this.home, "profiles"), { withFileTypes: true })
        .filter((d) => d.isDirectory() && PROFILE_NAME.test(d.name) && d.name !== DEFAULT_PROFILE)
        .map((d) => d.name)
        .sort();
    } catch {}
    return [DEFAULT_PROFILE, ...dirs];
  }

  config(name: string) {
    return this.configs.get(name);
  }

  loadedConfig(name: string) {
    return this.configs.loaded(name);
  }

  /** Set one key in an existing profile's config.yaml: the home's own `config set` for `default`. */
  async setConfig(name: string, key: string, value: string | number | boolean): Promise<unknown> {
    this.check(name);
    if (name === DEFAULT_PROFILE) return this.source.set(key, value);
    try {
      return await this.source.setLayered(this.paths(name), key, value);
    } finally {
      this.configs.forget(name);
    }
  }

  async soul(name: string): Promise<string | null> {
    const text = await readFile(this.paths(name).soul, "utf8").catch(() => null);
    return text?.trim() ? text.trim() : null;
  }

  // ---------- descriptions and summaries ----------

  private readMeta(name: string): { description: string | null; description_auto: boolean } {
    try {
      const data = parseDocument(readFileSync(this.paths(name).meta, "utf8")).toJS() as Record<string, unknown> | null;
      return { description: typeof data?.description === "string" ? data.description : null, description_auto: data?.description_auto === true };
    } catch {
      return { description: null, description_auto: false };
    }
  }

  /** Set keys of profile.yaml through the YAML Document, so the file's comments stay. */
  private async writeMeta(name: string, values: Record<string, unknown>): Promise<void> {
    const file = this.paths(name).meta;
    const text = await readFile(file, "utf8").catch(() => null);
    const doc = text?.trim() ? parseDocument(text) : new Document({});
    if (doc.errors.length) throw new AgentError("profile.invalid_meta", `${file} is not valid YAML: ${doc.errors[0]!.message}`, { file });
    for (const [k, v] of Object.entries(values)) doc.set(k, v);
    await writeFileAtomic(file, doc.toString(), 0o644);
  }

  private distribution(name: string): DistributionInfo | null {
    try {
      const raw = parseDocument(readFileSync(this.paths(name).manifest, "utf8")).toJS() as Record<string, unknown> | null;
      if (!raw || typeof raw.name !== "string") return null;
      const s = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : null);
      return { name: raw.name, version: s(raw.version) ?? "?", source: s(raw.source), installed_at: s(raw.installed_at), author: s(raw.author) };
    } catch {
      return null;
    }
  }

  summary(name: string): ProfileSummary {
    const meta = this.readMeta(name);
    return {
      name,
      dir: this.paths(name).dir,
      active: this.active() === name,
      ...meta,
      distribution: this.distribution(name),
      alias: name === DEFAULT_PROFILE ? null : existingAlias(name),
    };
  }

  list(): ProfileSummary[] {
    return this.names().map((n) => this.summary(n));
  }

  async info(name: string): Promise<ProfileInfo> {
    this.check(name);
    const p = this.paths(name);
    let model: ProfileInfo["model"];
    try {
      const view = await this.config(name);
      const r = resolveProvider(view.current(), view.env(), p.dir, {});
      model = { provider: r.name, model: r.model, problem: null };
    } catch (error) {
      model = { provider: null, model: null, problem: (error as Error).message.split("\n")[0]! };
    }
    return {
      ...this.summary(name),
      model,
      hasSoul: existsSync(p.soul),
      ...(await this.skillReport(name).then((r) => ({ skills: r.skills, failedSkills: r.failed }))),
      paths: { config: p.config, env: p.env, soul: p.soul, skills: p.skills, memories: p.memories },
    };
  }

  /** The profile's skills that load (by their `/<name>`). */
  async skillNames(name: string): Promise<string[]> {
    return (await this.skillReport(name)).skills;
  }

  /** The skills that load, and the SKILL.md files that do not, with the reason (what the chat skips). */
  async skillReport(name: string): Promise<{ skills: string[]; failed: SkillFailure[] }> {
    const { skills, failed } = await scanSkills(this.paths(name).skills);
    return { skills: skills.map((k) => k.slug), failed };
  }

  // ---------- create, rename, delete, use ----------

  create(
    req: { name: string; description?: string; alias?: boolean; cloneFrom?: string; cloneAll?: boolean },
    current: string,
  ): Promise<ProfileSummary & { cloned: string[]; note: string | null }> {
    return this.serialize(async () => {
      const name = checkProfileName(req.name, "new");
      if (this.exists(name)) throw new AgentError("profile.exists", `a profile named "${name}" already exists`, { name });
      const from = req.cloneFrom !== undefined ? this.check(req.cloneFrom) : req.cloneAll ? current : null;
      const dir = this.paths(name).dir;
      await mkdir(join(this.home, "profiles"), { recursive: true });
      const cloned: string[] = [];
      await mkdir(dir, { mode: 0o700 });
      try {
        if (from !== null) {
          const src = this.paths(from).dir;
          const entries = req.cloneAll
            ? (await readdir(src)).filter((e) => !NOT_CLONED.has(e) && !e.startsWith("state.db") && !e.startsWith("daemon"))
            : CLONED;
          for (const entry of entries.sort()) {
            if (!existsSync(join(src, entry))) continue;
            await cp(join(src, entry), join(dir, entry), { recursive: true, verbatimSymlinks: true });
            cloned.push(entry);
          }
        }
        if (req.description !== undefined) await this.writeMeta(name, { description: req.description, description_auto: false });
      } catch (error) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
      const alias = req.alias === false ? { path: null, note: null } : await writeAlias(name);
      return { ...this.summary(name), cloned, note: alias.note };
    });
  }

  rename(fromName: string, toName: string): Promise<ProfileSummary & { from: string }> {
    return this.serialize(async () => {
      const from = checkProfileName(fromName, "new", "profile");
      const to = checkProfileName(toName, "new", "new name");
      this.check(from);
      if (this.exists(to)) throw new AgentError("profile.exists", `a profile named "${to}" already exists`, { name: to });
      await rename(this.paths(from).dir, this.paths(to).dir);
      await renameAlias(from, to);
      if (this.activeName() === from) await writeFileAtomic(this.activeFile, `${to}\n`, 0o644);
      this.configs.forget(from);
      return { ...this.summary(to), from };
    });
  }

  private activeName(): string | null {
    try {
      return readFileSync(this.activeFile, "utf8").trim();
    } catch {
      return null;
    }
  }

  /** What deleting the profile's folder would take; the feature adds what lives outside it (cron jobs, sessions). */
  deletePreview(name: string): Omit<DeletePreview, "cronJobs" | "sessions"> {
    checkProfileName(name, "new", "profile");
    this.check(name);
    return { name, dir: this.paths(name).dir, distribution: this.distribution(name), alias: existingAlias(name) };
  }

  /** Delete the profile; `settle` runs first (in the same turn of the queue) and may refuse. */
  deleteApply<T>(name: string, settle: () => Promise<T>): Promise<{ ok: true; deleted: string; aliasRemoved: boolean; settled: T }> {
    return this.serialize(async () => {
      this.deletePreview(name);
      const settled = await settle();
      await rm(this.paths(name).dir, { recursive: true, force: true });
      const aliasRemoved = await removeAlias(name);
      if (this.activeName() === name) await rm(this.activeFile, { force: true });
      this.configs.forget(name);
      return { ok: true as const, deleted: name, aliasRemoved, settled };
    });
  }

  use(name: string): Promise<{ ok: true; active: string }> {
    return this.serialize(async () => {
      this.check(name);
      if (name === DEFAULT_PROFILE) await rm(this.activeFile, { force: true });
      else await writeFileAtomic(this.activeFile, `${name}\n`, 0o644);
      return { ok: true as const, active: name };
    });
  }

  // ---------- descriptions ----------

  /**
   * Set a description by hand (`text`), or have `generate` write one (`auto`). An automatic one
   * never replaces one the user wrote unless `overwrite`.
   */
  describe(
    req: { names: string[]; text?: string; auto?: boolean; overwrite?: boolean },
    generate: (name: string) => Promise<string>,
  ): Promise<Array<{ name: string; description: string | null; description_auto: boolean; changed: boolean; note: string | null }>> {
    return this.serialize(async () => {
      for (const n of req.names) this.check(n);
      const results = [];
      for (const name of req.names) {
        const meta = this.readMeta(name);
        if (req.text !== undefined) {
          await this.writeMeta(name, { description: req.text, description_auto: false });
          results.push({ name, description: req.text, description_auto: false, changed: true, note: null });
          continue;
        }
        if (meta.description && !meta.description_auto && !req.overwrite) {
          results.push({ name, ...meta, changed: false, note: "kept the description you wrote (--overwrite replaces it)" });
          continue;
        }
        const text = (await generate(name)).trim();
        await this.writeMeta(name, { description: text, description_auto: true });
        results.push({ name, description: text, description_auto: true, changed: true, note: null });
      }
      return results;
    });
  }

  // ---------- distributions ----------

  /** Where installs and updates stage: inside the home, so the finished profile is renamed into place. */
  private get stagingRoot(): string {
    return join(this.home, "profiles");
  }

  /**
   * Staging folders a killed daemon left (`.dist-<pid>-<ms>`): only one daemon runs per home, so
   * one named for another pid is no one's. Run at start, before any install.
   */
  async removeStaleStaging(): Promise<string[]> {
    const removed: string[] = [];
    for (const n of await readdir(this.stagingRoot).catch(() => [] as string[])) {
      const m = /^\.dist-(\d+)-\d+$/.exec(n);
      if (m && Number(m[1]) !== process.pid) {
        await rm(join(this.stagingRoot, n), { recursive: true, force: true }).catch(() => undefined);
        removed.push(n);
      }
    }
    return removed;
  }

  /**
   * Fetch and check a distribution, then run `work` on it. The clone and everything staged live
   * in one folder inside the home (`profiles/.dist-<pid>-<ms>`), removed afterwards (or, after a
   * crash, at the next start).
   */
  private async withDistribution<T>(
    source: string,
    cwd: string,
    work: (d: { root: string; files: string[]; manifest: Manifest; doc: Document; kind: string; source: string; staging: string }) => Promise<T>,
  ): Promise<T> {
    await mkdir(this.stagingRoot, { recursive: true, mode: 0o700 });
    const staging = join(this.stagingRoot, `.dist-${process.pid}-${Date.now()}${String(++stagingSeq % 10000).padStart(4, "0")}`);
    await mkdir(staging, { mode: 0o700 });
    try {
      const fetched = await fetchSource(source, cwd, staging);
      const files = await walkDistribution(fetched.root);
      if (!files.includes(MANIFEST)) throw new AgentError("profile.invalid_distribution", `${source} has no ${MANIFEST} at its root`, { source });
      const { doc, manifest } = parseManifest(await readFile(join(fetched.root, MANIFEST), "utf8"), MANIFEST);
      if (manifest.agent_requires && !meetsRequirement(manifest.agent_requires, APP_VERSION)) {
        throw new AgentError(
          "profile.incompatible",
          `${manifest.name}@${manifest.version} requires agent ${manifest.agent_requires}; this is agent ${APP_VERSION}`,
          { requires: manifest.agent_requires, version: APP_VERSION },
        );
      }
      return await work({ root: fetched.root, files, manifest, doc, kind: fetched.kind, source: fetched.source, staging });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  private async envStatus(name: string, manifest: Manifest): Promise<InstallPreview["env"]> {
    const env = this.exists(name) ? (await this.config(name)).env() : this.source.env();
    return manifest.env_requires.map((e) => {
      const status: EnvStatus = env[e.name] ? "set" : e.optional ? "optional" : "needs setting";
      return { name: e.name, description: e.description, status };
    });
  }

  private async preview(req: InstallRequest, d: { root: string; files: string[]; manifest: Manifest; kind: string; source: string }): Promise<InstallPreview> {
    const name = checkProfileName(req.name ?? d.manifest.name, "new", "profile name");
    const exists = this.exists(name);
    if (exists && !req.force)
      throw new AgentError(
        "profile.exists",
        `a profile named "${name}" already exists; --force installs over it (your memories, sessions and .env stay), \`agent profile update ${name}\` updates it`,
        { name },
      );
    const m = d.manifest;
    return {
      name,
      source: d.source,
      kind: d.kind,
      exists,
      manifest: {
        name: m.name,
        version: m.version,
        author: m.author,
        agent_requires: m.agent_requires,
        description: m.description,
        distribution_owned: m.distribution_owned,
      },
      env: await this.envStatus(name, m),
      files: d.files.filter(installable),
      cronJobs: d.files.filter((f) => /^cron\/.+\.(ya?ml|json)$/.test(f)).length,
      ...(await this.reach(name, d.root, d.files.filter(installable))),
    };
  }

  /** Where the distribution's config.yaml and mcp.json (those of `files`) reach: endpoints, variables, keys. */
  private async reach(name: string, root: string, files: string[]): Promise<Pick<InstallPreview, "endpoints" | "configEnv" | "keys" | "reachDigest">> {
    const texts: Array<{ file: string; text: string }> = [];
    for (const file of ["config.yaml", "mcp.json"]) if (files.includes(file)) texts.push({ file, text: await readFile(join(root, file), "utf8") });
    const r = configReach(texts, { providers: this.source.current().providers });
    const env = this.exists(name) ? (await this.config(name)).env() : this.source.env();
    const digest = createHash("sha256")
      .update(JSON.stringify([r.endpoints, r.env, r.keys]))
      .digest("hex")
      .slice(0, 32);
    return {
      endpoints: r.endpoints,
      configEnv: r.env.map((e) => ({ ...e, status: env[e.name] ? ("set" as const) : ("needs setting" as const) })),
      keys: r.keys,
      reachDigest: digest,
    };
  }

  installPreview(req: InstallRequest): Promise<InstallPreview> {
    if (req.name !== undefined) checkProfileName(req.name, "new", "profile name");
    return this.withDistribution(req.source, req.cwd ?? this.home, (d) => this.preview(req, d));
  }

  installApply(req: InstallRequest): Promise<InstallPreview & { installed_at: string; dir: string; alias: string | null; mcpServersOff: string[] }> {
    if (req.name !== undefined) checkProfileName(req.name, "new", "profile name");
    return this.serialize(() =>
      this.withDistribution(req.source, req.cwd ?? this.home, async (d) => {
        const preview = await this.preview(req, d);
        checkConfirmed(req.confirmedReach, preview.reachDigest);
        const dir = this.paths(preview.name).dir;
        // The profile is built in the staging folder and renamed into place: a crash before the
        // rename leaves no profile (and the staging folder goes at the next start), and no cron
        // job reaches the profile before it is disabled.
        const staged = join(d.staging, "profile");
        await mkdir(staged, { mode: 0o700 });
        const files = preview.files.filter((f) => f !== MANIFEST);
        await copyFiles(d.root, staged, files);
        await testPause();
        preview.cronJobs = await disableCronJobs(staged, files);
        const mcpServersOff = await disableMcpServers(staged, join(staged, "config.yaml"), false);
        const installed_at = await this.writeManifest(join(staged, MANIFEST), d.doc, d.source, keyPairs(preview.keys));
        if (!this.exists(preview.name)) await rename(staged, dir);
        else {
          // --force over an existing profile: each top-level path the distribution ships replaces
          // the profile's own (all of it already disabled); the user's files stay.
          for (const top of await readdir(staged)) {
            await rm(join(dir, top), { recursive: true, force: true });
            await rename(join(staged, top), join(dir, top));
          }
        }
        if (d.manifest.description && !this.readMeta(preview.name).description)
          await this.writeMeta(preview.name, { description: d.manifest.description, description_auto: false });
        const alias = req.alias ? (await writeAlias(preview.name)).path : existingAlias(preview.name);
        this.configs.forget(preview.name);
        return { ...preview, installed_at, dir, alias, mcpServersOff };
      }),
    );
  }

  /**
   * The installed manifest: the distribution's own (comments kept), stamped with when and from
   * where. `key_consent` records the (endpoint, variable) pairs the
   * user confirmed in the preview (whatever the distribution's own file said under that key),
   * so an update whose config sends a key somewhere new says so.
   */
  private async writeManifest(file: string, doc: Document, source: string, consent: Array<{ endpoint: string; env: string }>): Promise<string> {
    const installed_at = isoSeconds();
    doc.set("installed_at", installed_at);
    doc.set("source", source);
    doc.set("key_consent", doc.createNode(consent));
    await writeFileAtomic(file, doc.toString(), 0o644);
    return installed_at;
  }

  private installedSource(name: string): { info: DistributionInfo; source: string } {
    checkProfileName(name, "new", "profile");
    this.check(name);
    const info = this.distribution(name);
    if (!info)
      throw new AgentError("profile.not_installed", `profile "${name}" was not installed from a distribution (no ${MANIFEST}); nothing to update`, { name });
    if (!info.source) throw new AgentError("profile.not_installed", `${this.paths(name).manifest} records no source to update from`, { name });
    return { info, source: info.source };
  }

  private async updatePlan(
    name: string,
    info: DistributionInfo,
    d: { root: string; files: string[]; manifest: Manifest; source: string },
    forceConfig: boolean,
  ): Promise<UpdatePreview> {
    const owned = [...new Set([...DISTRIBUTION_OWNED, ...d.manifest.distribution_owned])];
    const configReplaced = forceConfig && d.files.includes("config.yaml");
    // What the profile will reach after the update: the new config (when replaced) or its own.
    const files = [...(configReplaced ? ["config.yaml"] : []), ...(d.files.includes("mcp.json") ? ["mcp.json"] : [])];
    const reach = await this.reach(name, d.root, files);
    const confirmed = new Set(this.keyConsent(name).map((p) => `${p.endpoint}\0${p.env}`));
    return {
      name,
      source: d.source,
      from: info.version,
      to: d.manifest.version,
      replaced: owned,
      configReplaced,
      endpoints: reach.endpoints,
      keys: reach.keys,
      reachDigest: reach.reachDigest,
      newKeys: reach.keys.filter((k) => k.env.some((env) => !confirmed.has(`${k.endpoint}\0${env}`))),
    };
  }

  /** The (endpoint, variable) pairs confirmed at install or the last update. */
  private keyConsent(name: string): Array<{ endpoint: string; env: string }> {
    try {
      const m = parseDocument(readFileSync(this.paths(name).manifest, "utf8")).toJS() as { key_consent?: unknown };
      return Array.isArray(m?.key_consent)
        ? m.key_consent.filter((p): p is { endpoint: string; env: string } => typeof p?.endpoint === "string" && typeof p?.env === "string")
        : [];
    } catch {
      return [];
    }
  }

  updatePreview(name: string, forceConfig = false): Promise<UpdatePreview> {
    const { info, source } = this.installedSource(name);
    return this.withDistribution(source, this.home, (d) => this.updatePlan(name, info, d, forceConfig));
  }

  /**
   * Replace the distribution-owned paths with the source's current ones (config.yaml only with
   * `forceConfig`); the user's files (memories, sessions, .env, auth.json, state.db*, logs,
   * workspace, plans, home, *_cache, local) are never touched.
   */
  updateApply(name: string, forceConfig = false, confirmedReach?: string): Promise<UpdatePreview & { installed_at: string; mcpServersOff: string[] }> {
    return this.serialize(async () => {
      const { info, source } = this.installedSource(name);
      return this.withDistribution(source, this.home, async (d) => {
        const plan = await this.updatePlan(name, info, d, forceConfig);
        checkConfirmed(confirmedReach, plan.reachDigest);
        const dir = this.paths(name).dir;
        const copied: string[] = [];
        const tops: string[] = [];
        for (const owned of plan.replaced) {
          if (owned === MANIFEST) continue;
          tops.push(owned);
          copied.push(...d.files.filter((f) => f === owned || f.startsWith(`${owned}/`)));
        }
        if (plan.configReplaced) {
          tops.push("config.yaml");
          copied.push("config.yaml");
        }
        // Staged and disabled first, then each replaced path is swapped in: no cron job of the
        // update is ever in the profile enabled.
        const staged = join(d.staging, "profile");
        await mkdir(staged, { mode: 0o700 });
        await copyFiles(d.root, staged, copied);
        await testPause();
        await disableCronJobs(staged, copied);
        // Its MCP servers are off before the new mcp.json is in place: in the replaced config, or
        // (the config kept) the new servers in the profile's own, the user's choices kept.
        const mcpOff = copied.includes("mcp.json")
          ? await disableMcpServers(staged, join(plan.configReplaced ? staged : dir, "config.yaml"), !plan.configReplaced)
          : [];
        // The config kept (no --force-config) keeps its confirmed pairs; a replaced one's were shown and confirmed now.
        const consent = plan.configReplaced ? keyPairs(plan.keys) : [...this.keyConsent(name), ...keyPairs(plan.keys)];
        const installed_at = await this.writeManifest(join(staged, MANIFEST), d.doc, source, consent);
        for (const top of [...tops, MANIFEST]) {
          await rm(join(dir, top), { recursive: true, force: true });
          if (existsSync(join(staged, top))) {
            await mkdir(join(dir, top, ".."), { recursive: true });
            await rename(join(staged, top), join(dir, top));
          }
        }
        this.configs.forget(name);
        return { ...plan, installed_at, mcpServersOff: mcpOff };
      });
    });
  }

  /**
   * Hear of every change made through this manager (create, rename, delete, use, describe,
   * install, update), once it is done; a failed change may have done part of its work, so it
   * is heard too. Returns the unsubscribe.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Every change goes through here: one at a time, and heard by the change listeners when done. */
  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    const changed = () => {
      for (const listener of this.changeListeners) listener();
    };
    run.then(changed, changed);
    return run;
  }
}

import { mkdir } from "node:fs/promises";
import type { AgentConfig } from "../../../shared/config/defaults.js";
import { DEFAULT_PROFILE, profilePaths, type ProfilePaths } from "../../../shared/paths.js";
import type { ActorKv } from "../../actors/api.js";
import type { ProfilesService } from "../../context.js";
import type { Logger } from "../../log/logger.js";
import { applyEdit, readStore, STORES, writeStore, type MemoryEdit, type StoreName, type StoreState } from "./store.js";

export interface MemoryStatus {
  profile: string;
  enabled: boolean;
  provider: string;
  dir: string;
  stores: StoreState[];
}

/** Where a session keeps the memory block it was started with (its actor's KV). */
const SNAPSHOT_KEY = "memory/snapshot";

type MemoryConfig = AgentConfig["memory"];

/** `memory.enabled` with the built-in provider: the tool is offered and memory injected. */
const isOn = (m: MemoryConfig): boolean => m.enabled && m.provider === "builtin";

const limitOf = (m: MemoryConfig, store: StoreName): number => (store === "user" ? m.user_char_limit : m.memory_char_limit);

/**
 * The built-in memory of each profile (`<profile>/memories/`), on or off and sized by that
 * profile's effective config (its config.yaml over the home's). The daemon is the only writer:
 * edits of one store run one at a time. A session's system prompt carries the memory as it was
 * when the session started (a frozen snapshot kept in the session), so the prompt stays the
 * same turn after turn (provider prompt caches keep working); edits show in the next session.
 */
export class MemoryService {
  #chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly home: string,
    private readonly profiles: ProfilesService,
    private readonly log: Logger,
  ) {}

  /** An existing profile's folders (default: the home itself), or the profiles' clear error. */
  #paths(profile: string | undefined): ProfilePaths {
    return profilePaths(this.home, this.profiles.check(profile ?? DEFAULT_PROFILE));
  }

  async #config(profile: string | undefined): Promise<MemoryConfig> {
    return (await this.profiles.config(profile ?? DEFAULT_PROFILE)).current().memory;
  }

  /** Whether the profile's memory is on (its effective config, read now). */
  async enabled(profile: string | undefined): Promise<boolean> {
    return isOn(await this.#config(this.profiles.check(profile ?? DEFAULT_PROFILE)));
  }

  /**
   * Whether the memory tool is offered to a session of the profile. Tool availability is
   * synchronous, so this reads the profile's config as last loaded: a turn loads it first
   * (its model and its memory block), so it is the turn's own.
   */
  offered(profile: string | undefined): boolean {
    try {
      return isOn(this.profiles.loadedConfig(profile ?? DEFAULT_PROFILE).current().memory);
    } catch {
      return false;
    }
  }

  async status(profile?: string): Promise<MemoryStatus> {
    const paths = this.#paths(profile);
    const m = await this.#config(paths.name);
    const stores = await Promise.all(STORES.map((s) => readStore(paths.memories, s, limitOf(m, s))));
    return { profile: paths.name, enabled: isOn(m), provider: m.provider, dir: paths.memories, stores };
  }

  /** Choose the built-in file store in the profile's config.yaml (memory.provider builtin, memory.enabled true). */
  async setup(profile?: string): Promise<MemoryStatus> {
    const paths = this.#paths(profile);
    await this.profiles.setConfig(paths.name, "memory.provider", "builtin");
    await this.profiles.setConfig(paths.name, "memory.enabled", true);
    await mkdir(paths.memories, { recursive: true });
    this.log.info("memory set up", { provider: "builtin", profile: paths.name });
    return this.status(paths.name);
  }

  /** Turn the profile's memory off (its config.yaml): no tool, nothing injected. Stored entries are kept. */
  async off(profile?: string): Promise<MemoryStatus> {
    const paths = this.#paths(profile);
    await this.profiles.setConfig(paths.name, "memory.enabled", false);
    this.log.info("memory turned off", { profile: paths.name });
    return this.status(paths.name);
  }

  /** The memory tool's edit; returns the store after it. Failures are ToolFailures the model reads. */
  edit(profile: string | undefined, store: StoreName, edit: MemoryEdit): Promise<StoreState & { note?: string }> {
    const paths = this.#paths(profile);
    const key = `${paths.name}/${store}`;
    const run = (this.#chains.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        const limit = limitOf(await this.#config(paths.name), store);
        const state = await readStore(paths.memories, store, limit);
        const next = applyEdit(state, edit);
        if (next.entries !== state.entries) await writeStore(paths.memories, store, next.entries);
        const after = await readStore(paths.memories, store, limit);
        return next.note ? { ...after, note: next.note } : after;
      });
    this.#chains.set(key, run);
    return run;
  }

  /** The memory block of a profile as it is now (null when off, empty, or the profile is gone). */
  async block(profile: string | undefined): Promise<string | null> {
    let paths: ProfilePaths;
    try {
      paths = this.#paths(profile);
    } catch {
      return null;
    }
    const m = await this.#config(paths.name);
    if (!isOn(m)) return null;
    const stores = await Promise.all(STORES.map((s) => readStore(paths.memories, s, limitOf(m, s))));
    return memoryBlock(stores);
  }

  /**
   * The session's frozen memory block: taken from the store at the session's first turn and
   * kept in its KV, so later turns send the same system prompt. Memory turned off (in the
   * session's profile) hides it.
   */
  async sessionBlock(kv: ActorKv, profile: string | undefined): Promise<string | null> {
    if (!(await this.enabled(profile))) return null;
    const saved = await kv.getJson<{ block: string | null }>(SNAPSHOT_KEY);
    if (saved) return saved.block;
    const block = await this.block(profile);
    await kv.putJson(SNAPSHOT_KEY, { block, at: Date.now() });
    return block;
  }
}

const TITLES: Record<StoreName, string> = {
  memory: 'Your notes (from earlier sessions; keep them with the memory tool, target "memory")',
  user: 'About the user (keep with the memory tool, target "user")',
};

export function memoryBlock(stores: StoreState[]): string | null {
  const parts = stores
    .filter((s) => s.entries.length)
    .map((s) => [`### ${TITLES[s.name]} [${s.chars}/${s.limit} chars]`, s.entries.map((e) => `- ${e.replace(/\n/g, "\n  ")}`).join("\n")].join("\n"));
  return parts.length ? ["## Memory", ...parts].join("\n\n") : null;
}

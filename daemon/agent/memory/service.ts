import { mkdir } from "node:fs/promises";
import type { ConfigSource } from "../../context.js";
import type { ActorKv } from "../../actors/types.js";
import type { Logger } from "../../log/logger.js";
import { existingProfile, profileOrNull } from "../skills/profiles.js";
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

/**
 * The built-in memory of each profile (`<profile>/memories/`). The daemon is the only writer:
 * edits of one store run one at a time. A session's system prompt carries the memory as it was
 * when the session started (a frozen snapshot kept in the session), so the prompt stays the
 * same turn after turn (provider prompt caches keep working); edits show in the next session.
 */
export class MemoryService {
  #chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly home: string,
    private readonly config: ConfigSource,
    private readonly log: Logger,
  ) {}

  /** `memory.enabled` with the built-in provider: the tool is offered and memory injected. */
  enabled(): boolean {
    const m = this.config.current().memory;
    return m.enabled && m.provider === "builtin";
  }

  #limit(store: StoreName): number {
    const m = this.config.current().memory;
    return store === "user" ? m.user_char_limit : m.memory_char_limit;
  }

  async status(profile?: string): Promise<MemoryStatus> {
    const paths = existingProfile(this.home, profile, "memory");
    const m = this.config.current().memory;
    const stores = await Promise.all(STORES.map((s) => readStore(paths.memories, s, this.#limit(s))));
    return { profile: paths.name, enabled: this.enabled(), provider: m.provider, dir: paths.memories, stores };
  }

  /** Choose the built-in file store (config: memory.provider builtin, memory.enabled true). */
  async setup(profile?: string): Promise<MemoryStatus> {
    const paths = existingProfile(this.home, profile, "memory");
    await this.#set("memory.provider", "builtin");
    await this.#set("memory.enabled", true);
    await mkdir(paths.memories, { recursive: true });
    this.log.info("memory set up", { provider: "builtin", profile: paths.name });
    return this.status(profile);
  }

  /** Turn memory off: no tool, nothing injected. Stored entries are kept. */
  async off(profile?: string): Promise<MemoryStatus> {
    existingProfile(this.home, profile, "memory");
    await this.#set("memory.enabled", false);
    this.log.info("memory turned off");
    return this.status(profile);
  }

  async #set(key: string, value: string | boolean): Promise<void> {
    await this.config.set(key, value);
  }

  /** The memory tool's edit; returns the store after it. Failures are ToolFailures the model reads. */
  edit(profile: string | undefined, store: StoreName, edit: MemoryEdit): Promise<StoreState & { note?: string }> {
    const paths = existingProfile(this.home, profile, "memory");
    const key = `${paths.name}/${store}`;
    const run = (this.#chains.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        const state = await readStore(paths.memories, store, this.#limit(store));
        const next = applyEdit(state, edit);
        if (next.entries !== state.entries) await writeStore(paths.memories, store, next.entries);
        const after = await readStore(paths.memories, store, this.#limit(store));
        return next.note ? { ...after, note: next.note } : after;
      });
    this.#chains.set(key, run);
    return run;
  }

  /** The memory block of a profile as it is now (null when off or empty). */
  async block(profile: string | undefined): Promise<string | null> {
    if (!this.enabled()) return null;
    const paths = profileOrNull(this.home, profile);
    if (!paths) return null;
    const stores = await Promise.all(STORES.map((s) => readStore(paths.memories, s, this.#limit(s))));
    return memoryBlock(stores);
  }

  /**
   * The session's frozen memory block: taken from the store at the session's first turn and
   * kept in its KV, so later turns send the same system prompt. Memory turned off hides it.
   */
  async sessionBlock(kv: ActorKv, profile: string | undefined): Promise<string | null> {
    if (!this.enabled()) return null;
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

import { stat } from "node:fs/promises";
import type { AgentConfig } from "../../shared/config/defaults.js";
import { DEFAULT_PROFILE, profilePaths } from "../../shared/paths.js";
import type { ConfigSource } from "../context.js";

export interface ProfileConfig {
  current(): AgentConfig;
  env(): NodeJS.ProcessEnv;
}

/**
 * Each profile's effective config (its config.yaml and .env over the home's), cached. An entry
 * is used while the profile's two files are unchanged (size and mtime) and the home's config is
 * the same snapshot; a reload of the home (SIGHUP, `daemon.reload`, `config set`) gives a new
 * snapshot, so every profile is re-read on its next use. `default` is the home itself.
 */
export class ProfileConfigCache {
  private readonly entries = new Map<string, { stamp: string; home: AgentConfig; view: ProfileConfig }>();

  constructor(
    private readonly home: string,
    private readonly source: ConfigSource,
  ) {}

  async get(name: string): Promise<ProfileConfig> {
    if (name === DEFAULT_PROFILE) return this.source;
    const paths = profilePaths(this.home, name);
    const stamp = (
      await Promise.all(
        [paths.config, paths.env].map((f) =>
          stat(f).then(
            (s) => `${s.size}:${s.mtimeMs}`,
            () => "-",
          ),
        ),
      )
    ).join("|");
    const home = this.source.current();
    const hit = this.entries.get(name);
    if (hit && hit.stamp === stamp && hit.home === home) return hit.view;
    const view = await this.source.layered(paths);
    this.entries.set(name, { stamp, home, view });
    return view;
  }

  /**
   * The view `get` last gave, without checking the files again (for synchronous callers that
   * run after a `get` of the same turn); the home's config when the profile was not read yet.
   */
  loaded(name: string): { current(): AgentConfig } {
    if (name === DEFAULT_PROFILE) return this.source;
    return this.entries.get(name)?.view ?? this.source;
  }

  forget(name: string): void {
    this.entries.delete(name);
  }

  clear(): void {
    this.entries.clear();
  }
}

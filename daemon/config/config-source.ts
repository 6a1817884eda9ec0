import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import type { AgentConfig } from "../../shared/config/defaults.js";
import { resolveConfig } from "../../shared/config/resolve.js";
import { AgentError } from "../../shared/errors.js";
import type { ConfigSource } from "../context.js";

/** Reads `config.yaml` (never writes it) and resolves the effective config. */
export class FileConfigSource implements ConfigSource {
  private config: AgentConfig;

  private constructor(private readonly file: string, initial: AgentConfig) {
    this.config = initial;
  }

  static async load(file: string): Promise<FileConfigSource> {
    return new FileConfigSource(file, await readEffectiveConfig(file));
  }

  current(): AgentConfig {
    return this.config;
  }

  async reload(): Promise<AgentConfig> {
    this.config = await readEffectiveConfig(this.file);
    return this.config;
  }
}

export async function readEffectiveConfig(file: string): Promise<AgentConfig> {
  let text = "";
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  let doc: unknown;
  try {
    doc = text.trim() ? parse(text) : {};
  } catch (error) {
    throw new AgentError("config.invalid_yaml", `${file} is not valid YAML: ${(error as Error).message}`, { file });
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== "object" || Array.isArray(doc)) throw new AgentError("config.invalid_yaml", `${file} must hold a mapping of keys`, { file });
  return resolveConfig(doc as Record<string, unknown>);
}

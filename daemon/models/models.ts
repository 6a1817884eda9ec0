import type { AgentConfig } from "../../shared/config/defaults.js";
import { toAgentError } from "../../shared/errors.js";
import type { ChatStatus } from "../../shared/protocol/chat.js";
import { OpenAIChatModel, type ChatModel } from "./openai-chat.js";
import { RateLimitBook } from "./rate-limits.js";
import { resolveProvider, type ProviderConfig, type ResolveOptions } from "./resolve.js";

/** The config a turn reads: the daemon's config source, or a kanban worker's read-only copy. */
export interface ConfigView {
  current(): AgentConfig;
  env?(): NodeJS.ProcessEnv;
}

/**
 * Provider resolution: which endpoint and model a turn uses (`--provider`, `fast`), from the
 * current config and the environment with `.env` filling its gaps. Resolved per call, so a
 * reload applies to the next turn.
 */
export class ModelResolver {
  constructor(
    private readonly config: ConfigView,
    private readonly home: string,
    /** Shared by the resolvers of every profile: quotas are per endpoint, not per profile. */
    readonly rateLimits: RateLimitBook = new RateLimitBook(),
  ) {}

  /** The environment tools and key lookup see: the daemon's, with `.env` filling the gaps (the config source keeps it current). */
  env(): NodeJS.ProcessEnv {
    return this.config.env?.() ?? process.env;
  }

  provider(options: ResolveOptions = {}): ProviderConfig {
    return resolveProvider(this.config.current(), this.env(), this.home, options);
  }

  model(options: ResolveOptions = {}): ChatModel {
    return new OpenAIChatModel(this.provider(options), this.rateLimits);
  }

  status(providerName?: string): ChatStatus {
    const config = this.config.current();
    const base = { fastModel: config.model.fast || null, maxTurns: config.agent.max_turns, statusbar: config.display.statusbar !== false };
    try {
      const p = this.provider({ provider: providerName });
      return { ...base, configured: true, provider: p.name, model: p.model, baseUrl: p.baseUrl, problem: null };
    } catch (error) {
      return { ...base, configured: false, provider: null, model: null, baseUrl: null, problem: toAgentError(error).message };
    }
  }
}

import type { Handlers } from "../../shared/protocol/index.js";
import type { Logger } from "../log/logger.js";
import type { RpcServer } from "../rpc/server.js";
import type { FileConfigSource } from "./config-source.js";
import { checkEndpoint, checkListed, checkModel, checkName, currentSetting, hasSetting, listModels, noModels, SETUP_PRESETS, testCall } from "./setup.js";
import { AgentError, toAgentError } from "../../shared/errors.js";

/**
 * The setup RPC group (`agent setup`, the TUI's set-up form). `applied` runs after a write
 * (features' reload hooks), so the next chat turn uses the new provider without a restart.
 */
export function registerSetupHandlers(
  rpc: RpcServer,
  config: FileConfigSource,
  home: string,
  paths: { env: string },
  log: Logger,
  applied: () => Promise<void>,
): void {
  const handlers: Partial<Handlers> = {
    "setup.status": () => ({
      presets: [...SETUP_PRESETS],
      current: currentSetting(config.current(), config.env(), home),
      configFile: config.file,
      envFile: paths.env,
    }),
    "setup.models": async (p, call) => {
      const endpoint = checkEndpoint(p, config.env());
      const models = await listModels(endpoint, config.env(), call.signal);
      if (!models.length) throw noModels(endpoint.baseUrl);
      return { baseUrl: endpoint.baseUrl, models };
    },
    "setup.test": async (p, call) => {
      const model = checkModel(p.model);
      const endpoint = checkEndpoint(p, config.env());
      const r = await testCall(endpoint, model, config.env(), call.signal);
      return { ok: true as const, model, ...r };
    },
    "setup.apply": async (p, call) => {
      const name = checkName(p.name);
      const model = checkModel(p.model);
      const endpoint = checkEndpoint(p, config.env(), name);
      const before = currentSetting(config.current(), config.env(), home);
      if (hasSetting(before) && !p.replace) {
        throw new AgentError(
          "setup.already_configured",
          `a provider is already set up (${before.provider ?? "?"}, model ${before.model ?? "?"} at ${before.baseUrl ?? "?"}); confirm replacing it (agent setup -y)`,
        );
      }
      let tested: { reply: string; ms: number } | null = null;
      if (p.test) {
        let models: string[] | null = null;
        try {
          models = await listModels(endpoint, config.env(), call.signal);
        } catch (error) {
          // Some servers have no /models route: the test call below is then the check.
          if (toAgentError(error).code !== "model.not_found") throw error;
        }
        if (models) checkListed(model, models, endpoint.baseUrl);
        tested = await testCall(endpoint, model, config.env(), call.signal);
      }
      const entry = { base_url: endpoint.baseUrl, model, ...(endpoint.keyEnv ? { api_key_env: endpoint.keyEnv } : {}) };
      const key = endpoint.keyGiven && endpoint.keyEnv ? { env: endpoint.keyEnv, value: endpoint.key } : null;
      const { removed } = await config.applyProvider({ name, entry, key });
      // Never the key: only where it went.
      log.info("provider set up", {
        provider: name,
        base_url: endpoint.baseUrl,
        model,
        key_env: endpoint.keyEnv,
        key_stored: Boolean(key),
        tested: Boolean(tested),
        removed,
      });
      await applied();
      return {
        provider: name,
        model,
        baseUrl: endpoint.baseUrl,
        keyEnv: endpoint.keyEnv,
        keyStored: Boolean(key),
        tested,
        configFile: config.file,
        envFile: paths.env,
        replaced: hasSetting(before) ? before : null,
        removed,
      };
    },
  };
  rpc.register(handlers);
}

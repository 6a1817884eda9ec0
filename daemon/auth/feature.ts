/**
 * Provider sign-in (docs/auth.md): the `auth.*` RPC group over the credential store of the
 * connection's profile (daemon/models/credentials.ts). Nothing runs at start.
 */
import { AgentError } from "../../shared/errors.js";
import { profilePaths } from "../../shared/paths.js";
import { AUTH_DEVICE_TOPIC, type AuthStatusEntry } from "../../shared/protocol/auth.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { credentialsFor, oauthSettings } from "../models/credentials.js";

type Entry = { api_key_env?: string; oauth_issuer?: string; oauth_client_id?: string; oauth_scopes?: string };

export function authFeature(): Feature {
  return {
    name: "auth",
    needs: { serve: ["profiles"] },
    async start(ctx: DaemonContext) {
      ctx.rpc.register(handlers(ctx));
    },
  };
}

function handlers(ctx: DaemonContext): Partial<Handlers> {
  const profileOf = async (profile: string) => {
    const view = await ctx.services.get("profiles").config(profile);
    const dir = profilePaths(ctx.home, profile).dir;
    return { providers: (view.current().providers ?? {}) as Record<string, Entry>, env: view.env(), store: credentialsFor(dir) };
  };
  return {
    "auth.login": async ({ provider }, call) => {
      const { providers, store } = await profileOf(call.profile);
      const settings = oauthSettings(providers[provider]);
      if (!settings) {
        throw new AgentError(
          "auth.no_issuer",
          providers[provider]
            ? `provider ${provider} has no OAuth issuer: set providers.${provider}.oauth_issuer and providers.${provider}.oauth_client_id in config.yaml`
            : `no provider named ${provider} in config.yaml${Object.keys(providers).length ? ` (configured: ${Object.keys(providers).join(", ")})` : ""}`,
          { provider },
        );
      }
      const status = await store.login(provider, settings, (prompt) => call.notify(AUTH_DEVICE_TOPIC, prompt), call.signal);
      ctx.log.info("auth: signed in", { provider, profile: call.profile, scopes: status.scopes.join(" ") });
      return { profile: call.profile, file: store.file, status };
    },
    "auth.status": async ({ provider }, call) => {
      const { providers, env, store } = await profileOf(call.profile);
      const names = provider ? [provider] : [...new Set([...Object.keys(providers), ...store.signedIn()])];
      const list: AuthStatusEntry[] = names.map((name) => {
        const keyEnv = providers[name]?.api_key_env ?? null;
        return store.status(name, { env: keyEnv, present: Boolean(keyEnv && env[keyEnv]) });
      });
      return { profile: call.profile, file: store.file, providers: list };
    },
    "auth.logout": async ({ provider }, call) => {
      const { store } = await profileOf(call.profile);
      const removed = await store.logout(provider);
      if (removed) ctx.log.info("auth: signed out", { provider, profile: call.profile });
      return { profile: call.profile, provider, removed };
    },
  };
}

import { AgentError } from "../../shared/errors.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { generateDescription } from "./describe.js";
import { ProfileManager } from "./service.js";

/**
 * Profiles: one daemon serves every profile of its home. This feature checks the profile each
 * connection runs as (at `initialize`), provides each profile's config to the others
 * (`services.profiles`) and serves the `profile.*` group.
 */
export function profilesFeature(): Feature {
  let manager: ProfileManager | null = null;
  return {
    name: "profiles",
    async start(ctx: DaemonContext) {
      const profiles = new ProfileManager(ctx.home, ctx.config);
      manager = profiles;
      ctx.services.provide("profiles", profiles);
      ctx.rpc.setProfileResolver((requested) => profiles.forConnection(requested));
      ctx.rpc.register(handlers(profiles));
    },
    async reload() {
      manager?.configs.clear();
    },
  };
}

function handlers(profiles: ProfileManager): Partial<Handlers> {
  return {
    "profile.list": (_p, call) => ({ profiles: profiles.list(), active: profiles.active(), current: call.profile }),
    "profile.show": ({ name }, call) => profiles.info(name ?? call.profile),
    "profile.create": (p, call) => profiles.create(p, call.profile),
    "profile.rename": ({ from, to }) => profiles.rename(from, to),
    "profile.delete.preview": ({ name }) => profiles.deletePreview(name),
    "profile.delete.apply": ({ name }) => profiles.deleteApply(name),
    "profile.use": ({ name }) => profiles.use(name),
    "profile.describe": async ({ name, text, auto, all, overwrite }, call) => {
      if ((text === undefined) === !auto) throw new AgentError("usage.invalid", "agent profile describe needs --text <text> or --auto (one of them)");
      if (all && (!auto || name !== undefined)) throw new AgentError("usage.invalid", "--all goes with --auto and no profile name");
      const names = all ? profiles.names() : [name ?? call.profile];
      return { results: await profiles.describe({ names, text, auto, overwrite }, (n) => generateDescription(profiles, n)) };
    },
    "profile.install.preview": (p) => profiles.installPreview(p),
    "profile.install.apply": (p) => profiles.installApply(p),
    "profile.update.preview": ({ name, forceConfig }) => profiles.updatePreview(name, forceConfig),
    "profile.update.apply": ({ name, forceConfig }) => profiles.updateApply(name, forceConfig),
  };
}

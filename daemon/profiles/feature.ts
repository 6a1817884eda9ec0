import { AgentError } from "../../shared/errors.js";
import { PROFILES_CHANGED_TOPIC } from "../../shared/protocol/events.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { secretsOf } from "../log/redact.js";
import { generateDescription } from "./describe.js";
import { ProfileManager } from "./profile-service.js";

/**
 * Profiles: one daemon serves every profile of its home. This feature checks the profile each
 * connection runs as (at `initialize`), provides each profile's config to the others
 * (`services.profiles`) and serves the `profile.*` group.
 */
export function profilesFeature(): Feature {
  let manager: ProfileManager | null = null;
  return {
    name: "profiles",
    provides: ["profiles"],
    needs: { serve: ["cron", "chat"] },
    async start(ctx: DaemonContext) {
      // A profile's .env holds its own API keys: each read of it tells the logger's redactor (docs/logs.md, "Secrets").
      const source = new Proxy(ctx.config, {
        get(target, prop) {
          if (prop === "layered") {
            return async (paths: { config: string; env: string }) => {
              const view = await target.layered(paths);
              ctx.logSink.redactor.setSecrets(`profile:${paths.env}`, secretsOf(view.current(), view.env()));
              return view;
            };
          }
          const value = Reflect.get(target, prop, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const profiles = new ProfileManager(ctx.home, source);
      manager = profiles;
      const stale = await profiles.removeStaleStaging();
      if (stale.length) ctx.log.info("removed staging folders an interrupted profile install left", { folders: stale });
      ctx.services.provide("profiles", profiles);
      ctx.rpc.setProfileResolver((requested) => profiles.forConnection(requested));
      ctx.rpc.register(handlers(profiles, ctx));
      // Whoever made it (CLI, TUI, the dashboard): the dashboard's event stream relays it.
      profiles.onChange(() => ctx.rpc.broadcast(PROFILES_CHANGED_TOPIC, {}));
    },
    async reload() {
      manager?.configs.clear();
    },
  };
}

/** Cron jobs added to the profile (`cron add`): they live outside its folder (a job its cron/ files declare goes with the folder). */
async function addedCronJobs(ctx: DaemonContext, name: string) {
  const jobs = await ctx.services.get("cron").jobsOf(name);
  return jobs.filter((j) => j.source === null).map((j) => ({ id: j.id, name: j.name, schedule: j.schedule }));
}

/**
 * Before a profile's folder goes: its cron jobs would go on firing as a profile that no longer
 * exists, so jobs added with `cron add` refuse the deletion (naming them) unless `force`, and the
 * profile's cron table (those jobs, the ones its files declared, their runs and the runs'
 * sessions) is removed. Its other sessions stay, with their history (README "Profiles").
 */
async function settleCron(ctx: DaemonContext, name: string, force: boolean): Promise<string[]> {
  const added = await addedCronJobs(ctx, name);
  if (added.length && !force)
    throw new AgentError(
      "profile.in_use",
      `profile ${name} has cron job(s) ${added.map((j) => `${j.id} (${j.name}, ${j.schedule})`).join(", ")}; remove them first (\`agent -p ${name} cron remove <id>\`) or delete with --force, which removes them with their runs`,
      { name, jobs: added.map((j) => j.id) },
    );
  return ctx.services.get("cron").dropProfile(name);
}

function handlers(profiles: ProfileManager, ctx: DaemonContext): Partial<Handlers> {
  return {
    "profile.list": (_p, call) => ({ profiles: profiles.list(), active: profiles.active(), current: call.profile }),
    "profile.show": ({ name }, call) => profiles.info(name ?? call.profile),
    "profile.create": (p, call) => profiles.create(p, call.profile),
    "profile.rename": ({ from, to }) => profiles.rename(from, to),
    "profile.delete.preview": async ({ name }) => {
      const preview = profiles.deletePreview(name);
      const sessions = ctx.services.get("chat").list(undefined, preview.name).length;
      return { ...preview, cronJobs: await addedCronJobs(ctx, preview.name), sessions };
    },
    "profile.delete.apply": async ({ name, force }) => {
      const { settled, ...r } = await profiles.deleteApply(name, () => settleCron(ctx, name, Boolean(force)));
      return { ...r, cronJobsRemoved: settled };
    },
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
    "profile.update.apply": ({ name, forceConfig, confirmedReach }) => profiles.updateApply(name, forceConfig, confirmedReach),
  };
}

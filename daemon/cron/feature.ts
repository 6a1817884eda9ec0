import { CRON_CHANGED_TOPIC } from "../../shared/protocol/events.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { CronService } from "./cron-service.js";

/**
 * Cron (README "Cron"): scheduled jobs per profile, each run a fresh `cron` session or a shell
 * script. Starts after the agent feature, whose chat service runs the jobs' turns.
 */
export function cronFeature(): Feature {
  let service: CronService | null = null;
  return {
    name: "cron",
    provides: ["cron"],
    needs: { start: ["actors"], serve: ["profiles", "chat", "messaging"] },
    async start(ctx: DaemonContext) {
      const cron = new CronService(ctx, ctx.services.get("actors"));
      await cron.start();
      service = cron;
      ctx.services.provide("cron", cron);
      ctx.rpc.register(handlers(cron));
      // Whoever made the change (CLI, TUI, the scheduler): the dashboard's event stream relays it.
      cron.onChange((profile) => ctx.rpc.broadcast(CRON_CHANGED_TOPIC, { profile }));
      ctx.components.set("cron", { status: "ok" });
    },
    async stop() {
      await service?.stop();
    },
  };
}

function handlers(cron: CronService): Partial<Handlers> {
  return {
    "cron.list": (_p, call) => cron.list(call.profile),
    "cron.add": async (p, call) => ({ job: await cron.add(call.profile, p) }),
    "cron.edit": async ({ id, ...fields }, call) => ({ job: await cron.edit(call.profile, id, fields) }),
    "cron.pause": async ({ id }, call) => ({ job: await cron.setEnabled(call.profile, id, false) }),
    "cron.resume": async ({ id }, call) => ({ job: await cron.setEnabled(call.profile, id, true) }),
    "cron.run": ({ id }, call) => cron.runNow(call.profile, id),
    "cron.remove": async ({ id }, call) => {
      await cron.remove(call.profile, id);
      return { removed: id };
    },
    "cron.logs": ({ id, limit }, call) => cron.logs(call.profile, id, limit),
  };
}

import { utimesSync } from "node:fs";
import { logFile } from "../../../shared/paths.js";
import type { DaemonContext, Feature } from "../../context.js";
import { actorHandlers } from "./rpc-handlers.js";
import { ActorRuntimeImpl } from "../runtime/runtime.js";
import { userActorErrorClaim } from "./uncaught-errors.js";
import { UserModules } from "./user-modules.js";
import { RUNNER_DEFAULTS } from "../runner/module-runner.js";
import { UserRunner } from "../runner/user-runner.js";
import { envNumber, envValue } from "../../../shared/config/env.js";
import { ACTOR_LIMITS } from "../instance/limits.js";

/** The runner's limits; the environment shortens them (tests) or turns the runner off (`AGENT_ACTORS_RUNNER=inline`, benchmarks). */
function runnerFromEnv(): UserRunner | null {
  if (envValue("AGENT_ACTORS_RUNNER") === "inline") return null;
  const positive = (n: number) => n > 0;
  return new UserRunner({
    ...RUNNER_DEFAULTS,
    watchdogMs: envNumber("AGENT_RUNNER_WATCHDOG_MS", RUNNER_DEFAULTS.watchdogMs, positive),
    maxMemoryMb: envNumber("AGENT_RUNNER_MAX_MEMORY_MB", RUNNER_DEFAULTS.maxMemoryMb, positive),
  });
}

/**
 * The actor runtime as a daemon feature: loads user modules from `$AGENT_HOME/actors/` (and
 * watches them), starts the runtime (waking actors that were running), exposes it as the
 * `actors` service and registers the `actors.*` RPC methods. Stop sleeps every actor.
 */
export function actorsFeature(): Feature {
  let runtime: ActorRuntimeImpl | null = null;
  let modules: UserModules | null = null;
  let runner: UserRunner | null = null;
  return {
    name: "actors",
    provides: ["actors"],
    async start(ctx: DaemonContext) {
      const log = ctx.log.component("actors");
      let mods: UserModules | null = null;
      runtime = new ActorRuntimeImpl({
        dataDir: ctx.paths.actorData,
        log,
        actorLog: ctx.log.component("actor-logs"),
        actorLogFile: logFile(ctx.home, "actor-logs"),
        bootWakesAfterReady: true,
        maxIdleAwake: envNumber("AGENT_ACTORS_MAX_IDLE_AWAKE", ACTOR_LIMITS.maxIdleAwake, (n) => Number.isInteger(n) && n >= 0),
        moduleStatuses: () => mods?.list() ?? [],
      });
      const rt = runtime;
      // A graceful stop with many awake actors takes a while: each batch put to sleep touches
      // the lock file, and `agent daemon stop` waits as long as its mtime keeps moving.
      runtime.onStopProgress = () => {
        try {
          const now = new Date();
          utimesSync(ctx.paths.lock, now, now);
        } catch {}
      };
      const report = () => {
        const failed = mods?.list().filter((m) => !m.ok) ?? [];
        ctx.components.set(
          "actors",
          failed.length
            ? { status: "degraded", detail: `${failed.length} actor module(s) failed to load: ${failed.map((m) => m.file.split("/").pop()).join(", ")}` }
            : { status: "ok", detail: `${rt.definitionNames().length} definitions` },
        );
      };
      // User modules run in worker threads (runner/), one per module file.
      runner = runnerFromEnv();
      runner?.bind(runtime.runnerHost());
      const r = runner;
      const loader = r ? { load: (file: string, url: string, ms: number) => r.load(file, url, ms), unload: (file: string) => r.unload(file) } : undefined;
      mods = modules = new UserModules(ctx.paths.userActors, runtime, log, report, undefined, loader);
      // Before any user code runs: its uncaught errors fail its actor, not the daemon.
      // Kept until the process ends: a user timer may still fire during shutdown.
      ctx.uncaught.claim(userActorErrorClaim(runtime, ctx.paths.userActors, () => mods?.list() ?? [], log));
      // A user module that fails must not keep the daemon from starting.
      await modules.start(envValue("AGENT_ACTORS_WATCH") !== "0").catch((error) => log.error("loading user actor modules failed", { error }));
      await runtime.start();
      ctx.services.provide("actors", runtime);
      ctx.rpc.register(actorHandlers(runtime, modules, ctx.paths.userActors));
      runtime.onChange((e) => {
        if (e.type === "record") ctx.rpc.broadcast("actor.record", { actorId: e.actorId, record: e.record });
        else if (e.type === "broadcast") ctx.rpc.broadcast("actor.broadcast", { actorId: e.actorId, event: e.event, args: e.args });
      });
      report();
    },
    async stop() {
      await modules?.stop();
      await runtime?.stop();
      await runner?.stop();
    },
  };
}

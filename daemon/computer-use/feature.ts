import { join } from "node:path";
import { DEFAULT_PROFILE } from "../../shared/paths.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { ComputerUseStatus } from "../../shared/protocol/computer-use.js";
import type { DaemonContext, Feature } from "../context.js";
import type { ComputerUseApi } from "./api.js";
import { DesktopDriver } from "./desktop-driver.js";
import { CUA_DRIVER_VERSION, driverPin, installDriver, missingParts, packageVersions, readDriverRecord } from "./driver-packages.js";

/**
 * computer_use's desktops (docs/computer-use.md): the daemon's private Xvfb (started on the first
 * action, stopped with the daemon) or a configured display, each with its helper; and the
 * `computer-use.*` RPC group of `agent computer-use status|install`.
 */
export function computerUseFeature(): Feature {
  const drivers = new Map<string, DesktopDriver>();
  return {
    name: "computer_use",
    provides: ["computerUse"],
    needs: { start: ["config", "profiles"] },
    async start(ctx: DaemonContext) {
      const profiles = ctx.services.get("profiles");
      const config = ctx.services.get("config");
      const log = ctx.logSink.logger("computer-use");
      const settings = (profile: string | undefined) => profiles.loadedConfig(profiles.check(profile ?? DEFAULT_PROFILE)).current().computer_use;
      const api: ComputerUseApi = {
        config: settings,
        driver(profile) {
          const s = settings(profile);
          let d = drivers.get(s.display);
          if (!d) {
            d = new DesktopDriver({ display: s.display, screen: s.screen, env: { ...process.env, ...config.env() } });
            drivers.set(s.display, d);
          }
          return d;
        },
        logAction(sessionId, line) {
          log.info(`session ${sessionId}: ${line}`, { sessionId });
        },
      };
      ctx.services.provide("computerUse", api);
      const recordFile = join(ctx.paths.data, "computer-use", "driver.json");
      const handlers: Partial<Handlers> = {
        "computer-use.status": async ({ profile, check }, call) => {
          const name = profiles.check(profile ?? call.profile);
          const s = settings(name);
          const env = { ...process.env, ...config.env() };
          const driver = drivers.get(s.display);
          const missing = await missingParts(env, !s.display);
          const recorded = await readDriverRecord(recordFile);
          const pin = driverPin();
          if (pin && pin !== CUA_DRIVER_VERSION) missing.push(`driver ${pin} (pinned by AGENT_CUA_DRIVER_VERSION; this agent ships ${CUA_DRIVER_VERSION})`);
          let accessibility: ComputerUseStatus["accessibility"] = { reachable: null };
          let running: ComputerUseStatus["running"] = null;
          const live = check && !missing.length ? api.driver(name) : driver;
          if (live && (live.running || check)) {
            try {
              const a = await live.accessible();
              accessibility = { reachable: a.reachable, ...(a.why ? { why: a.why } : {}), ...(a.apps !== undefined ? { apps: a.apps } : {}) };
            } catch (error) {
              accessibility = { reachable: false, why: error instanceof Error ? error.message : String(error) };
            }
            const d = live.desktop;
            if (d)
              running = {
                display: d.display,
                bus: d.busAddress,
                xauthority: d.private ? (d.env.XAUTHORITY ?? null) : null,
                private: d.private,
                pids: live.pids(),
              };
          } else if (check) accessibility = { reachable: false, why: "the driver is incomplete (see missing)" };
          return {
            profile: name,
            enabled: s.enabled,
            display: s.display || "private",
            running,
            driver: { version: CUA_DRIVER_VERSION, installed: recorded?.version ?? null, pinned: pin, packages: await packageVersions(env) },
            accessibility,
            missing,
          };
        },
        "computer-use.install": async ({ upgrade }) => installDriver({ upgrade: Boolean(upgrade), recordFile, env: { ...process.env, ...config.env() } }),
      };
      ctx.rpc.register(handlers);
    },
    async stop() {
      for (const d of drivers.values()) d.stop();
      drivers.clear();
    },
  };
}

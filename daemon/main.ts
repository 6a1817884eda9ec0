#!/usr/bin/env node
import { mkdirSync } from "node:fs";
import { AgentError, toAgentError } from "../shared/errors.js";
import { homePaths, resolveHome } from "../shared/paths.js";
import { APP_VERSION, PROTOCOL_VERSION } from "../shared/version.js";
import { FileConfigSource } from "./config/config-source.js";
import { registerConfigHandlers } from "./config/handlers.js";
import { registerSetupHandlers } from "./config/setup-handlers.js";
import { checkNeeds, ServiceRegistry, type DaemonContext, type Feature } from "./context.js";
import { FEATURES } from "./features.js";
import { commandJournalDir, useCommandJournal } from "./process/command-journal.js";
import { reapOrphanGroups } from "./process/process-group.js";
import { DaemonLock } from "./lock.js";
import { watchHomeRemoved } from "./home-watch.js";
import { removeStaleTempFiles } from "./store/temp-cleanup.js";
import { cleanImportLeftovers } from "./backup/import.js";
import { FileLogSink, type LogLevel } from "./log/logger.js";
import { redactStdio, secretsOf } from "./log/redact.js";
import { connectionCaps } from "./limits/open-files.js";
import { RpcServer } from "./rpc/server.js";
import { UncaughtErrors } from "./uncaught.js";
import { setDurability } from "./store/durability.js";
import { applyHeapPolicy } from "./heap-policy.js";
import { envNumber } from "../shared/config/env.js";
import { appRoot, gitCommitAt } from "../shared/install-info.js";

/** Messages to the CLI that spawned us (over the IPC channel), for the ready handshake. */
export type StartupMessage = { type: "ready"; pid: number; socket: string; gatewayUrl: string | null } | { type: "error"; code: string; message: string };

const JOURNAL_PRIORITY: Record<LogLevel, number> = { debug: 7, info: 6, warn: 4, error: 3 };

function tell(message: StartupMessage): void {
  // The CLI that started the daemon may have given up waiting and closed the channel: nobody is
  // listening then, which is no reason to stop (an unhandled send error would end the daemon).
  if (!process.send || !process.connected) return;
  process.send(message, undefined, {}, () => undefined);
  if (process.connected) process.disconnect();
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  applyHeapPolicy();
  // What code this daemon runs, read once: after `agent update` a daemon not yet restarted still says the old commit.
  const appDir = appRoot();
  const commit = gitCommitAt(appDir);
  const home = resolveHome();
  const paths = homePaths(home);
  // What a killed `agent import` left next to the home (a staging folder; the home moved aside).
  const importLeftovers = await cleanImportLeftovers(home);
  mkdirSync(home, { recursive: true, mode: 0o700 });

  // Under systemd (journald) or in the foreground, log lines also go to stderr, prefixed with
  // the syslog priority so journald files them at the right level.
  const underSystemd = Boolean(process.env.INVOCATION_ID || process.env.JOURNAL_STREAM);
  const foreground = process.argv.includes("--foreground");
  const logSink = new FileLogSink({
    dir: paths.logs,
    mirror: underSystemd || foreground ? (line, level) => process.stderr.write(`<${JOURNAL_PRIORITY[level]}>${line}\n`) : null,
  });
  const log = logSink.logger("daemon");
  redactStdio(logSink.redactor);

  const lock = new DaemonLock(paths.lock);
  lock.acquire();
  const stale = removeStaleTempFiles(home);
  if (stale.length) log.info("removed stale temp files", { files: stale.slice(0, 50), count: stale.length });
  if (importLeftovers.length) log.info("cleaned what a killed import left", { done: importLeftovers });
  // Process groups a killed daemon left running (terminal commands, cron scripts): stop what is
  // left of them (their turns and runs report them as interrupted instead of running them
  // again), then record this run's groups.
  const commands = commandJournalDir(home);
  for (const c of reapOrphanGroups(commands)) log.warn("stopping a process group left running by a daemon that was killed", c);
  useCommandJournal(commands);

  // Migrates config.yaml/.env forward if needed, then validates: a bad value stops the start
  // with an error naming the key (the CLI shows it).
  const config = await FileConfigSource.load({ config: paths.config, env: paths.env });
  logSink.configure(config.current().logs);
  logSink.redactor.setSecrets("config", secretsOf(config.current(), config.env()));
  // Before any feature opens a store: every writer asks this policy when it writes.
  setDurability(config.current().storage.durability);
  log.info("storage durability", { mode: config.current().storage.durability });
  if (config.startupMigration) {
    const m = config.startupMigration;
    log.info("config migrated", { from: m.fromVersion, to: m.toVersion, steps: m.steps, backup: m.backup, envRemoved: m.env.removed });
  }
  for (const warning of config.warnings) log.warn("config warning", { warning });
  // From here on, an error nothing caught is either claimed by the feature hosting the code that
  // threw (a user actor) or ends the daemon with a non-zero exit (daemon/uncaught.ts).
  const uncaught = new UncaughtErrors();
  uncaught.install(log, (code) => process.exit(code));
  const components = new Map<string, { status: "ok" | "degraded" | "error" | "disabled"; detail?: string }>();
  let ctx!: DaemonContext;
  const rpc = new RpcServer({
    socketPath: paths.socket,
    log: logSink.logger("rpc"),
    initializeResult: () => ({ protocolVersion: PROTOCOL_VERSION, daemonVersion: APP_VERSION, pid: process.pid, home }),
    maxConnections: connectionCaps({ gateway: 0, socket: config.current().socket.max_connections }).socket,
  });
  {
    const caps = connectionCaps({ gateway: config.current().gateway.max_connections, socket: config.current().socket.max_connections });
    log.info("connection caps", { open_file_limit: caps.nofile, gateway_max_connections: caps.gateway, socket_max_connections: caps.socket });
  }
  ctx = { home, paths, log, logSink, rpc, config, startedAt, components, services: new ServiceRegistry(), uncaught, gatewayUrl: null };

  const started: Feature[] = [];
  let shuttingDown: Promise<void> | null = null;
  const shutdown = (reason: string): Promise<void> => {
    shuttingDown ??= (async () => {
      log.info("daemon stopping", { reason });
      // Stop accepting first, then let in-flight calls finish their writes.
      // AGENT_RPC_GRACE_MS: how long in-flight calls (a streaming chat turn) may finish before
      // the connections drop (default 10 s; tests shorten it).
      const grace = envNumber("AGENT_RPC_GRACE_MS", -1, (n) => n >= 0);
      await rpc.close(grace >= 0 ? grace : undefined);
      for (const feature of [...started].reverse()) {
        try {
          await feature.stop?.();
        } catch (error) {
          log.error("feature failed to stop", { feature: feature.name, error });
        }
      }
      lock.release();
      log.info("daemon stopped");
    })();
    return shuttingDown;
  };
  // After the config changed (reload, set, migrate): apply log settings, tell every feature.
  const applied = async (): Promise<void> => {
    logSink.configure(config.current().logs);
    logSink.redactor.setSecrets("config", secretsOf(config.current(), config.env()));
    rpc.setMaxConnections(connectionCaps({ gateway: 0, socket: config.current().socket.max_connections }).socket);
    setDurability(config.current().storage.durability);
    for (const warning of config.warnings) log.warn("config warning", { warning });
    for (const feature of started) await feature.reload?.(ctx);
  };
  const reload = async (): Promise<void> => {
    await config.reload();
    await applied();
    log.info("config reloaded");
  };

  // Features reach the daemon's env view (with .env) and config entries through this service.
  ctx.services.provide("config", config);
  registerConfigHandlers(rpc, config, logSink.logger("config"), applied);
  registerSetupHandlers(rpc, config, home, paths, logSink.logger("config"), applied);
  rpc.register({
    "daemon.status": () => ({
      running: true,
      pid: process.pid,
      version: APP_VERSION,
      commit,
      app_dir: appDir,
      protocolVersion: PROTOCOL_VERSION,
      home,
      socket: paths.socket,
      startedAt,
      uptimeMs: Date.now() - startedAt,
      gateway_url: ctx.gatewayUrl,
      gateway_token_set: Boolean(config.current().gateway.token),
      connections: rpc.connectionCount,
      components: Object.fromEntries(components),
    }),
    "daemon.stop": () => {
      setImmediate(() => void shutdown("daemon.stop").then(() => process.exit(0)));
      return { ok: true, pid: process.pid };
    },
    "daemon.reload": async () => {
      await reload();
      return { ok: true };
    },
  });

  process.on("SIGTERM", () => void shutdown("SIGTERM").then(() => process.exit(0)));
  process.on("SIGINT", () => void shutdown("SIGINT").then(() => process.exit(0)));
  process.on("SIGHUP", () => {
    reload().catch((error) => log.error("config reload failed; keeping the previous config", { error }));
  });

  try {
    // Every feature's declared needs are checked against the start order before any starts.
    const features = await Promise.all(FEATURES.map((load) => load()));
    checkNeeds(features);
    for (const feature of features) {
      const began = performance.now();
      await feature.start(ctx);
      started.push(feature);
      const missing = (feature.provides ?? []).filter((s) => !ctx.services.has(s));
      if (missing.length)
        throw new AgentError("daemon.feature_order", `feature ${feature.name} did not provide ${missing.join(", ")}`, { feature: feature.name, missing });
      // Each feature's share of the start-up, for whoever wonders why a start is slow.
      log.debug("feature started", { feature: feature.name, ms: Math.round(performance.now() - began) });
      if (!components.has(feature.name)) components.set(feature.name, { status: "ok" });
    }
    rpc.assertComplete();
    await rpc.listen();
  } catch (error) {
    await shutdown("startup failed").catch(() => undefined);
    throw error;
  }

  log.info("daemon ready", { pid: process.pid, version: APP_VERSION, socket: paths.socket, gateway: ctx.gatewayUrl });
  tell({ type: "ready", pid: process.pid, socket: paths.socket, gatewayUrl: ctx.gatewayUrl });
  // Actors awake at the last stop wake after the ready report (in batches), not during start-up.
  ctx.services.get("actors").daemonReady?.();
  for (const feature of started) feature.ready?.();
  // The home removed under it: exit at once. A graceful stop would write the actors' state,
  // logs and journals back, re-creating the folders the user just removed.
  watchHomeRemoved(
    paths.lock,
    (why) => {
      // Detached, stderr goes to a relay that writes logs/daemon-stderr.log: it would re-create the home.
      if (underSystemd || foreground) process.stderr.write(`agent daemon: its home is gone (${why}); exiting\n`);
      process.exit(0);
    },
    envNumber("AGENT_HOME_CHECK_MS", 5_000, (n) => n > 0),
  );
}

main().catch((error) => {
  const e = toAgentError(error);
  const message = e instanceof AgentError && e.expected ? e.message : `${e.message}\n${(error as Error)?.stack ?? ""}`;
  process.stderr.write(`agentd: ${message}\n`);
  tell({ type: "error", code: e.code, message: e.message });
  process.exitCode = 1;
  // Leave promptly even if a half-started feature left handles open.
  setTimeout(() => process.exit(1), 200).unref();
});

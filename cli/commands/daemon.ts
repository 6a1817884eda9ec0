import type { DaemonStatus } from "../../shared/protocol/daemon.js";
import { AgentError } from "../../shared/errors.js";
import { parseCommand } from "../args.js";
import { connectDaemon, type DaemonClient } from "../../shared/client/index.js";
import { startDaemon, stopDaemonAndWait } from "../../shared/client/daemon-process.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { formatDuration, printResult } from "../output.js";

const SPEC = {
  usage: "agent daemon <start|stop|status|restart|reload|logs|install|uninstall>",
  description: "Manage the background daemon that owns this home's state.",
  flags: {
    print: { type: "boolean" },
    timeout: { type: "number" },
    port: { type: "number" },
  },
  help: `Subcommands
  start       start the daemon (detached) unless one is running
  stop        stop it gracefully (SIGTERM semantics: in-flight writes finish)
  status      show whether it runs, its pid, uptime and gateway URL (exit 3 when not running)
  restart     stop, then start
  reload      re-read config.yaml and .env (as SIGHUP); an invalid file keeps the running config
  logs        the daemon's log (same as \`agent logs --component daemon\`)
  install     write this home's systemd user unit (--print to show it instead; --port <n>
              pins its gateway port, default the home's gateway.port)
  uninstall   remove this home's systemd user unit`,
} as const;

const SUBCOMMANDS = ["status", "start", "stop", "restart", "reload", "install", "uninstall"];

export async function run(argv: string[], env: CliEnv): Promise<number> {
  // `agent daemon logs …` is `agent logs …`: hand over before parsing, the flags are its own.
  const first = argv.findIndex((a) => !a.startsWith("-"));
  if (first >= 0 && argv[first] === "logs") {
    const { run: runLogs } = await import("./logs.js");
    return runLogs([...argv.slice(0, first), ...argv.slice(first + 1)], env);
  }
  const cli = parseCommand(argv, SPEC);
  const [sub, ...extra] = cli.input;
  const json = Boolean(cli.flags.json);
  if (sub !== undefined && SUBCOMMANDS.includes(sub) && extra.length) {
    throw new AgentError("usage.invalid", `agent daemon ${sub} takes no arguments (got ${extra.join(" ")}); see \`agent daemon --help\``);
  }
  switch (sub) {
    case "status":
      return status(env, json);
    case "start":
      return start(env, json);
    case "stop":
      return stop(env, json, cli.flags.timeout);
    case "restart": {
      await stop(env, json, cli.flags.timeout, true);
      return start(env, json);
    }
    case "reload": {
      const client = await connectDaemon({ home: env.home, autostart: false });
      try {
        await client.call("daemon.reload", {});
      } finally {
        client.close();
      }
      printResult({ reloaded: true }, json, () => "config and .env reloaded");
      return EXIT.ok;
    }
    case "install":
    case "uninstall": {
      const { installUnit, uninstallUnit } = await import("./systemd.js");
      return sub === "install" ? installUnit(env, { print: Boolean(cli.flags.print), json, port: cli.flags.port }) : uninstallUnit(env, { json });
    }
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent daemon needs a subcommand: start, stop, status, restart, reload, logs, install or uninstall");
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "daemon ${sub}${extra.length ? " …" : ""}"; see \`agent daemon --help\``);
  }
}

async function status(env: CliEnv, json: boolean): Promise<number> {
  const { findUnit } = await import("./systemd.js");
  const found = findUnit(env.home);
  const unit = found ? { name: found.name, path: found.path } : null;
  const unitLine = `  systemd  ${unit ? `${unit.name} (${unit.path})` : "no unit installed (agent daemon install)"}`;
  let info: DaemonStatus;
  try {
    const client = await connectDaemon({ home: env.home, autostart: false });
    try {
      info = await client.call("daemon.status", {});
    } finally {
      client.close();
    }
  } catch (error) {
    if (error instanceof AgentError && error.code === "daemon.not_running") {
      printResult({ running: false, home: env.home, unit }, json, () => `agentd is not running (home ${env.home})\n${unitLine}`);
      return EXIT.notRunning;
    }
    throw error;
  }
  printResult({ ...info, unit }, json, (s) =>
    [
      `agentd is running (pid ${s.pid}, version ${s.version}${s.commit ? ` at ${s.commit.slice(0, 12)}` : ""}, up ${formatDuration(s.uptimeMs)})`,
      `  home     ${s.home}`,
      `  socket   ${s.socket}`,
      `  gateway  ${s.gateway_url ?? "not listening"}${s.gateway_url ? (s.gateway_token_set ? " (token set)" : " (no token)") : ""}`,
      ...Object.entries(s.components).map(([name, c]) => `  ${name.padEnd(8)} ${c.status}${c.detail ? `: ${c.detail}` : ""}`),
      unitLine,
    ].join("\n"),
  );
  return EXIT.ok;
}

async function start(env: CliEnv, json: boolean): Promise<number> {
  try {
    const client = await connectDaemon({ home: env.home, autostart: false });
    const pid = client.daemon.pid;
    client.close();
    printResult({ started: false, running: true, pid }, json, () => `agentd is already running (pid ${pid})`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof AgentError) || error.code !== "daemon.not_running") throw error;
  }
  const result = await startDaemon({ home: env.home });
  printResult({ started: !result.alreadyRunning, running: true, pid: result.pid }, json, (r) =>
    r.started ? `agentd started (pid ${r.pid})` : `agentd is already running (pid ${r.pid})`,
  );
  return EXIT.ok;
}

async function stop(env: CliEnv, json: boolean, timeoutSeconds?: number, quiet = false): Promise<number> {
  let client: DaemonClient;
  try {
    client = await connectDaemon({ home: env.home, autostart: false });
  } catch (error) {
    if (error instanceof AgentError && error.code === "daemon.not_running") {
      if (!quiet) printResult({ stopped: false, running: false }, json, () => "agentd is not running");
      return EXIT.ok;
    }
    throw error;
  }
  const pid = await stopDaemonAndWait(client, (timeoutSeconds ?? 15) * 1000);
  if (!quiet) printResult({ stopped: true, pid }, json, () => `agentd stopped (pid ${pid})`);
  return EXIT.ok;
}

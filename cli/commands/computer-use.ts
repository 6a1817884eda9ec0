import { AgentError } from "../../shared/errors.js";
import type { ComputerUseStatus } from "../../shared/protocol/computer-use.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { printingCall } from "../with-daemon.js";

/** `agent computer-use`: the desktop driver behind the computer_use tool. Each subcommand is one call to the daemon. */
const SPEC = {
  usage: "agent computer-use <status|install> [--upgrade] [--check] [--profile <name>]",
  description: "The computer_use tool's desktop driver: what is installed, which display, whether accessibility answers.",
  flags: {
    upgrade: { type: "boolean" },
    check: { type: "boolean" },
    profile: { type: "string" },
  },
  help: `Subcommands
  status     the display (computer_use.display, or the private Xvfb), the driver version, whether the
             accessibility bus is reachable, and what is missing
  install    install the driver's Debian packages (apt-get when the daemon runs as root; otherwise it
             prints the exact command) and record the driver version

Options
  --upgrade          install: upgrade the packages to the newest available (apt-get update first)
  --check            status: start the display if needed and ask the accessibility bus
  --profile <name>   status: whose computer_use settings (default: the active profile)

AGENT_CUA_DRIVER_VERSION pins the driver version an install must match.

Examples
  $ agent computer-use status --check
  $ agent computer-use install`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const call = printingCall(env, json);
  if (args.length) throw new AgentError("usage.invalid", `agent computer-use ${sub} takes no arguments`);
  switch (sub) {
    case "status":
      return call(
        (c) => c.call("computer-use.status", { ...(cli.flags.profile ? { profile: cli.flags.profile } : {}), ...(cli.flags.check ? { check: true } : {}) }),
        formatStatus,
      );
    case "install":
      return call(
        (c) => c.call("computer-use.install", cli.flags.upgrade ? { upgrade: true } : {}),
        (r) =>
          r.outcome === "ran"
            ? [`installed driver ${r.version}: ${r.command}`, ...Object.entries(r.packages).map(([p, v]) => `  ${p} ${v ?? "(missing)"}`)].join("\n")
            : [
                "not run: the daemon is not root (or has no apt-get). Run:",
                `  ${r.command}`,
                Object.values(r.packages).every((v) => v !== null)
                  ? `every package is present; recorded driver ${r.version}`
                  : `then: agent computer-use install`,
              ].join("\n"),
      );
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent computer-use needs a subcommand: status or install");
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "computer-use ${sub}"; see \`agent computer-use --help\``);
  }
}

function formatStatus(s: ComputerUseStatus): string {
  const a = s.accessibility;
  return [
    `computer_use ${s.enabled ? "enabled" : "disabled"} for profile ${s.profile} (computer_use.enabled)`,
    `display: ${s.display === "private" ? "private Xvfb" : s.display}${s.running ? ` (running: ${s.running.display}${s.running.bus ? `, bus ${s.running.bus}` : ""}${s.running.xauthority ? `, XAUTHORITY ${s.running.xauthority}` : ""})` : s.display === "private" ? " (starts on first use)" : ""}`,
    `driver: ${s.driver.version}; installed: ${s.driver.installed ?? "not recorded (agent computer-use install)"}${s.driver.pinned ? `; pinned: ${s.driver.pinned}` : ""}`,
    `accessibility: ${a.reachable === null ? "not checked (--check)" : a.reachable ? `reachable (${a.apps ?? 0} app(s))` : `unreachable${a.why ? `: ${a.why}` : ""}`}`,
    s.missing.length ? `missing: ${s.missing.join("; ")}` : "missing: nothing",
  ].join("\n");
}

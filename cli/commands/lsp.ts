import { resolve } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { LspInstallResult } from "../../shared/protocol/lsp.js";
import { parseCommand } from "../args.js";
import type { DaemonClient } from "../../shared/client/index.js";
import type { CliEnv } from "../command.js";
import { printFromDaemon } from "../with-daemon.js";
import { table } from "../output.js";

/** `agent lsp`: the daemon's language servers. Every subcommand is one call to the daemon. */
const SPEC = {
  usage: "agent lsp <status|list|install|install-all|restart|which>",
  description: "Inspect, install and restart the language servers behind write/patch diagnostics.",
  flags: {},
  help: `Subcommands
  status            running servers (per git worktree), their state, and broken marks
  list              known servers, the file types they serve and whether they are installed
  install <id>      install one server into $AGENT_HOME/lsp (npm)
  install-all       install every known server
  restart [id]      stop the servers (all, or one) and clear their broken marks
  which <file>      which server would check a file, and why (or why only the syntax check)

Examples
  $ agent lsp which src/main.ts
  $ agent lsp install pyright
  $ agent lsp restart typescript`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const call = <T>(work: (client: DaemonClient) => Promise<T>, text: (r: T) => string) => printFromDaemon(env, json, work, text);
  switch (sub) {
    case "status":
      expectArgs(sub, args, 0, 0);
      return call(
        (c) => c.call("lsp.status", {}),
        (r) =>
          [
            `lsp ${r.enabled ? "enabled" : "disabled"}; install ${r.install_strategy}; wait ${r.wait_mode} up to ${r.wait_timeout}s`,
            r.servers.length
              ? table(
                  ["SERVER", "STATE", "PID", "DOCS", "WORKSPACE"],
                  r.servers.map((s) => [s.id, s.state, String(s.pid ?? "-"), String(s.open_documents), s.root]),
                )
              : "no server running",
            ...r.broken.map((b) => `broken: ${b.id} in ${b.root} since ${b.since}: ${b.reason} (agent lsp restart ${b.id})`),
            ...r.installing.map((p) => `installing: ${p}`),
          ].join("\n"),
      );
    case "list":
      expectArgs(sub, args, 0, 0);
      return call(
        (c) => c.call("lsp.list", {}),
        ({ servers }) =>
          table(
            ["ID", "INSTALLED", "FILES", "COMMAND"],
            servers.map((s) => [
              s.id,
              s.disabled ? "disabled" : s.installed ? `yes (${s.source})` : "no",
              s.extensions.join(" "),
              s.command?.join(" ") ?? s.packages.join(" "),
            ]),
          ),
      );
    case "install":
      expectArgs(sub, args, 1, 1, "agent lsp install <id>");
      return call((c) => c.call("lsp.install", { id: args[0]! }), formatInstall);
    case "install-all":
      expectArgs(sub, args, 0, 0);
      return call((c) => c.call("lsp.install_all", {}), formatInstall);
    case "restart":
      expectArgs(sub, args, 0, 1, "agent lsp restart [id]");
      return call(
        (c) => c.call("lsp.restart", args[0] ? { id: args[0] } : {}),
        (r) =>
          [`stopped ${r.stopped.length} server${r.stopped.length === 1 ? "" : "s"}`, ...r.cleared.map((b) => `cleared broken mark: ${b.id} in ${b.root}`)].join(
            "\n",
          ),
      );
    case "which":
      expectArgs(sub, args, 1, 1, "agent lsp which <file>");
      return call(
        (c) => c.call("lsp.which", { path: resolve(args[0]!) }),
        (r) => `${r.path}: ${r.tier === "lsp" ? r.server : `syntax check only${r.server ? ` (${r.server} would serve it)` : ""}`}\n${r.reason}`,
      );
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent lsp needs a subcommand: status, list, install, install-all, restart or which");
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "lsp ${sub}"; see \`agent lsp --help\``);
  }
}

function formatInstall(r: LspInstallResult): string {
  return `installed ${r.packages.join(" ")} into ${r.dir} (${(r.ms / 1000).toFixed(1)}s)`;
}

function expectArgs(sub: string, args: string[], min: number, max: number, usage = `agent lsp ${sub}`): void {
  if (args.length < min || args.length > max) throw new AgentError("usage.invalid", `wrong number of arguments; usage: ${usage}`);
}

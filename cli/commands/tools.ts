import { connectDaemon } from "../../shared/client/index.js";
import { AgentError } from "../../shared/errors.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult, table } from "../output.js";

const SPEC = {
  usage: "agent tools list [--profile <name>] [--json]",
  description: "The agent's tools: which a turn of the profile is offered, and what an unoffered one needs.",
  flags: {
    profile: { type: "string" },
  },
  help: `Subcommands
  list    every tool with its toolset; an unoffered one says why (a missing key, memory off, ...)

Options
  --profile <name>   whose config and .env decide (default: the active profile)

MCP servers' tools: agent mcp tools.`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...rest] = cli.input;
  if (sub === undefined) throw new AgentError("usage.missing_subcommand", "agent tools needs a subcommand: list");
  if (sub !== "list") throw new AgentError("usage.unknown_command", `unknown subcommand "tools ${sub}"; see \`agent tools --help\``);
  if (rest.length) throw new AgentError("usage.invalid", "agent tools list takes no arguments");
  const client = await connectDaemon({ home: env.home, autostart: true });
  try {
    const r = await client.call("chat.tools.list", cli.flags.profile ? { profile: cli.flags.profile } : {});
    printResult(r, Boolean(cli.flags.json), (x) =>
      table(
        ["TOOL", "TOOLSET", "OFFERED"],
        x.tools.map((t) => [t.name, t.toolset, t.available ? "yes" : `no: needs ${t.reason}`]),
      ),
    );
    return EXIT.ok;
  } finally {
    client.close();
  }
}

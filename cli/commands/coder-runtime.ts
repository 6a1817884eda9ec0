import { connectDaemon } from "../../shared/client/index.js";
import { AgentError } from "../../shared/errors.js";
import { coderRuntimeText } from "../../shared/slash-commands.js";
import { terminalText } from "../../shared/terminal-text.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";

const SPEC = {
  usage: "agent coder-runtime <status|install>",
  description: "The coder runtime: turns handed to a codex app-server (docs/coder-runtime.md).",
  flags: {},
  help: `Subcommands
  status     the codex binary found (coder_runtime.command, PATH, then $AGENT_HOME/tools), its version, and whether config selects the runtime
  install    npm install the pinned @openai/codex into $AGENT_HOME/tools

In a chat, /coder-runtime on hands the session's turns to it; /coder-runtime auto switches back.`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  if (sub === undefined) throw new AgentError("usage.missing_subcommand", "agent coder-runtime needs a subcommand: status or install");
  if (sub !== "status" && sub !== "install")
    throw new AgentError("usage.unknown_command", `unknown subcommand "coder-runtime ${sub}"; see \`agent coder-runtime --help\``);
  if (args.length) throw new AgentError("usage.invalid", `agent coder-runtime ${sub} takes no arguments`);
  const client = await connectDaemon({ home: env.home, autostart: true });
  try {
    if (sub === "status") {
      const r = await client.call("coder.runtime", {});
      printResult(r, json, (x) => `${coderRuntimeText(x)}\n  CODEX_HOME: ${x.codexHome}`);
    } else {
      const r = await client.call("coder.install", {});
      printResult(r, json, (x) => `installed codex ${x.version ?? "(version unknown)"} at ${terminalText(x.path)}`);
    }
    return EXIT.ok;
  } finally {
    client.close();
  }
}
